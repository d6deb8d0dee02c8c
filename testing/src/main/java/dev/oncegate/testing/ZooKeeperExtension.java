package dev.oncegate.testing;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Objects;
import java.util.UUID;
import java.util.concurrent.ExecutorService;
import java.util.function.Consumer;

import dev.oncegate.Destination;
import dev.oncegate.EffectKey;
import dev.oncegate.Gate;
import org.apache.curator.framework.CuratorFramework;
import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.AfterEachCallback;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.BeforeEachCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * A real ZooKeeper for a JUnit 5 test class: a standalone server or a 3-server ensemble on
 * 127.0.0.1, started once per class (or once per test: {@link #perTest()}), and for every test
 * a fresh initialised namespace, a fresh {@link #key() effect key} and a fresh
 * {@link #provider() recording provider}; every client, worker, gate, pool and other resource
 * the test opened through it is closed after the test.
 *
 * <pre>{@code
 * class ReportWorkerTest {
 *     @RegisterExtension
 *     static final ZooKeeperExtension zk = ZooKeeperExtension.standalone();
 *
 *     @Test
 *     void twoSiblings_deliverOnce() throws Exception {
 *         Gate a = zk.newGate("sibling-a");
 *         Gate b = zk.newGate("sibling-b");
 *         List<Race.Entry> entries = Race.of(a, b).enter(zk.key(), Timing.WAIT, zk.provider().verified());
 *         assertThat(zk.provider().deliveries()).isEqualTo(1);
 *     }
 * }
 * }</pre>
 *
 * <p>Register it on a {@code static} field ({@link org.junit.jupiter.api.extension.RegisterExtension}).
 * Sessions are {@link Timing#SESSION} unless a method takes another timeout. Instances are
 * immutable in their configuration; the accessors are thread-safe (worker threads of a test may
 * open clients); the lifecycle callbacks run on JUnit's thread.
 */
public final class ZooKeeperExtension implements BeforeAllCallback, AfterAllCallback, BeforeEachCallback, AfterEachCallback {

    private enum Kind { STANDALONE, AMBIGUOUS_WRITES, ENSEMBLE }

    /** How long an ensemble may take to elect its first leader. */
    private static final Duration ENSEMBLE_START = Timing.scaled(Duration.ofSeconds(60));

    private final Kind kind;
    private final boolean perTest;
    private volatile EmbeddedZooKeeper server;
    private volatile Ensemble ensemble;
    private volatile String namespace;
    private volatile EffectKey key;
    private volatile RecordingProvider provider;
    private final List<AutoCloseable> opened = Collections.synchronizedList(new ArrayList<>());
    private final List<ExecutorService> pools = Collections.synchronizedList(new ArrayList<>());

    private ZooKeeperExtension(Kind kind, boolean perTest) {
        this.kind = kind;
        this.perTest = perTest;
    }

    /** One standalone server for the class. */
    public static ZooKeeperExtension standalone() {
        return new ZooKeeperExtension(Kind.STANDALONE, false);
    }

    /**
     * One standalone server whose connection factory can apply a write and then drop the
     * connection before the reply ({@link AmbiguousWriteCnxnFactory}). One such server per JVM at
     * a time. A fault the test armed and nothing hit is switched off after each test, before the
     * test's workers are closed.
     */
    public static ZooKeeperExtension standaloneWithAmbiguousWrites() {
        return new ZooKeeperExtension(Kind.AMBIGUOUS_WRITES, false);
    }

    /** A 3-server ensemble for the class; see {@link #ensemble()} for leader kills. */
    public static ZooKeeperExtension ensemble3() {
        return new ZooKeeperExtension(Kind.ENSEMBLE, false);
    }

    /**
     * The same kind of server, but a new one for every test, stopped and removed after it: for
     * tests that stop, restore or break the server ({@link EmbeddedZooKeeper#stop()}, a data
     * directory put back from a backup) or kill more ensemble members than a restart can heal.
     */
    public ZooKeeperExtension perTest() {
        return new ZooKeeperExtension(kind, true);
    }

    @Override
    public void beforeAll(ExtensionContext context) throws InterruptedException {
        if (!perTest) {
            startServer();
        }
    }

    @Override
    public void beforeEach(ExtensionContext context) throws InterruptedException {
        if (perTest) {
            startServer();
        } else if (server == null && ensemble == null) {
            throw new IllegalStateException("ZooKeeperExtension must be registered on a static field");
        } else if (kind == Kind.ENSEMBLE) {
            ensemble.restartKilled();
        }
        namespace = "/test-" + UUID.randomUUID();
        try (CuratorFramework client = EmbeddedZooKeeper.newClient(connectString(), Timing.SESSION)) {
            Gate.initialize(client, namespace);
        }
        key = newKey();
        provider = new RecordingProvider();
    }

    @Override
    public void afterEach(ExtensionContext context) {
        if (server != null && kind == Kind.AMBIGUOUS_WRITES) {
            AmbiguousWriteCnxnFactory.reset(); // a leftover fault must not hit the closing writes
        }
        RuntimeException failure = null;
        try {
            shutDownPools();
            failure = closeOpened();
        } finally {
            if (perTest) {
                stopServer();
            }
        }
        if (failure != null) {
            throw failure;
        }
    }

    @Override
    public void afterAll(ExtensionContext context) {
        stopServer();
    }

    private void startServer() throws InterruptedException {
        switch (kind) {
            case STANDALONE -> server = EmbeddedZooKeeper.start();
            case AMBIGUOUS_WRITES -> server = EmbeddedZooKeeper.startWithAmbiguousWrites();
            case ENSEMBLE -> ensemble = Ensemble.start(ENSEMBLE_START);
        }
    }

    private void stopServer() {
        if (server != null) {
            server.close();
            server = null;
        }
        if (ensemble != null) {
            ensemble.close();
            ensemble = null;
        }
    }

    /** Interrupts the test's pools first, so that no thread still uses a gate or client being closed. */
    private void shutDownPools() {
        List<ExecutorService> toStop;
        synchronized (pools) {
            toStop = new ArrayList<>(pools);
            pools.clear();
        }
        Pools.stop(toStop);
    }

    private RuntimeException closeOpened() {
        List<AutoCloseable> toClose;
        synchronized (opened) {
            toClose = new ArrayList<>(opened);
            opened.clear();
        }
        Collections.reverse(toClose); // gates before their clients
        RuntimeException failure = null;
        for (AutoCloseable c : toClose) {
            try {
                c.close();
            } catch (Exception e) {
                if (e instanceof InterruptedException) {
                    Thread.currentThread().interrupt();
                }
                if (failure == null) {
                    failure = new IllegalStateException("could not close " + c + ": " + e, e);
                }
            }
        }
        return failure;
    }

    /** {@code value} while it runs; otherwise a failure saying why (the other kind, or outside a test). */
    private <T> T running(T value, boolean asEnsemble) {
        if (value != null) {
            return value;
        }
        String accessor = asEnsemble ? "ensemble()" : "server()";
        if ((kind == Kind.ENSEMBLE) != asEnsemble) {
            throw new IllegalStateException(accessor + ": this extension runs "
                    + (asEnsemble ? "a standalone server; use server()" : "an ensemble; use ensemble()"));
        }
        throw new IllegalStateException(accessor + ": nothing runs outside a test");
    }

    /** Whether this extension runs a three-server ensemble ({@link #ensemble()}) rather than one server ({@link #server()}). */
    public boolean isEnsemble() {
        return kind == Kind.ENSEMBLE;
    }

    /** The connect string of the server or ensemble. */
    public String connectString() {
        return kind == Kind.ENSEMBLE ? ensemble().connectString() : server().connectString();
    }

    /** This test's namespace: fresh and initialised (genesis written) before each test. */
    public String namespace() {
        return namespace;
    }

    /** This test's effect key: fresh before each test, so nobody entered it before. */
    public EffectKey key() {
        return key;
    }

    /** The znode path of {@link #key()} in {@link #namespace()}. */
    public String keyPath() {
        return key.path(namespace);
    }

    /** This test's recording provider: fresh (an empty ledger) before each test. */
    public RecordingProvider provider() {
        return provider;
    }

    /**
     * Another effect key nobody entered before (a unique file to a unique Slack channel), for
     * tests that need more than {@link #key()}.
     */
    public EffectKey newKey() {
        return EffectKey.of(Destination.stable("slack", "C-" + UUID.randomUUID()),
                ("report " + UUID.randomUUID()).getBytes(StandardCharsets.UTF_8));
    }

    /** The standalone server (stop, restart, outages). */
    public EmbeddedZooKeeper server() {
        return running(server, false);
    }

    /** The ensemble (leader kills, whole-ensemble outages). */
    public Ensemble ensemble() {
        return running(ensemble, true);
    }

    /** A started client with {@link Timing#SESSION}, closed after the test. */
    public CuratorFramework newClient() {
        return newClient(Timing.SESSION);
    }

    /** A started client with the given session timeout, closed after the test. */
    public CuratorFramework newClient(Duration sessionTimeout) {
        return track(EmbeddedZooKeeper.newClient(connectString(), sessionTimeout));
    }

    /**
     * A worker: its own client (its own session, a worker-process stand-in) and a gate in this
     * test's namespace; closed after the test. Use {@link Worker#client()} to inject faults on it.
     */
    public Worker newWorker(String taskId) {
        return newWorker(taskId, builder -> { });
    }

    /** {@link #newWorker(String)} with extra builder settings (lease TTL, meter registry, clock…). */
    public Worker newWorker(String taskId, Consumer<Gate.Builder> configure) {
        return newWorker(taskId, Timing.SESSION, configure);
    }

    /** {@link #newWorker(String, Consumer)} on a session with the given timeout. */
    public Worker newWorker(String taskId, Duration sessionTimeout, Consumer<Gate.Builder> configure) {
        return track(Worker.start(connectString(), namespace, taskId, sessionTimeout, configure));
    }

    /** The gate of a {@link #newWorker(String) new worker}. */
    public Gate newGate(String taskId) {
        return newWorker(taskId).gate();
    }

    /** The gate of a {@link #newWorker(String, Consumer) new worker} with extra builder settings. */
    public Gate newGate(String taskId, Consumer<Gate.Builder> configure) {
        return newWorker(taskId, configure).gate();
    }

    /**
     * A fixed pool of {@code threads} threads for work a test runs beside its own thread (an
     * {@code enter} that waits, say). After the test it is shut down — its threads interrupted —
     * and awaited, before anything else the test opened is closed.
     */
    public ExecutorService newPool(int threads) {
        if (threads < 1) {
            throw new IllegalArgumentException("threads: must be at least 1, got " + threads);
        }
        ExecutorService pool = Pools.daemon(threads, "zk-test-pool");
        pools.add(pool);
        return pool;
    }

    /**
     * Closes {@code closeable} after the test (an attempt, a gate built by hand, a
     * {@link CrossingInFlight}…), in reverse order of tracking, after the pools stopped. A close
     * that fails fails the test.
     *
     * @return {@code closeable}
     */
    public <T extends AutoCloseable> T track(T closeable) {
        opened.add(Objects.requireNonNull(closeable, "closeable"));
        return closeable;
    }
}
