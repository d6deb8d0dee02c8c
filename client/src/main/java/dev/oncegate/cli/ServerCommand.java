package dev.oncegate.cli;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.stream.Stream;

import dev.oncegate.Gate;
import org.apache.zookeeper.server.ServerConfig;
import org.apache.zookeeper.server.ZooKeeperServerMain;
import org.apache.zookeeper.server.quorum.QuorumPeerConfig;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;

/**
 * {@code oncegate server}: a real standalone ZooKeeper server in this process, for
 * single-machine use. Its data directory persists across restarts; when the directory is new,
 * the server writes the namespace's genesis once its port answers. Runs until SIGTERM/SIGINT,
 * then shuts the server down cleanly and exits 0.
 */
@Command(name = "server", mixinStandardHelpOptions = true,
        description = "Run a standalone ZooKeeper server (data survives restarts; a new data directory gets its namespace initialised).")
final class ServerCommand implements Callable<Integer> {

    private static final Duration START_TIMEOUT = Duration.ofSeconds(60);
    private static final Duration STOP_TIMEOUT = Duration.ofSeconds(15);

    @Spec
    CommandSpec spec;

    @Mixin
    CommonOptions common;

    @Option(names = "--port", paramLabel = "P", defaultValue = "2181",
            description = "Client port (default: ${DEFAULT-VALUE}; 0 picks a free one).")
    int port;

    @Option(names = "--data-dir", paramLabel = "DIR", defaultValue = "./oncegate-data",
            description = "Where ZooKeeper keeps its snapshots and transaction log (default: ${DEFAULT-VALUE}).")
    Path dataDir;

    @Option(names = "--bind", paramLabel = "ADDRESS", defaultValue = "127.0.0.1",
            description = "Address to listen on (default: ${DEFAULT-VALUE}).")
    String bind;

    @Override
    public Integer call() throws Exception {
        String namespace = common.namespace();
        if (port < 0 || port > 65535) {
            throw new ParameterException(spec.commandLine(), "--port: must be 0 to 65535, got " + port);
        }
        if (bind.isBlank()) {
            throw new ParameterException(spec.commandLine(), "--bind: the address is empty");
        }
        Path dir = dataDir.toAbsolutePath().normalize();
        if (Files.exists(dir) && !Files.isDirectory(dir)) {
            throw new IllegalArgumentException("--data-dir: '" + dir + "' exists and is not a directory");
        }
        boolean fresh = isEmpty(dir);
        Files.createDirectories(dir);

        System.setProperty("zookeeper.admin.enableServer", "false");
        ServerConfig config = config(dir);
        EmbeddedServer server = new EmbeddedServer();
        AtomicReference<Throwable> failure = new AtomicReference<>();
        Thread thread = new Thread(() -> {
            try {
                server.runFromConfig(config);
            } catch (Throwable t) {
                failure.set(t);
            } finally {
                server.started.countDown();
            }
        }, "oncegate-zookeeper");
        thread.start();
        Runtime.getRuntime().addShutdownHook(new Thread(() -> stop(server, thread), "oncegate-server-shutdown"));

        if (!server.started.await(START_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS) || failure.get() != null
                || !thread.isAlive()) {
            server.close();
            thread.join(STOP_TIMEOUT.toMillis());
            Throwable t = failure.get();
            throw new UnavailableException("the ZooKeeper server did not start on " + bind + ":" + port
                    + (t != null ? ": " + t : ""));
        }
        Map<String, Object> out;
        try {
            out = announce(server.getClientPort(), dir, namespace, fresh);
        } catch (Exception | Error e) {
            // Stop the server ourselves, so the shutdown hook has nothing to do and the exit code stays ours.
            server.close();
            thread.join(STOP_TIMEOUT.toMillis());
            throw e;
        }
        System.out.println(Json.line(out));
        System.out.flush();
        thread.join();
        Throwable t = failure.get();
        if (t != null) {
            throw new UnavailableException("the ZooKeeper server stopped: " + t);
        }
        return ExitCode.OK;
    }

    /** Initialises a fresh namespace once the port answers; the start line. */
    private Map<String, Object> announce(int actualPort, Path dir, String namespace, boolean fresh)
            throws InterruptedException {
        String connect = connectHost() + ":" + actualPort;
        boolean initialized = false;
        if (fresh) {
            try (ZooKeeperConnection zk = ZooKeeperConnection.connected(connect, START_TIMEOUT)) {
                initialized = Gate.initialize(zk.client(), namespace).created();
            }
        }
        Map<String, Object> out = Json.object();
        out.put("server", "started");
        out.put("connect", connect);
        out.put("data_dir", dir.toString());
        out.put("namespace", namespace);
        out.put("initialized", initialized);
        return out;
    }

    private ServerConfig config(Path dir) throws IOException, QuorumPeerConfig.ConfigException {
        Properties p = new Properties();
        p.setProperty("tickTime", "2000");
        p.setProperty("dataDir", dir.toString());
        p.setProperty("clientPort", Integer.toString(port));
        p.setProperty("clientPortAddress", bind);
        p.setProperty("admin.enableServer", "false");
        p.setProperty("4lw.commands.whitelist", "srvr,ruok");
        QuorumPeerConfig quorum = new QuorumPeerConfig();
        try {
            quorum.parseProperties(p);
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("--bind/--port: " + e.getMessage(), e);
        }
        ServerConfig config = new ServerConfig();
        config.readFrom(quorum);
        return config;
    }

    /** Where clients reach a server bound to {@code --bind}: loopback for a wildcard bind. */
    private String connectHost() {
        return bind.equals("0.0.0.0") || bind.equals("::") ? "127.0.0.1" : bind;
    }

    private static boolean isEmpty(Path dir) throws IOException {
        if (!Files.exists(dir)) {
            return true;
        }
        try (Stream<Path> entries = Files.list(dir)) {
            return entries.findAny().isEmpty();
        }
    }

    /** Shutdown hook: close the server, wait for its thread, exit 0 (a requested stop is a clean one). */
    private static void stop(EmbeddedServer server, Thread thread) {
        if (!thread.isAlive()) {
            return;
        }
        server.close();
        try {
            thread.join(STOP_TIMEOUT.toMillis());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        System.out.flush();
        Runtime.getRuntime().halt(thread.isAlive() ? ExitCode.STOP_UNAVAILABLE : ExitCode.OK);
    }

    /** {@link ZooKeeperServerMain} that says when it is serving. */
    private static final class EmbeddedServer extends ZooKeeperServerMain {
        final CountDownLatch started = new CountDownLatch(1);

        @Override
        protected void serverStarted() {
            started.countDown();
        }
    }
}
