package dev.oncegate.testing;

import java.time.Duration;
import java.util.Objects;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Consumer;

import dev.oncegate.Gate;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.state.ConnectionState;

/**
 * A stand-in for one worker process: its own Curator client (so its own ZooKeeper session)
 * and its own gate over it. Closing the worker closes the gate, then the client. A worker
 * whose client is closed without closing its attempts is a crashed process: its session
 * ends, its latch node vanishes, its lease stays behind.
 *
 * <p>Thread-safe as far as its parts are: the gate and the client are, {@link #close()} is
 * idempotent, and {@link #connectionInterrupted()} is an atomic flag.
 */
public final class Worker implements AutoCloseable {

    private final CuratorFramework client;
    private final Gate gate;
    private final String taskId;
    private final AtomicBoolean interrupted;

    private Worker(CuratorFramework client, Gate gate, String taskId, AtomicBoolean interrupted) {
        this.client = client;
        this.gate = gate;
        this.taskId = taskId;
        this.interrupted = interrupted;
    }

    /**
     * Starts a worker.
     *
     * @param connectString  the server or ensemble
     * @param namespace      the gate's namespace
     * @param taskId         the worker's task id
     * @param sessionTimeout its session timeout
     * @param configure      further builder settings (lease TTL, meter registry, …); the namespace
     *                       and task id are already set
     */
    public static Worker start(String connectString, String namespace, String taskId, Duration sessionTimeout,
                               Consumer<Gate.Builder> configure) {
        Objects.requireNonNull(configure, "configure");
        CuratorFramework client = EmbeddedZooKeeper.newClient(connectString, sessionTimeout);
        AtomicBoolean interrupted = new AtomicBoolean();
        client.getConnectionStateListenable().addListener((c, state) -> {
            if (state == ConnectionState.SUSPENDED || state == ConnectionState.LOST) {
                interrupted.set(true);
            }
        });
        try {
            Gate.Builder builder = Gate.builder(client).namespace(namespace).taskId(taskId).host("test-host");
            configure.accept(builder);
            return new Worker(client, builder.build(), taskId, interrupted);
        } catch (RuntimeException | Error e) {
            client.close();
            throw e;
        }
    }

    /** {@link #start(String, String, String, Duration, Consumer)} with the default builder settings. */
    public static Worker start(String connectString, String namespace, String taskId, Duration sessionTimeout) {
        return start(connectString, namespace, taskId, sessionTimeout, b -> { });
    }

    public CuratorFramework client() {
        return client;
    }

    public Gate gate() {
        return gate;
    }

    public String taskId() {
        return taskId;
    }

    /**
     * Whether this worker's connection was suspended or its session lost since it started: a test
     * whose premise is an unbroken connection (a request held at the server, say: see
     * {@link AmbiguousWriteCnxnFactory.Hold}) checks it, so that it fails saying so instead of
     * asserting on what a retry on a new connection did.
     */
    public boolean connectionInterrupted() {
        return interrupted.get();
    }

    /** Kills the worker's connection as a crashed process would: closes the client only. */
    public void crash() {
        client.close();
    }

    @Override
    public void close() {
        gate.close();
        client.close();
    }
}
