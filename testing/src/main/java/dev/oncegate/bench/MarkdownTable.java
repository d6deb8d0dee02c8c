package dev.oncegate.bench;

import java.util.Comparator;
import java.util.Locale;
import java.util.Map;
import java.util.stream.Collectors;

/**
 * The report as Markdown: one row per workload and arm (medians over the trials, the rate's
 * min–max beside it; costs per unit, counted at the server), the memory phase, the ratios.
 *
 * <p>Stateless; thread-safe.
 */
final class MarkdownTable {

    private MarkdownTable() {
    }

    static String render(Report report) {
        StringBuilder md = new StringBuilder();
        Report.Environment env = report.environment();
        Report.Settings settings = report.settings();
        md.append(String.format(Locale.ROOT, "## oncegate-bench %s%n%n", report.started()));
        md.append(String.format(Locale.ROOT, "JDK %s, %s, %d CPUs, max heap %d MB; ZooKeeper %s, Curator %s, one standalone"
                        + " server in-process, fsync %s (%,d fsyncs); seed %d; %d trials of %.2f s per arm, arms interleaved"
                        + " (%s); load average %s. Costs are per unit, counted at the server; rates and latencies are medians"
                        + " over the trials.%n%n", env.java(), env.os(), env.cpus(), env.maxHeapBytes() >> 20, env.zookeeper(),
                env.curator(), env.fsync() ? "on" : "OFF", env.fsyncsObserved(), report.seed(), settings.trials(),
                settings.trialSeconds(), settings.order(), env.loadAverage()));
        md.append("| workload | arm | rate/s (min–max) | p50 ms | p99 ms | p99.9 ms | txns | requests | operations"
                + " | server CPU µs | all CPU µs | watches fired | threads | errors logged | undecided | requests by type"
                + " | operations by type |\n");
        md.append("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n");
        for (Report.WorkloadResult w : report.workloads()) {
            for (Report.ArmResult a : w.arms()) {
                Report.Summary s = a.summary();
                md.append(String.format(Locale.ROOT, "| %s (%s) | %s | %s (%s–%s) | %.2f | %.2f | %.2f | %.2f | %.2f | %.2f"
                                + " | %,.0f | %,.0f | %.2f | %.2f | %.2f | %d | %s | %s |%n", w.workload(), w.unit(), a.arm(),
                        rate(s.perSecond().median()), rate(s.perSecond().min()), rate(s.perSecond().max()),
                        s.p50Ms().median(), s.p99Ms().median(), s.p999Ms().median(), s.txns().median(),
                        s.requests().median(), s.operations().median(), s.serverCpuMicros().median(),
                        s.processCpuMicros().median(), s.watchNotifications().median(), s.threadsCreated().median(),
                        s.errorLogs().median(), s.undecided(), byType(s.requestsByType()), byType(s.operationsByType())));
            }
        }
        md.append("\n| memory phase | keys | znodes/key | heap bytes/key | snapshot bytes/key | path+data bytes/key"
                + " | containers reaped/key | keys/s |\n|---|---|---|---|---|---|---|---|\n");
        for (Report.MemoryResult m : report.memory()) {
            md.append(String.format(Locale.ROOT, "| %s | %,d | %.2f | %,.0f | %,.0f | %,.0f | %.2f | %s |%n", m.arm(), m.keys(),
                    m.znodesPerKey(), m.heapBytesPerKey(), m.snapshotBytesPerKey(), m.dataBytesPerKey(),
                    m.containersReapedPerKey(), rate(m.keys() / m.seconds())));
        }
        Report.SidecarResult sc = report.sidecar();
        if (sc != null) {
            md.append(String.format(Locale.ROOT, "%n| sidecar phase | value |%n|---|---|%n"
                            + "| %d Python clients through oncegate sidecar, new keys: effects/s | %s |%n"
                            + "| per effect p50 / p99 / p99.9 / max ms | %.2f / %.2f / %.2f / %.2f |%n"
                            + "| the same with enter-and-cross (two calls per effect): effects/s | %s |%n"
                            + "| per effect p50 / p99 / p99.9 / max ms | %.2f / %.2f / %.2f / %.2f |%n"
                            + "| one Python client: mean ms per effect (p50 / p99) | %.2f (%.2f / %.2f) |%n"
                            + "| one Python client, enter-and-cross: mean ms per effect (p50 / p99) | %.2f (%.2f / %.2f) |%n"
                            + "| `oncegate run -- true`: mean ms per effect (%d runs) | %,.0f |%n"
                            + "| open handles: heap bytes / resident bytes / threads per handle | %,.0f / %,.0f / %.3f (%d threads"
                            + " with %d handles, %d without) |%n"
                            + "| undecided | %d |%n", sc.clients(), rate(sc.perSecond()), sc.latency().p50Ms(),
                    sc.latency().p99Ms(), sc.latency().p999Ms(), sc.latency().maxMs(), rate(sc.twoCallPerSecond()),
                    sc.twoCallLatency().p50Ms(), sc.twoCallLatency().p99Ms(), sc.twoCallLatency().p999Ms(),
                    sc.twoCallLatency().maxMs(), sc.oneClientMeanMs(),
                    sc.oneClientLatency().p50Ms(), sc.oneClientLatency().p99Ms(), sc.twoCallOneClientMeanMs(),
                    sc.twoCallOneClientLatency().p50Ms(), sc.twoCallOneClientLatency().p99Ms(), sc.runEffects(), sc.runMeanMs(),
                    sc.heapBytesPerHandle(), sc.rssBytesPerHandle(), sc.threadsPerHandle(), sc.threadsWithHandles(),
                    sc.openHandles(), sc.threadsWithoutHandles(), sc.undecided() + sc.twoCallUndecided()));
        } else if (report.sidecarSkipped() != null) {
            md.append("\nSidecar phase skipped: ").append(report.sidecarSkipped()).append("\n");
        }
        if (report.startup() != null) {
            md.append(String.format(Locale.ROOT, "%n| startup (%d runs; first use %.0f ms) | median ms (min–max) | × floor |%n|---|---|---|%n",
                    report.startup().runs(), report.startup().firstUseMs()));
            for (Report.StartupCommand c : report.startup().commands()) {
                md.append(String.format(Locale.ROOT, "| %s | %.0f (%.0f–%.0f) | %.2f |%n", c.command(), c.ms().median(),
                        c.ms().min(), c.ms().max(), c.vsFloor()));
            }
        }
        if (report.backlog() != null) {
            md.append(String.format(Locale.ROOT, "%n| backlog (%d backlog keys, %d repeats) | walk keys/s | backlog query ms"
                    + " (requests) | exporter scan ms (requests) |%n|---|---|---|---|%n", report.backlog().backlogKeys(),
                    report.backlog().repeats()));
            for (Report.BacklogSize b : report.backlog().sizes()) {
                md.append(String.format(Locale.ROOT, "| %,d consumed keys | %,.0f | %.1f (%.0f) | %.1f (%.0f) |%n",
                        b.consumedKeys(), b.walkKeysPerSecond(), b.queryMs().median(), b.queryRequests().median(),
                        b.scanMs().median(), b.scanRequests().median()));
            }
        }
        md.append("\n| ratio | value |\n|---|---|\n");
        report.ratios().forEach((name, value) -> md.append("| ").append(name).append(" | ")
                .append(value == null ? "—" : String.format(Locale.ROOT, "%.3f", value)).append(" |\n"));
        md.append(String.format(Locale.ROOT, "%nEffects executed twice: %d (%s).%n", report.duplicates(),
                report.passed() ? "pass" : "FAIL"));
        return md.toString();
    }

    private static String rate(double perSecond) {
        return perSecond >= 100 ? String.format(Locale.ROOT, "%,.0f", perSecond) : String.format(Locale.ROOT, "%.1f", perSecond);
    }

    /** {@code getData 4.00, create 2.00, …}, most frequent first. */
    private static String byType(Map<String, Double> perUnit) {
        return perUnit.entrySet().stream()
                .filter(e -> e.getValue() >= 0.005)
                .sorted(Map.Entry.<String, Double>comparingByValue(Comparator.reverseOrder()))
                .map(e -> String.format(Locale.ROOT, "%s %.2f", e.getKey(), e.getValue()))
                .collect(Collectors.joining(", "));
    }
}
