package dev.oncegate.cli;

import java.io.IOException;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tag;
import io.micrometer.core.instrument.Timer;
import io.micrometer.core.instrument.config.NamingConvention;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;

/**
 * What one {@code oncegate run --metrics-textfile PATH} adds to that file: the gate's own meters,
 * so that shell and Python fleets land in the same series as JVM workers and the same dashboard
 * and alerts cover both.
 *
 * <p>The run gives its gate a registry of its own; once the run is over, every counter of that
 * registry is added to the file's series of the same name and tags ({@code oncegate_decisions_total}
 * by kind and reason, {@code oncegate_outcomes_total}, {@code oncegate_fenced_writes_total},
 * {@code oncegate_lease_takeovers_total}), every timer's count and sum to the file's summary
 * ({@code oncegate_election_wait_seconds}, {@code oncegate_boundary_duration_seconds}), named as
 * the Prometheus registry names them in a JVM. The gate registers every series up front at zero,
 * so the first run puts them all in the file. Gauges describe a live process and are left out.
 * {@value #LAST_RUN} (by {@code zk_namespace}) is set to the time the run ended.
 *
 * <p>One write per run, when it is over: after a stop, or after the command's outcome is recorded.
 * Before that, once per namespace on a host, the first run writes every series at zero
 * ({@link #addMissingAtZero}, before it enters the gate): a series born at its post-run value has no
 * increase for Prometheus, so the host's first {@code namespace_not_initialised} or unrecorded
 * outcome would raise no alert. Nothing is written between the decision and the command, so the
 * file never delays a crossing (the lease is held meanwhile); a run killed with SIGKILL adds
 * nothing (its armed key is in the exporter's backlog). A file that cannot be written never changes the run's exit code, which
 * says what the records say: {@link #write} reports the failure and returns.
 *
 * <p>Not thread-safe: one run, one thread.
 */
final class RunMetrics {

    static final String LAST_RUN = "oncegate_run_last_timestamp_seconds";
    static final String LAST_RUN_HELP = "Unix time at which the last `oncegate run` writing this file ended, by namespace";
    /** How long a run waits for another run's update of the file; within run's SIGTERM grace. */
    static final Duration LOCK_WAIT = Duration.ofSeconds(5);

    private final PrometheusMeterRegistry registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
    private final MetricsTextfile file;
    private final String namespace;
    private final Clock clock;

    RunMetrics(Path file, String namespace, Clock clock) {
        this.file = new MetricsTextfile(file, LOCK_WAIT);
        this.namespace = namespace;
        this.clock = clock;
    }

    /** The registry to give the run's gate. */
    MeterRegistry registry() {
        return registry;
    }

    /** What this run adds to the file: every counter and timer of its gate, and the time. */
    List<MetricsTextfile.Sample> samples() {
        NamingConvention names = registry.config().namingConvention();
        List<MetricsTextfile.Sample> out = new ArrayList<>();
        for (Meter meter : registry.getMeters()) {
            Meter.Id id = meter.getId();
            String name = id.getConventionName(names);
            String help = id.getDescription() != null ? id.getDescription() : name;
            Map<String, String> labels = new LinkedHashMap<>();
            for (Tag tag : id.getConventionTags(names)) {
                labels.put(tag.getKey(), tag.getValue());
            }
            if (meter instanceof Counter counter) {
                String total = name + "_total";
                out.add(new MetricsTextfile.Sample(total, MetricsTextfile.Type.COUNTER, help, total, labels, counter.count()));
            } else if (meter instanceof Timer timer) {
                out.add(new MetricsTextfile.Sample(name, MetricsTextfile.Type.SUMMARY, help, name + "_count", labels, timer.count()));
                out.add(new MetricsTextfile.Sample(name, MetricsTextfile.Type.SUMMARY, help, name + "_sum", labels,
                        timer.totalTime(TimeUnit.SECONDS)));
            }
        }
        out.add(new MetricsTextfile.Sample(LAST_RUN, MetricsTextfile.Type.GAUGE, LAST_RUN_HELP, LAST_RUN,
                Map.of("zk_namespace", namespace), clock.millis() / 1000.0));
        return out;
    }

    /**
     * Before the gate is entered: writes this namespace's series at zero when the file lacks any
     * of them (see the class comment). The gate must have registered its meters (it does when it
     * is built). A failure is reported on stderr and changes nothing else: the run goes on.
     */
    void addMissingAtZero() {
        boolean interrupted = Thread.interrupted();
        try {
            file.addMissingAtZero(samples());
        } catch (IOException | RuntimeException e) {
            System.err.println("oncegate run: could not add this namespace's series to " + file.file() + ": " + e.getMessage()
                    + " (the run goes on; check that directory's permissions)");
        } catch (InterruptedException e) {
            interrupted = true;
        } finally {
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
    }

    /**
     * Adds this run to the file; on failure says so on stderr (the run's result stands) and
     * returns false. A pending interrupt (a SIGTERM that stopped the run) is held back meanwhile,
     * since file channels close on one, and restored afterwards: the update is bounded by
     * {@link #LOCK_WAIT}.
     */
    boolean write() {
        boolean interrupted = Thread.interrupted();
        try {
            file.update(samples());
            return true;
        } catch (IOException | RuntimeException e) {
            System.err.println("oncegate run: this run's metrics were not added to " + file.file() + ": " + e.getMessage()
                    + " (the run's outcome and exit code are unaffected; check that directory's permissions)");
            return false;
        } catch (InterruptedException e) {
            interrupted = true;
            System.err.println("oncegate run: interrupted while waiting for " + file.lockFile()
                    + "; this run's metrics were not added (the run's outcome and exit code are unaffected)");
            return false;
        } finally {
            registry.close();
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
    }
}
