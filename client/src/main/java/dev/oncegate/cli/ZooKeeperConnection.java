package dev.oncegate.cli;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Consumer;

import dev.oncegate.Gate;
import dev.oncegate.Genesis;
import dev.oncegate.OncegateAcl;
import dev.oncegate.OncegateException;
import dev.oncegate.Operator;
import dev.oncegate.ZxidMarks;
import org.apache.curator.framework.AuthInfo;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.retry.ExponentialBackoffRetry;
import org.apache.zookeeper.ZooKeeper;
import org.apache.zookeeper.client.ZKClientConfig;

/**
 * The CLI's one way to ZooKeeper: a Curator client with Curator's default (standard)
 * connection-state error policy, a 30 s session, a bounded retry, a connection timeout no longer
 * than {@code --connect-timeout}, the {@code --zk-client-config} (TLS, say), the {@code --auth}
 * identity, and an ACL provider that gives the znodes Curator creates for us (LeaderLatch's
 * election nodes) their role ACL; and the gates and operators the commands work with on it. The
 * command that opens it closes it.
 *
 * <p>Thread-safe as Curator is.
 */
final class ZooKeeperConnection implements AutoCloseable {

    /** Requested session timeout; the server may negotiate it down (TestingServer caps it at 20 s). */
    static final Duration SESSION_TIMEOUT = Duration.ofSeconds(30);

    /**
     * What a connection needs, checked before anything connects.
     *
     * @param connect        the connect string
     * @param connectTimeout how long to wait for ZooKeeper
     * @param clientConfig   ZooKeeper client properties, or null for its defaults
     * @param credentials    the digest identity, or null for none
     * @param also           a second identity to authenticate as too, or null
     * @param host           this machine's name in the records the gates and operators write, or
     *                       null for the library's default (the local host name, resolved)
     */
    record Settings(String connect, Duration connectTimeout, ZKClientConfig clientConfig, Credentials credentials,
                    Credentials also, String host) {

        Settings(String connect, Duration connectTimeout, ZKClientConfig clientConfig, Credentials credentials) {
            this(connect, connectTimeout, clientConfig, credentials, null, null);
        }

        /** Plain: no client configuration and no identity (the embedded server's own use). */
        static Settings plain(String connect, Duration connectTimeout) {
            return new Settings(connect, connectTimeout, null, null);
        }

        /** These settings, authenticated as {@code identity} too (a rotation: the old admin and the new). */
        Settings alsoAs(Credentials identity) {
            return credentials == null ? new Settings(connect, connectTimeout, clientConfig, identity, null, host)
                    : new Settings(connect, connectTimeout, clientConfig, credentials, identity, host);
        }
    }

    private final CuratorFramework client;
    private final Settings settings;
    private final String namespace;
    private final ZxidMarks marks;
    private final AtomicReference<Genesis.Roles> roles;

    /** When --connect-timeout, counted from the start of the client, runs out: every wait for the connection ends there. */
    private final long deadlineNanos;

    private ZooKeeperConnection(CuratorFramework client, Settings settings, String namespace, ZxidMarks marks,
                                AtomicReference<Genesis.Roles> roles, long deadlineNanos) {
        this.client = client;
        this.settings = settings;
        this.namespace = namespace;
        this.marks = marks;
        this.roles = roles;
        this.deadlineNanos = deadlineNanos;
    }

    /**
     * Builds and starts a client for {@code namespace} whose gates and operators feed and check
     * {@code marks}; does not wait for the connection (see {@link #awaitConnected}).
     * Commands get theirs from {@link ZooKeeperOptions}.
     */
    static ZooKeeperConnection open(Settings settings, String namespace, ZxidMarks marks) {
        return open(settings, namespace, marks, SESSION_TIMEOUT);
    }

