package dev.oncegate.testing;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;

import org.apache.curator.framework.CuratorFramework;
import org.apache.zookeeper.server.ServerConfig;
import org.apache.zookeeper.server.ZooKeeperServerMain;
import org.apache.zookeeper.server.auth.ProviderRegistry;

/**
 * A real standalone ZooKeeper server whose only client port is TLS: ZooKeeper's own
 * {@link ZooKeeperServerMain}, started from a {@code zoo.cfg} with {@code secureClientPort} on
 * 127.0.0.1 and no {@code clientPort}, the Netty connection factory, the key store and trust
 * store of a {@link TlsMaterial}, and {@code ssl.clientAuth=need} (every client must present a
 * certificate signed by the material's CA). A plain-text client cannot connect.
 *
 * <p>The configuration is exactly what an operator writes (see {@link #configFile()}; the README's
 * "Encryption in transit" shows the same lines). Clients get the material's
 * {@link TlsMaterial#clientConfig()}: {@link #newClient(Duration)} does that.
 *
 * <p><b>JVM-wide state.</b> ZooKeeper turns a {@code zoo.cfg}'s {@code ssl.*},
 * {@code serverCnxnFactory}, {@code authProvider.*} and {@code admin.*} lines into
 * {@code zookeeper.*} system properties, and its Netty server reads its TLS settings from them
 * for every new connection. So while this server runs those properties name its key stores,
 * {@link #close()} restores every {@code zookeeper.*} system property as it was before
 * {@link #start}, and only one {@code TlsZooKeeper} may run in a JVM at a time ({@link #start}
 * refuses a second). A ZooKeeper client in the same JVM reads those key stores as its
 * defaults too, but turns TLS on only with {@code zookeeper.client.secure=true}, which is never
 * set globally: plain clients stay plain.
 *
 * <p>Thread-safe for the helpers; {@link #start} and {@link #close} are meant for the test thread.
 * The tick time is 1000 ms, so sessions are capped at 20 s: ask for short sessions.
 */
public final class TlsZooKeeper implements AutoCloseable {

    private static final AtomicBoolean RUNNING = new AtomicBoolean();
    private static final Duration START_TIMEOUT = Duration.ofSeconds(60);
    private static final Duration STOP_TIMEOUT = Duration.ofSeconds(30);
    private static final String X509_PROVIDER_PROPERTY = ProviderRegistry.AUTHPROVIDER_PROPERTY_PREFIX + "x509";

    private final Server main;
    private final Thread thread;
    private final Path scratch;
    private final int port;
    private final TlsMaterial material;
    private final boolean ownsMaterial;
    private final Map<String, String> propertiesBefore;
    private final AtomicBoolean closed = new AtomicBoolean();

    private TlsZooKeeper(Server main, Thread thread, Path scratch, int port, TlsMaterial material,
                         boolean ownsMaterial, Map<String, String> propertiesBefore) {
        this.main = main;
        this.thread = thread;
        this.scratch = scratch;
        this.port = port;
        this.material = material;
        this.ownsMaterial = ownsMaterial;
        this.propertiesBefore = propertiesBefore;
    }

    /** {@link ZooKeeperServerMain} that says when it is serving, and how it failed. */
    private static final class Server extends ZooKeeperServerMain {
        final CountDownLatch started = new CountDownLatch(1);
        final AtomicReference<Throwable> failure = new AtomicReference<>();

        @Override
        protected void serverStarted() {
            started.countDown();
        }
    }

    /**
     * Starts a TLS-only server with {@link TlsMaterial#generate() fresh material} of its own, which
     * {@link #close()} removes with the server (see {@link #start(TlsMaterial)}).
     */
    public static TlsZooKeeper start() {
        TlsMaterial material = TlsMaterial.generate();
        try {
            return start(material, true);
        } catch (RuntimeException | Error e) {
            material.close();
            throw e;
        }
    }

    /**
     * Starts a TLS-only server on 127.0.0.1 and a free port, with the material's server key store
     * and trust store; its data goes in a private temp directory. Returns once it serves. The
     * material stays the caller's to close.
     *
     * @throws IllegalStateException when another {@code TlsZooKeeper} runs in this JVM, or the
     *                               server does not start (everything is undone)
     */
    public static TlsZooKeeper start(TlsMaterial material) {
        return start(material, false);
    }

