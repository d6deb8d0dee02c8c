package dev.oncegate.testing;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.UUID;
import java.util.function.Consumer;

import dev.oncegate.Gate;
import org.apache.curator.framework.CuratorFramework;
import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.AfterEachCallback;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.BeforeEachCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * A real ZooKeeper for a JUnit 5 test class: a standalone server or a 3-server ensemble on
 * 127.0.0.1, started once per class, with a fresh initialised namespace for every test and
 * every client and gate the test opened closed after it.
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
 *         ...
 *     }
 * }
 * }</pre>
 *
 * <p>Register it on a {@code static} field ({@link org.junit.jupiter.api.extension.RegisterExtension}).
 * Its accessors are thread-safe (worker threads of a test may open clients); the lifecycle
 * callbacks run on JUnit's thread.
 */
public final class ZooKeeperExtension implements BeforeAllCallback, AfterAllCallback, BeforeEachCallback, AfterEachCallback {

    /** Session timeout of the clients and gates this extension opens, unless told otherwise: {@link Timing#SESSION}. */
    public static final Duration SESSION_TIMEOUT = Timing.SESSION;

    private enum Kind { STANDALONE, AMBIGUOUS_WRITES, ENSEMBLE }

    private final Kind kind;
    private volatile EmbeddedZooKeeper server;
    private volatile Ensemble ensemble;
    private volatile String namespace;
    private final List<AutoCloseable> opened = Collections.synchronizedList(new ArrayList<>());

    private ZooKeeperExtension(Kind kind) {
        this.kind = kind;
    }

    /** One standalone server for the class. */
    public static ZooKeeperExtension standalone() {
        return new ZooKeeperExtension(Kind.STANDALONE);
    }

    /**
     * One standalone server whose connection factory can apply a write and then drop the
     * connection before the reply ({@link AmbiguousWriteCnxnFactory}). One such server per JVM at a time.
     */
    public static ZooKeeperExtension standaloneWithAmbiguousWrites() {
        return new ZooKeeperExtension(Kind.AMBIGUOUS_WRITES);
    }

    /** A 3-server ensemble for the class; see {@link #ensemble()} for leader kills. */
    public static ZooKeeperExtension ensemble3() {
        return new ZooKeeperExtension(Kind.ENSEMBLE);
    }

    @Override
    public void beforeAll(ExtensionContext context) throws Exception {
        switch (kind) {
            case STANDALONE -> server = EmbeddedZooKeeper.start();
            case AMBIGUOUS_WRITES -> server = EmbeddedZooKeeper.startWithAmbiguousWrites();
            case ENSEMBLE -> ensemble = Ensemble.start(Timing.scaled(Duration.ofSeconds(60)));
        }
    }

    @Override
    public void beforeEach(ExtensionContext context) {
        if (server == null && ensemble == null) {
            throw new IllegalStateException("ZooKeeperExtension must be registered on a static field");
        }
        if (kind == Kind.ENSEMBLE) {
            ensemble.restartKilled();
        }
        namespace = "/test-" + UUID.randomUUID();
        try (CuratorFramework client = EmbeddedZooKeeper.newClient(connectString(), SESSION_TIMEOUT)) {
            Gate.initialize(client, namespace);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while initialising " + namespace, e);
        }
    }

    @Override
    public void afterEach(ExtensionContext context) {
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
                if (failure == null) {
                    failure = new IllegalStateException("could not close " + c + ": " + e, e);
                }
            }
        }
        if (server != null && kind == Kind.AMBIGUOUS_WRITES) {
            AmbiguousWriteCnxnFactory.reset();
        }
        if (failure != null) {
            throw failure;
        }
    }

    @Override
    public void afterAll(ExtensionContext context) {
        if (server != null) {
            server.close();
            server = null;
        }
        if (ensemble != null) {
            ensemble.close();
            ensemble = null;
        }
    }

    /** The connect string of the server or ensemble. */
    public String connectString() {
        return kind == Kind.ENSEMBLE ? ensemble.connectString() : server.connectString();
    }

    /** This test's namespace: fresh and initialised (genesis written) before each test. */
    public String namespace() {
        return namespace;
    }

    /** The standalone server (stop, restart, outages). */
    public EmbeddedZooKeeper server() {
        if (server == null) {
            throw new IllegalStateException("server(): this extension runs an ensemble; use ensemble()");
        }
        return server;
    }

    /** The ensemble (leader kills, whole-ensemble outages). */
    public Ensemble ensemble() {
        if (ensemble == null) {
            throw new IllegalStateException("ensemble(): this extension runs a standalone server; use server()");
        }
        return ensemble;
    }

    /** A started client with {@link #SESSION_TIMEOUT}, closed after the test. */
    public CuratorFramework newClient() {
        return newClient(SESSION_TIMEOUT);
    }

    /** A started client with the given session timeout, closed after the test. */
    public CuratorFramework newClient(Duration sessionTimeout) {
        CuratorFramework client = EmbeddedZooKeeper.newClient(connectString(), sessionTimeout);
        opened.add(client);
        return client;
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
        Worker worker = Worker.start(connectString(), namespace, taskId, SESSION_TIMEOUT, configure);
        opened.add(worker);
        return worker;
    }

    /** The gate of a {@link #newWorker(String) new worker}. */
    public Gate newGate(String taskId) {
        return newWorker(taskId).gate();
    }

    /** The gate of a {@link #newWorker(String, Consumer) new worker} with extra builder settings. */
    public Gate newGate(String taskId, Consumer<Gate.Builder> configure) {
        return newWorker(taskId, configure).gate();
    }
}
