package dev.oncegate.cli;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.stream.Stream;

import dev.oncegate.Gate;
import dev.oncegate.OncegateException;
import dev.oncegate.ZxidMarks;
import org.apache.zookeeper.server.DatadirCleanupManager;
import org.apache.zookeeper.server.ServerConfig;
import org.apache.zookeeper.server.ZooKeeperServerMain;
import org.apache.zookeeper.server.quorum.QuorumPeerConfig;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/**
 * {@code oncegate server}: a real standalone ZooKeeper server in this process, for
 * single-machine use. Its data directory persists across restarts; when the directory is new,
 * the server writes the namespace's genesis once its port answers. Autopurge is on (ZooKeeper's
 * {@link DatadirCleanupManager}, which a bare {@link ZooKeeperServerMain} does not start), so
 * snapshots and logs do not fill the disk; {@code --config} takes any other ZooKeeper setting from
 * a {@code zoo.cfg} ({@link ServerProperties}); {@code --metrics-port} serves ZooKeeper's own
 * Prometheus metrics. Runs until SIGTERM/SIGINT, then shuts the server down cleanly and exits 0.
 *
 * <p>Why not ZooKeeper's {@code ZooKeeperServerEmbedded}: it would start the purge task for us,
 * but it writes a new properties file into its base directory on every start and keeps the server
 * thread to itself: with its exit handler a server that fails or dies ends the process with
 * ZooKeeper's own code (2 for a taken port, 0 for a server thread that stopped), and with its
 * log-only handler a taken port costs the whole start timeout and a dead server goes unnoticed.
 * Keeping exit 13 and an immediate, explained failure would take back more code than it removes.
 */
@Command(name = "server", mixinStandardHelpOptions = true,
        description = {"Run a standalone ZooKeeper server (data survives restarts; a new data directory gets its namespace"
                + " initialised, unless this host saw that namespace's genesis before, at any address).",
                "Defaults: 127.0.0.1 only, tickTime 2000 ms (sessions of 4 to 40 s), autopurge on (keeps "
                        + ServerProperties.SNAP_RETAIN_COUNT + " snapshots, every " + ServerProperties.PURGE_INTERVAL_HOURS
                        + " h), four-letter words mntr, ruok and srvr, no admin HTTP server. The start line (JSON on stdout)"
                        + " says what is in force."},
        footer = {"", "--config FILE: any ZooKeeper setting, from a zoo.cfg parsed by ZooKeeper itself; keys it leaves out get"
                + " the defaults above. --port, --bind, --data-dir and --metrics-port set clientPort, clientPortAddress,"
                + " dataDir and metricsProvider.*: giving one of them together with a file that sets the same key is"
                + " refused (exit 2). dataDir in the file must be absolute; server.N lines (an ensemble) are refused.",
                "Exit codes: 0 stopped by SIGTERM/SIGINT; 2 bad input (a bad --config file, a conflicting flag, a bad"
                        + " port); 13 the server did not start, or stopped on its own."})
final class ServerCommand extends Subcommand {

    private static final Duration START_TIMEOUT = Duration.ofSeconds(60);
    private static final Duration STOP_TIMEOUT = Duration.ofSeconds(15);

    @Mixin
    CommonOptions common;

    @Option(names = "--port", paramLabel = "P", defaultValue = "2181",
            description = "Client port (default: ${DEFAULT-VALUE}; 0 picks a free one). Sets clientPort.")
    int port;

    @Mixin
    StateOptions state;

    @Option(names = "--data-dir", paramLabel = "DIR",
            description = "Where ZooKeeper keeps its snapshots and transaction log (default: the state directory's"
                    + " zookeeper/, i.e. $$ONCEGATE_STATE_DIR/zookeeper, else $$XDG_STATE_HOME/oncegate/zookeeper,"
                    + " else ~/.local/state/oncegate/zookeeper: one fixed place, whatever the working directory)."
                    + " Sets dataDir.")
    Path dataDir;

    @Option(names = "--bind", paramLabel = "ADDRESS", defaultValue = "127.0.0.1",
            description = "Address to listen on (default: ${DEFAULT-VALUE}). Sets clientPortAddress.")
    String bind;

    @Option(names = "--config", paramLabel = "ZOO_CFG",
            description = "A ZooKeeper configuration file for anything else (see below).")
    Path config;