    /** {@link #open(Settings, String, ZxidMarks)} asking for a session of {@code sessionTimeout} instead of {@link #SESSION_TIMEOUT}. */
    static ZooKeeperConnection open(Settings settings, String namespace, ZxidMarks marks, Duration sessionTimeout) {
        long connectionMs = Math.max(100, Math.min(settings.connectTimeout().toMillis(), 15_000));
        AtomicReference<Genesis.Roles> roles = new AtomicReference<>();
        CuratorFrameworkFactory.Builder builder = CuratorFrameworkFactory.builder()
                .connectString(settings.connect())
                .sessionTimeoutMs((int) sessionTimeout.toMillis())
                .connectionTimeoutMs((int) connectionMs)
                .retryPolicy(new ExponentialBackoffRetry(200, 3, 2_000))
                .zkClientConfig(settings.clientConfig() != null ? settings.clientConfig() : new PlainClientConfig())
                .aclProvider(OncegateAcl.provider(namespace, roles::get));
        List<AuthInfo> auth = new ArrayList<>();
        for (Credentials identity : new Credentials[] {settings.credentials(), settings.also()}) {
            if (identity != null) {
                auth.add(new AuthInfo("digest", identity.bytes()));
            }
        }
        if (!auth.isEmpty()) {
            builder.authorization(auth);
        }
        CuratorFramework client = builder.build();
        long deadline = System.nanoTime() + settings.connectTimeout().toNanos();
        client.start();
        return new ZooKeeperConnection(client, settings, namespace, marks, roles, deadline);
    }

    /** {@link #open(Settings, String)}, connected. */
    static ZooKeeperConnection connected(Settings settings, String namespace) throws InterruptedException {
        return connected(settings, namespace, null);
    }

    /** Opens a client (see {@link #open(Settings, String, ZxidMarks)}) and waits for it to connect. */
    static ZooKeeperConnection connected(Settings settings, String namespace, ZxidMarks marks) throws InterruptedException {
        ZooKeeperConnection connection = open(settings, namespace, marks);
        try {
            connection.awaitConnected();
            return connection;
        } catch (RuntimeException | InterruptedException e) {
            connection.close();
            throw e;
        }
    }

    /**
     * Waits up to {@code --connect-timeout} for the connection.
     *
     * @throws UnavailableException when ZooKeeper cannot be reached in time (exit 13)
     */
    void awaitConnected() throws InterruptedException {
        if (!connectedBeforeDeadline()) {
            throw new UnavailableException(unreachable());
        }
    }

    /** What failed when ZooKeeper could not be reached in time, and what to check. */
    String unreachable() {
        return "ZooKeeper at " + settings.connect() + " could not be reached within "
                + Durations.format(settings.connectTimeout()) + " (check --connect / ONCEGATE_CONNECT, and"
                + " --zk-client-config for a TLS port, and that the server is up)";
    }

    /** Whether the client is connected, waiting for it until the deadline (--connect-timeout after the start) at most. */
    private boolean connectedBeforeDeadline() throws InterruptedException {
        long left = TimeUnit.NANOSECONDS.toMillis(deadlineNanos - System.nanoTime());
        return client.blockUntilConnected((int) Math.max(1, Math.min(Integer.MAX_VALUE, left)), TimeUnit.MILLISECONDS);
    }

    /** What is left of --connect-timeout, counted from the start of the client (zero once it ran out). */
    private Duration remaining() {
        return Duration.ofNanos(Math.max(0, deadlineNanos - System.nanoTime()));
    }

    /**
     * Reads the namespace's roles from its genesis (when connected in time), so that the znodes
     * Curator creates for us get their ACLs. A genesis that cannot be read is left to the gate,
     * which fails closed on it with a precise reason.
     */
    void learnRoles() throws InterruptedException {
        if (!connectedBeforeDeadline()) {
            return;
        }
        try {
            roles.set(OncegateAcl.roles(client, namespace));
        } catch (OncegateException unreadable) {
            // the gate reports it
        }
    }

    CuratorFramework client() {
        return client;
    }

    /** The identity this client authenticated as ({@code --auth}), or null for none. */
    Credentials identity() {
        return settings.credentials();
    }