    private static TlsZooKeeper start(TlsMaterial material, boolean ownsMaterial) {
        Objects.requireNonNull(material, "material");
        if (!RUNNING.compareAndSet(false, true)) {
            throw new IllegalStateException("a TlsZooKeeper is already running in this JVM: ZooKeeper keeps a"
                    + " server's TLS settings in system properties, so only one at a time");
        }
        Map<String, String> before = zookeeperProperties();
        Path scratch = Scratch.create("oncegate-zk-tls-");
        Server main = new Server();
        Thread thread = null;
        try {
            int port = freePort();
            Path config = writeConfig(scratch, port, material);
            ServerConfig serverConfig = new ServerConfig();
            serverConfig.parse(config.toString()); // sets the zookeeper.* system properties
            thread = new Thread(() -> {
                try {
                    main.runFromConfig(serverConfig);
                } catch (Throwable e) {
                    main.failure.set(e);
                } finally {
                    main.started.countDown();
                }
            }, "oncegate-tls-zookeeper-" + port);
            thread.setDaemon(true);
            thread.start();
            if (!main.started.await(START_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS) || main.failure.get() != null) {
                throw new IllegalStateException("the TLS ZooKeeper server did not start within " + START_TIMEOUT,
                        main.failure.get());
            }
            return new TlsZooKeeper(main, thread, scratch, port, material, ownsMaterial, before);
        } catch (Exception e) {
            stop(main, thread);
            restore(before);
            Scratch.delete(scratch);
            RUNNING.set(false);
            if (e instanceof InterruptedException) {
                Thread.currentThread().interrupt();
            }
            throw e instanceof IllegalStateException ise ? ise
                    : new IllegalStateException("could not start a TLS ZooKeeper server: " + e, e);
        }
    }

    private static Path writeConfig(Path scratch, int port, TlsMaterial material) throws IOException {
        Path data = Scratch.child(scratch, "data");
        String cfg = String.join("\n",
                "# A standalone ZooKeeper whose only client port is TLS (oncegate TlsZooKeeper).",
                "tickTime=1000",
                "dataDir=" + data,
                "secureClientPortAddress=127.0.0.1",
                "secureClientPort=" + port,
                "serverCnxnFactory=org.apache.zookeeper.server.NettyServerCnxnFactory",
                "ssl.keyStore.location=" + material.serverKeyStore(),
                "ssl.keyStore.password=" + material.password(),
                "ssl.keyStore.type=PKCS12",
                "ssl.trustStore.location=" + material.trustStore(),
                "ssl.trustStore.password=" + material.password(),
                "ssl.trustStore.type=PKCS12",
                "ssl.clientAuth=need",
                "authProvider.x509=org.apache.zookeeper.server.auth.X509AuthenticationProvider",
                "admin.enableServer=false",
                "");
        Path file = scratch.resolve("zoo.cfg");
        Files.writeString(file, cfg, StandardCharsets.UTF_8);
        return file;
    }

    private static int freePort() throws IOException {
        try (ServerSocket socket = new ServerSocket(0, 1, InetAddress.getByName("127.0.0.1"))) {
            return socket.getLocalPort();
        }
    }

    /** {@code 127.0.0.1:port}, the TLS port. */
    public String connectString() {
        return "127.0.0.1:" + port;
    }

    /** The TLS client port. */
    public int port() {
        return port;
    }

    /** The {@code zoo.cfg} the server was started from (it holds the key store password). */
    public Path configFile() {
        return scratch.resolve("zoo.cfg");
    }

    /** The material the server was started with: its CA, key stores and client configuration. */
    public TlsMaterial material() {
        return material;
    }

    /**
     * A started TLS client ({@link TlsMaterial#clientConfig()}) with the given session timeout,
     * as {@link EmbeddedZooKeeper#newClient(String, Duration, org.apache.zookeeper.client.ZKClientConfig)}
     * makes it. The caller closes it.
     */
    public CuratorFramework newClient(Duration sessionTimeout) {
        return EmbeddedZooKeeper.newClient(connectString(), sessionTimeout, material.clientConfig());
    }

    /** {@link #newClient(Duration)} with {@link Timing#SESSION}. */
    public CuratorFramework newClient() {
        return newClient(Timing.SESSION);
    }

    /** Writes the namespace's genesis record over TLS, as {@code oncegate init} does. */
    public void initNamespace(String namespace) {
        EmbeddedZooKeeper.initNamespace(newClient(), namespace);
    }

    /**
     * Stops the server, restores the {@code zookeeper.*} system properties and removes its data
     * and its directory, and the material when {@link #start()} made it (material given to
     * {@link #start(TlsMaterial)} stays the caller's). Idempotent.
     */
    @Override
    public void close() {
        if (!closed.compareAndSet(false, true)) {
            return;
        }
        try {
            stop(main, thread);
        } finally {
            restore(propertiesBefore);
            Scratch.delete(scratch);
            if (ownsMaterial) {
                material.close();
            }
            RUNNING.set(false);
        }
    }

    private static void stop(Server main, Thread thread) {
        main.close();
        if (thread != null) {
            try {
                thread.join(STOP_TIMEOUT.toMillis());
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }

    private static Map<String, String> zookeeperProperties() {
        Map<String, String> copy = new HashMap<>();
        System.getProperties().forEach((k, v) -> {
            if (k instanceof String key && key.startsWith("zookeeper.") && v instanceof String value) {
                copy.put(key, value);
            }
        });
        return copy;
    }

    /**
     * Puts every {@code zookeeper.*} system property back as it was; unregisters the x509
     * provider this server registered (the next server's start registers its own again).
     */
    private static void restore(Map<String, String> before) {
        zookeeperProperties().keySet().stream().filter(k -> !before.containsKey(k)).forEach(System::clearProperty);
        before.forEach(System::setProperty);
        if (!before.containsKey(X509_PROVIDER_PROPERTY)) {
            ProviderRegistry.removeProvider("x509");
        }
    }
}
