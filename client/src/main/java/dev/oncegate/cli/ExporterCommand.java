package dev.oncegate.cli;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.UnknownHostException;
import java.time.Clock;
import java.time.Duration;
import java.util.Map;

import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * {@code oncegate exporter}: serves a namespace's durable backlog as Prometheus gauges
 * ({@link BacklogExporter}), for one scrape job per ensemble. Prints one JSON line on stdout once
 * it listens, then runs until SIGTERM/SIGINT, which stops it cleanly with exit 0. A ZooKeeper
 * outage, lost permission or missing genesis fails scans (logged on stderr, the metrics going
 * stale), never the process.
 */
@Command(name = "exporter", mixinStandardHelpOptions = true,
        description = "Serve the namespace's durable backlog on /metrics for Prometheus: keys by state, the oldest scope"
                + " armed without an outcome, unused redelivery authorizations, unreadable records, and when the last"
                + " complete scan ended. Every --interval it scans the backlog index (each key it names confirmed by its"
                + " records: the cost follows the backlog, not the number of keys); every --walk-interval it walks every"
                + " key, bucket by bucket, for the authoritative counts of the whole keyspace (oncegate_exporter_walk_*)"
                + " and to check (and, where its identity may, repair) the index. A namespace without an index (from an"
                + " older release; `oncegate init` adds it) is walked every --interval instead. A failed scan or walk"
                + " (ZooKeeper down, no permission) is logged and keeps the last values, whose timestamp goes stale.",
        footer = {"", "Metrics: deploy/exporter-metrics.txt (README, Metrics). Prints {\"exporter\":\"started\",\"metrics\":URL,…}"
                + " on stdout once listening; runs until SIGTERM/SIGINT.",
                "Exit codes: 0 stopped by a signal; 2 bad input, or --listen cannot be listened on."})
final class ExporterCommand extends NamespaceCommand {

    static final String DEFAULT_LISTEN = "127.0.0.1:9464";

    @Option(names = "--listen", paramLabel = "HOST:PORT", defaultValue = DEFAULT_LISTEN,
            description = "Address to serve /metrics on (default: ${DEFAULT-VALUE}; 0.0.0.0:9464 for every interface, as"
                    + " in a container; [::1]:9464 for IPv6; port 0 picks a free one, printed on stdout).")
    String listen;

    @Option(names = "--interval", paramLabel = "DURATION", defaultValue = "30s", converter = Durations.class,
            description = "Time from the end of one scan to the start of the next (default: ${DEFAULT-VALUE}). A scan"
                    + " reads the backlog index and the records of the keys it names.")
    Duration interval;

    @Option(names = "--walk-interval", paramLabel = "DURATION", defaultValue = "1h", converter = Durations.class,
            description = "Time from the end of one walk of every key to the start of the next (default:"
                    + " ${DEFAULT-VALUE}). A walk reads every record of every key, one after another (its keys per"
                    + " second are served); it is the authoritative count.")
    Duration walkInterval;

    @Override
    public Integer call() throws InterruptedException {
        String namespace = zookeeper.namespace();
        ZooKeeperConnection.Settings settings = zookeeper.settings();
        InetSocketAddress address = address();
        if (interval.isZero()) {
            throw usage("--interval: must be more than zero");
        }
        if (walkInterval.isZero()) {
            throw usage("--walk-interval: must be more than zero");
        }
        ZooKeeperConnection zk = zookeeper.open(settings);
        BacklogExporter exporter;
        try {
            exporter = new BacklogExporter(zk, zk.operator(), interval, walkInterval, Clock.systemUTC());
        } catch (RuntimeException e) {
            zk.close();
            throw e;
        }
        exporter.start(address);
        Runtime.getRuntime().addShutdownHook(new Thread(() -> stop(exporter), "oncegate-exporter-shutdown"));
        Map<String, Object> out = Json.object();
        out.put("exporter", "started");
        out.put("metrics", exporter.url());
        out.put("namespace", namespace);
        out.put("connect", settings.connect());
        out.put("interval", Durations.format(interval));
        out.put("walk_interval", Durations.format(walkInterval));
        System.out.println(Json.line(out));
        System.out.flush();
        exporter.awaitClosed();
        return ExitCode.OK;
    }

    /** {@code --listen} as a socket address: {@code HOST:PORT} or {@code [IPv6]:PORT}. */
    private InetSocketAddress address() {
        return listenAddress(listen, DEFAULT_LISTEN);
    }

    /**
     * A {@code --listen} value as a socket address: {@code HOST:PORT} or {@code [IPv6]:PORT}.
     *
     * @throws IllegalArgumentException naming --listen when it is malformed (exit 2)
     */
    static InetSocketAddress listenAddress(String listen, String example) {
        String text = listen.strip();
        int colon = text.lastIndexOf(':');
        String host = colon < 0 ? "" : text.substring(0, colon);
        if (host.startsWith("[") && host.endsWith("]")) {
            host = host.substring(1, host.length() - 1);
        }
        int port = -1;
        try {
            port = colon < 0 ? -1 : Integer.parseInt(text.substring(colon + 1));
        } catch (NumberFormatException e) {
            // reported below
        }
        if (host.isEmpty() || port < 0 || port > 65535) {
            throw new IllegalArgumentException("--listen: '" + listen + "' is not HOST:PORT with a port"
                    + " from 0 to 65535 (e.g. " + example + ", 0.0.0.0:9464, [::1]:9464)");
        }
        try {
            return new InetSocketAddress(InetAddress.getByName(host), port);
        } catch (UnknownHostException e) {
            throw new IllegalArgumentException("--listen: unknown host '" + host + "'");
        }
    }

    /** Shutdown hook: stop serving and scanning, close the ZooKeeper client, exit 0 (a requested stop is a clean one). */
    private static void stop(BacklogExporter exporter) {
        exporter.close();
        System.err.println("oncegate exporter: stopped");
        System.err.flush();
        System.out.flush();
        Runtime.getRuntime().halt(ExitCode.OK);
    }
}
