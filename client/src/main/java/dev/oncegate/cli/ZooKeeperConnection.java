package dev.oncegate.cli;

import java.time.Duration;

import dev.oncegate.Gate;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.retry.ExponentialBackoffRetry;
import org.apache.zookeeper.client.ZKClientConfig;

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

    private ZooKeeperConnection(CuratorFramework client, String connect, Duration connectTimeout) {
        this.client = client;
        this.connect = connect;
        this.connectTimeout = connectTimeout;
    }

    /** Builds and starts a client; does not wait for the connection (see {@link #awaitConnected}). */
    static ZooKeeperConnection open(String connect, Duration connectTimeout) {
        return open(connect, connectTimeout, null);
    }

    /**
     * Builds and starts a client with a ZooKeeper client configuration ({@code --zk-client-config}:
     * TLS, say; null for ZooKeeper's defaults); does not wait for the connection.
     */
    static ZooKeeperConnection open(String connect, Duration connectTimeout, ZKClientConfig clientConfig) {
        long connectionMs = Math.max(100, Math.min(connectTimeout.toMillis(), 15_000));
        CuratorFramework client = CuratorFrameworkFactory.builder()
                .connectString(connect)
                .sessionTimeoutMs((int) SESSION_TIMEOUT.toMillis())
                .connectionTimeoutMs((int) connectionMs)
                .retryPolicy(new ExponentialBackoffRetry(200, 3, 2_000))
                .zkClientConfig(clientConfig)
                .build();
        client.start();
        return new ZooKeeperConnection(client, connect, connectTimeout);
    }

    /** Opens a client and waits for it to connect. */
    static ZooKeeperConnection connected(String connect, Duration connectTimeout) throws InterruptedException {
        return connected(connect, connectTimeout, null);
    }

    /** Opens a client with a ZooKeeper client configuration (or null) and waits for it to connect. */
    static ZooKeeperConnection connected(String connect, Duration connectTimeout, ZKClientConfig clientConfig)
            throws InterruptedException {
        ZooKeeperConnection connection = open(connect, connectTimeout, clientConfig);
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

    @Override
    public void close() {
        client.close();
    }
}
