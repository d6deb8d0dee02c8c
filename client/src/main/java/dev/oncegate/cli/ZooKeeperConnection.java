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
     */
    record Settings(String connect, Duration connectTimeout, ZKClientConfig clientConfig, Credentials credentials,
                    Credentials also) {

        Settings(String connect, Duration connectTimeout, ZKClientConfig clientConfig, Credentials credentials) {
            this(connect, connectTimeout, clientConfig, credentials, null);
        }

        /** Plain: no client configuration and no identity (the embedded server's own use). */
        static Settings plain(String connect, Duration connectTimeout) {
            return new Settings(connect, connectTimeout, null, null);
        }

        /** These settings, authenticated as {@code identity} too (a rotation: the old admin and the new). */
        Settings alsoAs(Credentials identity) {
            return credentials == null ? new Settings(connect, connectTimeout, clientConfig, identity, null)
                    : new Settings(connect, connectTimeout, clientConfig, credentials, identity);
        }
    }

    private final CuratorFramework client;
    private final Settings settings;
    private final String namespace;
    private final ZxidMarks marks;
    private final AtomicReference<Genesis.Roles> roles;

    private ZooKeeperConnection(CuratorFramework client, Settings settings, String namespace, ZxidMarks marks,
                                AtomicReference<Genesis.Roles> roles) {
        this.client = client;
        this.settings = settings;
        this.namespace = namespace;
        this.marks = marks;
        this.roles = roles;
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
                .zkClientConfig(settings.clientConfig())
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
        client.start();
        return new ZooKeeperConnection(client, settings, namespace, marks, roles);
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
        if (!client.blockUntilConnected((int) Math.max(1, settings.connectTimeout().toMillis()), TimeUnit.MILLISECONDS)) {
            throw new UnavailableException("ZooKeeper at " + settings.connect() + " could not be reached within "
                    + Durations.format(settings.connectTimeout()) + " (check --connect / ONCEGATE_CONNECT, and"
                    + " --zk-client-config for a TLS port, and that the server is up)");
        }
    }

    /**
     * Reads the namespace's roles from its genesis (when connected in time), so that the znodes
     * Curator creates for us get their ACLs. A genesis that cannot be read is left to the gate,
     * which fails closed on it with a precise reason.
     */
    void learnRoles() throws InterruptedException {
        if (!client.blockUntilConnected((int) Math.max(1, settings.connectTimeout().toMillis()), TimeUnit.MILLISECONDS)) {
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
     * A gate on this connection: the namespace, the connect timeout, this host's zxid marks (so
     * every command leaves and checks the rollback witness), plus whatever {@code configure} adds.
     * The caller closes it (before this connection).
     */
    Gate gate(Consumer<Gate.Builder> configure) {
        Gate.Builder builder = Gate.builder(client).namespace(namespace).connectTimeout(settings.connectTimeout())
                .zxidMarks(marks());
        configure.accept(builder);
        return builder.build();
    }

    /** The operator side of the namespace on this connection, feeding this host's zxid marks. */
    Operator operator() {
        return Operator.builder(client).namespace(namespace).zxidMarks(marks()).build();
    }

    @Override
    public void close() {
        client.close();
    }
}
