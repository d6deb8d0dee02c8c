package dev.oncegate.cli;

import java.io.PrintStream;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.Map;
import java.util.StringJoiner;
import java.util.concurrent.TimeUnit;

import dev.oncegate.OncegateMeters;
import dev.oncegate.testing.ChaosRun;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/**
 * {@code oncegate demo}: an embedded ZooKeeper (or 3-server ensemble), a fleet of simulated
 * agent workers racing over effects while faults are injected, a live progress line, and a
 * verdict. Exit 0 only when no effect was delivered twice and every effect was decided.
 *
 * <p>Ctrl-C (SIGINT/SIGTERM) interrupts the run, which then stops its workers and servers; each
 * embedded server removes its own temporary directory, so nothing is left behind.
 */
@Command(name = "demo", mixinStandardHelpOptions = true,
        description = {"Run a fleet of simulated agent workers against an embedded ZooKeeper while faults are"
                + " injected, and check that every effect was delivered at most once.",
                "Exit 0 only when there was no duplicate delivery and every effect was decided."},
        footer = {"", "Exit codes: 0 no duplicate delivery and every effect decided; 1 an effect was delivered twice or"
                + " left undecided; 2 bad options; 130 interrupted (SIGINT/SIGTERM)."})
final class DemoCommand extends Subcommand {

    /** The demo's exit code when an effect was delivered twice or left undecided. */
    static final int FAILED = 1;

    @Mixin
    CommonOptions common;

    @Option(names = "--workers", paramLabel = "N", defaultValue = "6",
            description = "Worker sessions (default: ${DEFAULT-VALUE}).")
    int workers;

    @Option(names = "--effects", paramLabel = "N", defaultValue = "40",
            description = "Distinct effects to deliver (default: ${DEFAULT-VALUE}).")
    int effects;

    @Option(names = "--contenders", paramLabel = "N", defaultValue = "4",
            description = "Contenders per effect: siblings, a delegated worker, a task resumed overnight (default: ${DEFAULT-VALUE}).")
    int contenders;

    @Option(names = "--duration", paramLabel = "DURATION", defaultValue = "20s", converter = Durations.class,
            description = "How long faults are injected (default: ${DEFAULT-VALUE}).")
    Duration duration;

    @Option(names = "--fault-rate", paramLabel = "PER_SECOND", defaultValue = "0.5",
            description = "Faults injected per second (default: ${DEFAULT-VALUE}).")
    double faultRate;

    @Option(names = "--seed", paramLabel = "SEED", description = "Seed of every random choice (default: random; printed).")
    Long seed;

    @Option(names = "--ensemble", description = "Run a 3-server ensemble (leader kills included) instead of one server.")
    boolean ensemble;

    @Option(names = "--metrics-port", paramLabel = "PORT",
            description = "Serve the meters in Prometheus text format on http://127.0.0.1:PORT/metrics while running.")
    Integer metricsPort;

    @Option(names = "--json", description = "Print the result as one JSON object instead of a table.")
    boolean json;

    @Override
    public Integer call() throws Exception {
        common.namespace(); // bad input before anything runs; the run itself reads it again below
        if (metricsPort != null && (metricsPort < 1 || metricsPort > 65535)) {
            throw usage("--metrics-port: must be 1 to 65535, got " + metricsPort);
        }
        if (duration.compareTo(Duration.ofHours(24)) > 0) {
            throw usage("--duration: at most 24h, got " + Durations.format(duration));
        }
        PrometheusMeterRegistry registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
        // The registry's owner chooses histograms (the gate's timers publish none by themselves): the
        // README's, so that the dashboard's quantiles come from histogram_quantile over _bucket.
        registry.config().meterFilter(OncegateMeters.percentileHistograms());
        ChaosRun.Config config;
        try {
            ChaosRun.Builder builder = ChaosRun.builder().workers(workers).effects(effects).contenders(contenders)
                    .duration(duration).faultRate(faultRate).ensemble(ensemble).registry(registry).namespace(common.namespace());
            if (seed != null) {
                builder.seed(seed);
            }
            config = builder.build();
        } catch (IllegalArgumentException e) {
            throw usage("--" + e.getMessage().replace("faultRate", "fault-rate"));
        }
        return runIn(config, registry);
    }