    @Option(names = "--metrics-port", paramLabel = "PORT",
            description = "Serve ZooKeeper's Prometheus metrics at http://127.0.0.1:PORT/metrics (default: none; the"
                    + " address is metricsProvider.httpHost in --config). Sets metricsProvider.*.")
    Integer metricsPort;

    @Override
    public Integer call() throws Exception {
        String namespace = common.namespace();
        QuorumPeerConfig quorum = configuration();
        Path dir = quorum.getDataDir().toPath().toAbsolutePath().normalize();
        if (Files.exists(dir) && !Files.isDirectory(dir)) {
            throw new IllegalArgumentException("dataDir: '" + dir + "' exists and is not a directory");
        }
        boolean fresh = isEmpty(dir);
        Files.createDirectories(dir);

        ServerConfig serverConfig = new ServerConfig();
        serverConfig.readFrom(quorum);
        String bindHost = quorum.getClientPortAddress().getHostString();
        DatadirCleanupManager purge = new DatadirCleanupManager(quorum.getDataDir(), quorum.getDataLogDir(),
                quorum.getSnapRetainCount(), quorum.getPurgeInterval());
        purge.start();
        EmbeddedServer server = new EmbeddedServer();
        AtomicReference<Throwable> failure = new AtomicReference<>();
        Thread thread = new Thread(() -> {
            try {
                server.runFromConfig(serverConfig);
            } catch (Throwable t) {
                failure.set(t);
            } finally {
                server.started.countDown();
            }
        }, "oncegate-zookeeper");
        thread.start();
        Runtime.getRuntime().addShutdownHook(new Thread(() -> stop(server, purge, thread), "oncegate-server-shutdown"));

        if (!server.started.await(START_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS) || failure.get() != null
                || !thread.isAlive()) {
            server.close();
            purge.shutdown();
            thread.join(STOP_TIMEOUT.toMillis());
            Throwable t = failure.get();
            throw new UnavailableException("the ZooKeeper server did not start on " + bindHost + ":"
                    + quorum.getClientPortAddress().getPort() + (t != null ? ": " + t : ""));
        }
        Map<String, Object> out;
        try {
            out = announce(server.getClientPort(), bindHost, dir, namespace, fresh);
        } catch (Exception | Error e) {
            // Stop the server ourselves, so the shutdown hook has nothing to do and the exit code stays ours.
            server.close();
            purge.shutdown();
            thread.join(STOP_TIMEOUT.toMillis());
            throw e;
        }
        out.put("autopurge", autopurge(quorum, purge));
        out.put("metrics", metricsUrl(quorum));
        out.put("config", config == null ? null : config.toAbsolutePath().normalize().toString());
        System.out.println(Json.line(out));
        System.out.flush();
        thread.join();
        purge.shutdown();
        Throwable t = failure.get();
        if (t != null) {
            throw new UnavailableException("the ZooKeeper server stopped: " + t);
        }
        return ExitCode.OK;
    }

    /** Defaults, the --config file and the flags, parsed by ZooKeeper (bad input: exit 2). */
    private QuorumPeerConfig configuration() {
        if (port < 0 || port > 65535) {
            throw usage("--port: must be 0 to 65535, got " + port);
        }
        if (bind.isBlank()) {
            throw usage("--bind: the address is empty");
        }
        if (metricsPort != null && (metricsPort < 1 || metricsPort > 65535)) {
            throw usage("--metrics-port: must be 1 to 65535, got " + metricsPort);
        }
        CommandLine.ParseResult given = spec.commandLine().getParseResult();
        Path defaultDir = state.dir().resolve("zookeeper");
        ServerProperties props = ServerProperties.over(config)
                .flag("--port", given.hasMatchedOption("--port"), Map.of("clientPort", Integer.toString(port)))
                .flag("--bind", given.hasMatchedOption("--bind"), Map.of("clientPortAddress", bind))
                .flag("--data-dir", dataDir != null,
                        Map.of("dataDir", (dataDir != null ? dataDir : defaultDir).toAbsolutePath().normalize().toString()));
        if (metricsPort != null) {
            props.flag("--metrics-port", true, Map.of("metricsProvider.className", ServerProperties.PROMETHEUS_PROVIDER,
                    "metricsProvider.httpPort", Integer.toString(metricsPort)));
        }
        if (props.fileSets("metricsProvider.className") || metricsPort != null) {
            props.flag("--metrics-port", false, Map.of("metricsProvider.httpHost", "127.0.0.1"));
        }
        return props.parse();
    }

