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
import dev.oncegate.ZxidMarks;
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
        description = "Run a standalone ZooKeeper server (data survives restarts; a new data directory gets its namespace"
                + " initialised, unless this host saw that namespace at this address before).")
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

    @Mixin
    StateOptions state;

    @Option(names = "--data-dir", paramLabel = "DIR",
            description = "Where ZooKeeper keeps its snapshots and transaction log (default: the state directory's"
                    + " zookeeper/, i.e. $$ONCEGATE_STATE_DIR/zookeeper, else $$XDG_STATE_HOME/oncegate/zookeeper,"
                    + " else ~/.local/state/oncegate/zookeeper: one fixed place, whatever the working directory).")
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
        Path dir = (dataDir != null ? dataDir : state.dir().resolve("zookeeper")).toAbsolutePath().normalize();
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

    /**
     * Initialises a fresh namespace once the port answers — unless this host saw that namespace
     * at this address before (its zxid marks say so): an empty data directory then means its
     * history was lost or moved, and a new genesis would let every worker deliver everything
     * again. The start line.
     */
    private Map<String, Object> announce(int actualPort, Path dir, String namespace, boolean fresh)
            throws InterruptedException {
        String connect = connectHost() + ":" + actualPort;
        boolean initialized = false;
        String refused = null;
        if (fresh) {
            ZxidMarks.Mark before = seenBefore(namespace, actualPort);
            if (before != null) {
                refused = "this host saw namespace " + namespace + " at " + connect + " before (genesis "
                        + before.genesisId() + ", last seen " + before.updated() + ", recorded in " + state.marksFile()
                        + ") but the data directory " + dir + " is empty: its history was lost or moved. Workers stop"
                        + " (namespace_not_initialised) until you restore the data, or accept a fresh start with"
                        + " `oncegate init --connect " + connect + " --namespace " + namespace + "`";
                System.err.println("oncegate server: not initialising: " + refused);
            } else {
                try (ZooKeeperConnection zk = ZooKeeperConnection.connected(ZooKeeperConnection.Settings.plain(connect, START_TIMEOUT), namespace)) {
                    initialized = Gate.initialize(zk.client(), namespace, null, state.marks(connect)).created();
                }
            }
        }
        Map<String, Object> out = Json.object();
        out.put("server", "started");
        out.put("connect", connect);
        out.put("data_dir", dir.toString());
        out.put("state_dir", state.dir().toString());
        out.put("namespace", namespace);
        out.put("initialized", initialized);
        out.put("init_refused", refused);
        return out;
    }

    /** The mark of {@code namespace} that this host recorded at this server's address, or null. */
    private ZxidMarks.Mark seenBefore(String namespace, int actualPort) {
        for (ZxidMarks.Mark mark : ZxidMarks.read(state.marksFile())) {
            if (!mark.namespace().equals(namespace)) {
                continue;
            }
            for (String seenAt : mark.seenAt()) {
                String servers = seenAt.contains("/") ? seenAt.substring(0, seenAt.indexOf('/')) : seenAt;
                for (String hostPort : servers.split(",")) {
                    int colon = hostPort.lastIndexOf(':');
                    if (colon > 0 && hostPort.substring(colon + 1).strip().equals(Integer.toString(actualPort))
                            && isThisHost(hostPort.substring(0, colon).strip())) {
                        return mark;
                    }
                }
            }
        }
        return null;
    }

    private boolean isThisHost(String host) {
        return host.equals(bind) || host.equals(connectHost()) || host.equals("localhost") || host.startsWith("127.")
                || host.equals("::1") || host.equals("[::1]");
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
