package dev.oncegate.cli;

import java.time.Duration;

import dev.oncegate.Gate;
import dev.oncegate.Genesis;
import dev.oncegate.OncegateAcl;
import dev.oncegate.Operator;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.retry.ExponentialBackoffRetry;

/**
 * The CLI's Curator client: Curator's default (standard) connection-state error policy, a
 * 30 s session, a bounded retry, and a connection timeout no longer than {@code --connect-timeout}.
 * The command that opens it closes it.
 *
 * <p>Thread-safe as Curator is.
 */
final class ZooKeeperConnection implements AutoCloseable {

    /** Requested session timeout; the server may negotiate it down (TestingServer caps it at 20 s). */
    static final Duration SESSION_TIMEOUT = Duration.ofSeconds(30);

    private final CuratorFramework client;
    private final String connect;
    private final Duration connectTimeout;
    private final java.util.concurrent.atomic.AtomicReference<Genesis.Roles> roles;
    private final String namespace;

    private ZooKeeperConnection(CuratorFramework client, String connect, Duration connectTimeout,
                                java.util.concurrent.atomic.AtomicReference<Genesis.Roles> roles, String namespace) {
        this.client = client;
        this.connect = connect;
        this.connectTimeout = connectTimeout;
        this.roles = roles;
        this.namespace = namespace;
    }

    /**
     * Reads the namespace's roles from its genesis, so that znodes Curator creates on our behalf
     * (LeaderLatch's election nodes) get their ACLs. A genesis that cannot be read is left to the
     * gate, which fails closed on it with a precise reason.
     */
    void learnRoles() throws InterruptedException {
        try {
            roles.set(OncegateAcl.roles(client, namespace));
        } catch (dev.oncegate.OncegateException unreadable) {
            // the gate reports it
        }
    }

    /** Builds and starts an unauthenticated client; does not wait for the connection. */
    static ZooKeeperConnection open(String connect, Duration connectTimeout) {
        return open(connect, connectTimeout, null, Gate.DEFAULT_NAMESPACE);
    }

    /**
     * Builds and starts a client, authenticated as {@code credentials} (null: none), whose ACL
     * provider gives every znode it creates in {@code namespace} its role ACL once
     * {@link #learnRoles} read them; does not wait for the connection (see {@link #awaitConnected}).
     */
    static ZooKeeperConnection open(String connect, Duration connectTimeout, Credentials credentials, String namespace) {
        long connectionMs = Math.max(100, Math.min(connectTimeout.toMillis(), 15_000));
        java.util.concurrent.atomic.AtomicReference<Genesis.Roles> roles = new java.util.concurrent.atomic.AtomicReference<>();
        CuratorFrameworkFactory.Builder builder = CuratorFrameworkFactory.builder()
                .connectString(connect)
                .sessionTimeoutMs((int) SESSION_TIMEOUT.toMillis())
                .connectionTimeoutMs((int) connectionMs)
                .retryPolicy(new ExponentialBackoffRetry(200, 3, 2_000))
                .aclProvider(OncegateAcl.provider(namespace, roles::get));
        if (credentials != null) {
            builder.authorization("digest", credentials.bytes());
        }
        CuratorFramework client = builder.build();
        client.start();
        return new ZooKeeperConnection(client, connect, connectTimeout, roles, namespace);
    }

    /** Opens an unauthenticated client and waits for it to connect. */
    static ZooKeeperConnection connected(String connect, Duration connectTimeout) throws InterruptedException {
        return connected(connect, connectTimeout, null, Gate.DEFAULT_NAMESPACE);
    }

    /** Opens a client (see {@link #open(String, Duration, Credentials, String)}) and waits for it to connect. */
    static ZooKeeperConnection connected(String connect, Duration connectTimeout, Credentials credentials, String namespace)
            throws InterruptedException {
        ZooKeeperConnection connection = open(connect, connectTimeout, credentials, namespace);
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
        if (!client.blockUntilConnected((int) Math.max(1, connectTimeout.toMillis()), java.util.concurrent.TimeUnit.MILLISECONDS)) {
            throw new UnavailableException("ZooKeeper at " + connect + " could not be reached within "
                    + Durations.format(connectTimeout) + " (check --connect / ONCEGATE_CONNECT and that the server is up)");
        }
    }

    CuratorFramework client() {
        return client;
    }

    /**
     * A gate on this connection: the namespace, the connect timeout, this host's zxid marks (so
     * every command leaves and checks the rollback witness), plus whatever {@code configure} adds.
     * The caller closes it (before this connection).
     */
    Gate gate(String namespace, StateOptions state, java.util.function.Consumer<Gate.Builder> configure) {
        Gate.Builder builder = Gate.builder(client).namespace(namespace).connectTimeout(connectTimeout)
                .zxidMarks(state.marks(connect));
        configure.accept(builder);
        return builder.build();
    }

    /** {@link #gate(String, StateOptions, java.util.function.Consumer)} with nothing added. */
    Gate gate(String namespace, StateOptions state) {
        return gate(namespace, state, b -> { });
    }

    /** The operator side of {@code namespace} on this connection, feeding this host's zxid marks. */
    Operator operator(String namespace, StateOptions state) {
        return Operator.builder(client).namespace(namespace).zxidMarks(state.marks(connect)).build();
    }

    @Override
    public void close() {
        client.close();
    }
}