    /** What the purge task does: its settings, and whether it runs (purgeInterval 0 turns it off). */
    private Map<String, Object> autopurge(QuorumPeerConfig quorum, DatadirCleanupManager purge) {
        boolean on = purge.getPurgeTaskStatus() == DatadirCleanupManager.PurgeTaskStatus.STARTED;
        if (!on) {
            System.err.println("oncegate server: autopurge is off (autopurge.purgeInterval=" + quorum.getPurgeInterval()
                    + "): snapshots and transaction logs pile up in " + quorum.getDataDir() + " until the disk is full;"
                    + " set autopurge.purgeInterval=1 in --config (or leave it out: on by default)");
        }
        Map<String, Object> a = Json.object();
        a.put("on", on);
        a.put("snap_retain_count", quorum.getSnapRetainCount());
        a.put("purge_interval_hours", quorum.getPurgeInterval());
        return a;
    }

    /** Where the Prometheus provider serves, or null when no provider is configured. */
    private static String metricsUrl(QuorumPeerConfig quorum) {
        if (!ServerProperties.PROMETHEUS_PROVIDER.equals(quorum.getMetricsProviderClassName())) {
            return null;
        }
        Properties p = quorum.getMetricsProviderConfiguration();
        return "http://" + p.getProperty("httpHost", "0.0.0.0") + ":" + p.getProperty("httpPort", "7000") + "/metrics";
    }

    /**
     * Initialises a fresh namespace once the port answers — unless this host saw that namespace's
     * genesis before (its zxid marks say so), at whatever address (SPEC §7: a server restarted with
     * {@code --port 0}, or another port or bind address, is the same history): an empty data
     * directory then means its history was lost or moved, and a new genesis would let every worker
     * deliver everything again. The start line.
     */
    private Map<String, Object> announce(int actualPort, String bindHost, Path dir, String namespace, boolean fresh)
            throws InterruptedException {
        String connect = connectHost(bindHost) + ":" + actualPort;
        boolean initialized = false;
        String refused = null;
        if (fresh) {
            refused = initRefusal(namespace, bindHost, actualPort, dir);
            if (refused != null) {
                System.err.println("oncegate server: not initialising: " + refused);
            } else {
                try (ZooKeeperConnection zk = ZooKeeperConnection.connected(ZooKeeperConnection.Settings.plain(connect, START_TIMEOUT), namespace)) {
                    initialized = Gate.initialize(zk.client(), namespace, null, state.marks(connect), true).created();
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

    /**
     * Why a fresh data directory must not be initialised: this host saw the namespace's genesis
     * before, or its marks cannot be read to tell. Null when it may be.
     */
    private String initRefusal(String namespace, String bindHost, int actualPort, Path dir) {
        String connect = connectHost(bindHost) + ":" + actualPort;
        String fresh = "Workers stop (namespace_not_initialised) until you restore the data, or accept a fresh start"
                + " with `oncegate init --connect " + connect + " --namespace " + namespace + "`";
        ZxidMarks.Mark before;
        try {
            before = seenBefore(namespace);
        } catch (OncegateException e) {
            return "this host cannot tell whether it saw namespace " + namespace + " before ("
                    + e.getMessage() + "). " + fresh;
        }
        return before == null ? null : "this host saw namespace " + namespace + " before (genesis " + before.genesisId()
                + ", at " + String.join(", ", before.seenAt()) + ", last seen " + before.updated() + ", recorded in "
                + state.marksFile()
                + ") but the data directory " + dir + " is empty: its history was lost or moved. " + fresh;
    }

    /** The mark of {@code namespace} this host recorded (the latest, when its genesis changed), or null. */
    private ZxidMarks.Mark seenBefore(String namespace) {
        ZxidMarks.Mark seen = null;
        for (ZxidMarks.Mark mark : ZxidMarks.read(state.marksFile())) {
            if (mark.namespace().equals(namespace) && (seen == null || mark.updated().isAfter(seen.updated()))) {
                seen = mark;
            }
        }
        return seen;
    }

    /** Where clients reach a server bound to {@code --bind}: loopback for a wildcard bind. */
    private static String connectHost(String bindHost) {
        return bindHost.equals("0.0.0.0") || bindHost.equals("::") || bindHost.equals("0:0:0:0:0:0:0:0") ? "127.0.0.1"
                : bindHost;
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
    private static void stop(EmbeddedServer server, DatadirCleanupManager purge, Thread thread) {
        if (!thread.isAlive()) {
            return;
        }
        purge.shutdown();
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