    /**
     * The whole --connect-timeout, for a long-lived command's gates made at any time (the sidecar's
     * per task): {@link #gate} gives a gate what is left of it, which for a short command is right
     * (the command gives up within it) and for a gate made later is nothing.
     */
    Duration connectTimeout() {
        return settings.connectTimeout();
    }

    /** The namespace this connection works in. */
    String namespace() {
        return namespace;
    }

    /** This host's zxid marks, the rollback witness every gate and operator on this connection feeds and checks. */
    ZxidMarks marks() {
        if (marks == null) {
            throw new IllegalStateException("this connection was opened without zxid marks: open it through ZooKeeperOptions");
        }
        return marks;
    }

    /**
     * A gate on this connection, once the namespace's roles are known (for the ACLs of the
     * election nodes Curator creates): the namespace, what is left of the connect timeout (so
     * that the whole command gives up within --connect-timeout, however many waits it has),
     * this host's zxid marks (so every command leaves and checks the rollback witness), plus
     * whatever {@code configure} adds. The caller closes it (before this connection).
     */
    Gate gate(Consumer<Gate.Builder> configure) throws InterruptedException {
        return gate(null, configure);
    }

    /**
     * {@link #gate(Consumer)} with a connect timeout of the caller's ({@link #connectTimeout()}), or
     * null for what is left of it once the roles are learnt (learning them may wait for the connection).
     */
    Gate gate(Duration connectTimeout, Consumer<Gate.Builder> configure) throws InterruptedException {
        learnRoles();
        Gate.Builder builder = Gate.builder(client).namespace(namespace)
                .connectTimeout(connectTimeout != null ? connectTimeout : remaining())
                .zxidMarks(marks());
        if (settings.host() != null) {
            builder.host(settings.host());
        }
        configure.accept(builder);
        return builder.build();
    }

    /** The operator side of the namespace on this connection, feeding this host's zxid marks. */
    Operator operator() {
        Operator.Builder builder = Operator.builder(client).namespace(namespace).zxidMarks(marks());
        if (settings.host() != null) {
            builder.host(settings.host());
        }
        return builder.build();
    }

    /**
     * Closes the client, and returns once ZooKeeper has ended the session: Curator's close
     * (its executors, its listeners) and then ZooKeeper's, whose closeSession request the server
     * answers, or which fails with the connection, exactly as a plain {@code client.close()}.
     * It does not wait for what follows in ZooKeeper's NIO socket: having closed the socket, its
     * cleanup sleeps 100 ms ({@code ClientCnxnSocketNIO.cleanup}), a tenth of a second on every
     * command for nothing. So the close runs on a thread of its own, and this returns when that
     * thread ends or the handle's state is {@code CLOSED}, which ZooKeeper sets only after the
     * closeSession request came back (answered or failed). The sleep then ends on that thread,
     * or with the JVM. A client that is not connected closes on the calling thread, as always.
     */
    @Override
    public void close() {
        ZooKeeper handle = connectedHandle();
        if (handle == null) {
            client.close();
            return;
        }
        Thread closing = new Thread(client::close, "oncegate-close");
        closing.setDaemon(true);
        closing.start();
        boolean interrupted = false;
        while (closing.isAlive() && handle.getState() != ZooKeeper.States.CLOSED) {
            try {
                closing.join(1);
            } catch (InterruptedException e) {
                // the close goes on (it cannot be undone): wait for it as before, then say so
                interrupted = true;
            }
        }
        if (interrupted) {
            Thread.currentThread().interrupt();
        }
    }

    /** The ZooKeeper handle of a connected client, else null (asking an unconnected Curator client for it may start a reconnection). */
    private ZooKeeper connectedHandle() {
        if (!client.getZookeeperClient().isConnected()) {
            return null;
        }
        try {
            return client.getZookeeperClient().getZooKeeper();
        } catch (Exception e) {
            if (e instanceof InterruptedException) {
                Thread.currentThread().interrupt();
            }
            return null; // closed on the calling thread, which meets the same failure
        }
    }
}