    private Integer runIn(ChaosRun.Config config, PrometheusMeterRegistry registry) throws Exception {
        PrintStream err = System.err;
        err.println("oncegate demo: seed " + config.seed() + " (replay with --seed " + config.seed() + "), "
                + workers + " workers, " + effects + " effects x " + contenders + " contenders, faults for "
                + Durations.format(duration) + " at " + faultRate + "/s on " + (ensemble ? "a 3-server ensemble" : "one server"));
        MetricsEndpoint metrics = null;
        if (metricsPort != null) {
            metrics = MetricsEndpoint.serve(registry, new InetSocketAddress("127.0.0.1", metricsPort), "--metrics-port");
            err.println("oncegate demo: metrics on " + metrics.url());
        }
        Thread main = Thread.currentThread();
        // Not main.join(): once cleaned up, main calls System.exit, which blocks while this hook runs.
        java.util.concurrent.CountDownLatch cleanedUp = new java.util.concurrent.CountDownLatch(1);
        Thread onSignal = new Thread(() -> {
            main.interrupt(); // the run cleans up (workers, servers, data directories) on interrupt
            try {
                cleanedUp.await(30, TimeUnit.SECONDS);
            } catch (InterruptedException ignored) {
                // exiting anyway
            }
        }, "oncegate-demo-shutdown");
        Runtime.getRuntime().addShutdownHook(onSignal);
        boolean tty = System.console() != null;
        ChaosRun.Report report;
        try {
            report = ChaosRun.run(config, p -> progress(err, tty, p));
        } catch (InterruptedException e) {
            err.println("oncegate demo: interrupted; workers and servers stopped, their data removed");
            return 130;
        } finally {
            if (metrics != null) {
                metrics.close();
            }
            if (tty) {
                err.println();
            }
            cleanedUp.countDown();
        }
        try {
            Runtime.getRuntime().removeShutdownHook(onSignal);
        } catch (IllegalStateException shuttingDown) {
            // a signal arrived just as the run finished
        }
        System.out.println(json ? Json.line(jsonReport(report)) : table(report));
        return report.ok() ? ExitCode.OK : FAILED;
    }

    private static void progress(PrintStream err, boolean tty, ChaosRun.Progress p) {
        String line = String.format("decided %d/%d  deliveries %d  duplicates %d  faults %d  %ds",
                p.decided(), p.effects(), p.deliveries(), p.duplicates(), p.faults(), p.elapsed().toSeconds());
        if (tty) {
            err.print("\r" + line + "   ");
            err.flush();
        } else if (p.elapsed().toSeconds() % 5 == 0) {
            err.println(line);
        }
    }

    static Map<String, Object> jsonReport(ChaosRun.Report r) {
        Map<String, Object> out = Json.object();
        out.put("ok", r.ok());
        out.put("seed", r.seed());
        out.put("namespace", r.config().namespace());
        out.put("effects", r.verdict().effects());
        out.put("deliveries", r.verdict().deliveries());
        out.put("duplicates", r.verdict().duplicates());
        out.put("undecided", r.verdict().undecided());
        out.put("outcomes", r.verdict().outcomes());
        out.put("faults", r.faults());
        out.put("faults_total", r.totalFaults());
        out.put("contenders", r.contenders());
        out.put("workers", r.config().workers());
        out.put("ensemble", r.config().ensemble());
        out.put("fenced_writes", r.fencedWrites());
        out.put("fail_closed", r.failClosed());
        out.put("takeovers", r.takeovers());
        out.put("elapsed_ms", r.elapsed().toMillis());
        out.put("violations", r.verdict().violations());
        return out;
    }

    static String table(ChaosRun.Report r) {
        StringBuilder out = new StringBuilder();
        out.append("oncegate demo, seed ").append(r.seed()).append('\n');
        row(out, "effects", Integer.toString(r.verdict().effects()));
        row(out, "contenders", r.contenders().values().stream().mapToInt(Integer::intValue).sum() + " (" + joined(r.contenders()) + ")");
        row(out, "deliveries", Integer.toString(r.verdict().deliveries()));
        row(out, "duplicates", Integer.toString(r.verdict().duplicates()));
        row(out, "outcomes", joined(r.verdict().outcomes()));
        row(out, "undecided", Integer.toString(r.verdict().undecided()));
        row(out, "faults injected", r.totalFaults() + " (" + joined(r.faults()) + ")");
        row(out, "fenced writes", Long.toString(r.fencedWrites()));
        row(out, "fail-closed stops", Long.toString(r.failClosed()));
        row(out, "lease takeovers", Long.toString(r.takeovers()));
        row(out, "elapsed", String.format("%.1f s", r.elapsed().toMillis() / 1000.0));
        row(out, "verdict", r.ok() ? "OK: every effect decided, none delivered twice"
                : "FAILED: " + (r.verdict().violations().isEmpty() ? "undecided effects or duplicates" : String.join("; ", r.verdict().violations())));
        return out.toString().stripTrailing();
    }

    private static void row(StringBuilder out, String name, String value) {
        out.append(String.format("  %-18s %s%n", name, value));
    }

    private static String joined(Map<String, Integer> counts) {
        StringJoiner j = new StringJoiner(", ");
        counts.forEach((k, v) -> {
            if (v != 0) {
                j.add(k + " " + v);
            }
        });
        return j.length() == 0 ? "none" : j.toString();
    }
}
