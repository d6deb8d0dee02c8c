package dev.oncegate.bench;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.ToDoubleFunction;

/**
 * The same-run comparisons issue 9 tracks (and issue 15's shared gate), from the medians over the trials (and the memory
 * phase). A ratio is null when an arm or workload it needs did not run.
 *
 * <p>Stateless; thread-safe.
 */
final class Ratios {

    /** The ratios every report carries (and the quick run's test checks). */
    static final List<String> REQUIRED = List.of(
            "oncegate_vs_naive_new_keys_16", "oncegate_vs_naive_consumed", "oncegate_vs_floor_new_keys_16",
            "oncegate_txns_per_effect", "oncegate_requests_per_effect", "oncegate_requests_per_consumed_stop",
            "oncegate_heap_bytes_per_consumed_key", "oncegate_znodes_per_consumed_key", "oncegate_vs_naive_contended_16",
            "oncegate_shared_vs_oncegate_new_keys_16");

    private final List<Report.WorkloadResult> workloads;
    private final List<Report.MemoryResult> memory;
    private final Map<String, Double> values = new LinkedHashMap<>();
    private final Map<String, String> notes = new LinkedHashMap<>();

    private Ratios(List<Report.WorkloadResult> workloads, List<Report.MemoryResult> memory) {
        this.workloads = workloads;
        this.memory = memory;
    }

    /** Computes every ratio; the notes say where each comes from. */
    static Ratios of(List<Report.WorkloadResult> workloads, List<Report.MemoryResult> memory) {
        return of(workloads, memory, null, null);
    }

    /**
     * {@link #of(List, List)}, the sidecar phase's ratios (null when it was skipped) and the startup
     * phase's (null when it did not run).
     */
    static Ratios of(List<Report.WorkloadResult> workloads, List<Report.MemoryResult> memory, Report.SidecarResult sidecar,
                     Report.Startup startup) {
        Ratios r = new Ratios(workloads, memory);
        if (startup != null) {
            Report.StartupCommand runTrue = null;
            Report.StartupCommand minimum = null;
            for (Report.StartupCommand c : startup.commands()) {
                if (c.command().equals(StartupPhase.CURATOR_MINIMUM)) {
                    minimum = c;
                    r.put("startup_" + c.command() + "_vs_floor", c.vsFloor(), "startup phase: median wall time of a"
                            + " minimal Curator program doing the least a `run -- true` on Curator and a LeaderLatch must"
                            + " (connect, one read, create, LeaderLatch, lease CAS, two multis, `true`, close) over a bare"
                            + " `java -cp` hello-world's, " + startup.runs() + " runs each, interleaved");
                } else if (!c.command().equals("floor")) {
                    runTrue = c.command().equals("run_true") ? c : runTrue;
                    r.put("startup_" + c.command() + "_vs_floor", c.vsFloor(), "startup phase: median wall time of `oncegate "
                            + c.command().replace("run_true", "run -- true") + "` over a bare `java -cp` hello-world's, "
                            + startup.runs() + " runs each, interleaved (targets: key 1.5, run -- true 3)");
                }
            }
            if (runTrue != null && minimum != null) {
                r.put("startup_run_true_vs_curator_minimum", runTrue.ms().median() / minimum.ms().median(),
                        "startup phase: median wall time of `oncegate run -- true` over the minimal Curator program's"
                                + " (what oncegate adds to the least its fixed choices cost)");
            }
        }
        r.speed("oncegate_vs_naive_new_keys_16", Workload.NEW_KEYS_16, "naive");
        r.speed("oncegate_vs_naive_consumed", Workload.CONSUMED_16, "naive");
        r.speed("oncegate_vs_floor_new_keys_16", Workload.NEW_KEYS_16, "floor");
        r.cost("oncegate_txns_per_effect", Workload.NEW_KEYS_1, "oncegate", s -> s.txns().median());
        r.cost("oncegate_requests_per_effect", Workload.NEW_KEYS_1, "oncegate", s -> s.requests().median());
        r.cost("oncegate_requests_per_consumed_stop", Workload.CONSUMED_16, "oncegate", s -> s.requests().median());
        r.footprint("oncegate_heap_bytes_per_consumed_key", "oncegate", Report.MemoryResult::heapBytesPerKey);
        r.footprint("oncegate_znodes_per_consumed_key", "oncegate", Report.MemoryResult::znodesPerKey);
        r.speed("oncegate_vs_naive_contended_16", Workload.CONTENDED_16, "naive");
        r.speed("oncegate_vs_naive_contended_64", Workload.CONTENDED_64, "naive");
        r.speed("oncegate_vs_naive_new_keys_1", Workload.NEW_KEYS_1, "naive");
        r.cost("oncegate_txns_per_consumed_stop", Workload.CONSUMED_16, "oncegate", s -> s.txns().median());
        r.cost("oncegate_threads_per_effect", Workload.NEW_KEYS_1, "oncegate", s -> s.threadsCreated().median());
        r.cost("oncegate_watch_notifications_per_contended_key_16", Workload.CONTENDED_16, "oncegate",
                s -> s.watchNotifications().median());
        r.cost("oncegate_error_logs_per_contended_key_16", Workload.CONTENDED_16, "oncegate", s -> s.errorLogs().median());
        r.footprint("oncegate_snapshot_bytes_per_consumed_key", "oncegate", Report.MemoryResult::snapshotBytesPerKey);
        r.cost("oncegate_operations_per_effect", Workload.NEW_KEYS_1, "oncegate", s -> s.operations().median());
        r.cost("oncegate_server_cpu_us_per_effect_16", Workload.NEW_KEYS_16, "oncegate", s -> s.serverCpuMicros().median());
        r.cost("oncegate_all_cpu_us_per_effect_16", Workload.NEW_KEYS_16, "oncegate", s -> s.processCpuMicros().median());
        r.cost("naive_txns_per_effect", Workload.NEW_KEYS_1, "naive", s -> s.txns().median());
        r.cost("naive_requests_per_effect", Workload.NEW_KEYS_1, "naive", s -> s.requests().median());
        r.cost("naive_requests_per_consumed_stop", Workload.CONSUMED_16, "naive", s -> s.requests().median());
        r.cost("naive_operations_per_effect", Workload.NEW_KEYS_1, "naive", s -> s.operations().median());
        r.cost("naive_server_cpu_us_per_effect_16", Workload.NEW_KEYS_16, "naive", s -> s.serverCpuMicros().median());
        r.cost("naive_all_cpu_us_per_effect_16", Workload.NEW_KEYS_16, "naive", s -> s.processCpuMicros().median());
        r.footprint("naive_heap_bytes_per_consumed_key", "naive", Report.MemoryResult::heapBytesPerKey);
        r.footprint("naive_znodes_per_consumed_key", "naive", Report.MemoryResult::znodesPerKey);
        r.speed("oncegate_shared_vs_oncegate_new_keys_16", Workload.NEW_KEYS_16, "oncegate_shared", "oncegate");
        r.cost("oncegate_shared_all_cpu_us_per_effect_16", Workload.NEW_KEYS_16, "oncegate_shared",
                s -> s.processCpuMicros().median());
        r.sidecar(sidecar);
        return r;
    }

    /** Issue 18: Python through the sidecar against the library's 16 threads, and against `oncegate run`. */
    private void sidecar(Report.SidecarResult s) {
        for (String arm : List.of("oncegate_shared", "oncegate")) {
            Report.ArmResult library = Report.arms(workloads, Workload.NEW_KEYS_16).get(arm);
            put("sidecar_python_vs_" + arm + "_new_keys_16", s == null || library == null
                            || library.summary().perSecond().median() == 0 ? null
                            : s.perSecond() / library.summary().perSecond().median(),
                    "sidecar phase: effects/s of 16 Python processes through oncegate sidecar on new keys (enter, cross,"
                            + " outcome), over the median effects/s of " + arm + " (16 threads in this JVM) on new_keys_16");
            put("sidecar_python_enter_and_cross_vs_" + arm + "_new_keys_16", s == null || library == null
                            || library.summary().perSecond().median() == 0 ? null
                            : s.twoCallPerSecond() / library.summary().perSecond().median(),
                    "sidecar phase: the same with enter-and-cross (two calls per effect, for agents with no checkpoint),"
                            + " over the median effects/s of " + arm + " on new_keys_16");
        }
        put("run_vs_sidecar_ms_per_effect", s == null || s.oneClientMeanMs() == 0 ? null : s.runMeanMs() / s.oneClientMeanMs(),
                "sidecar phase: mean wall time of `oncegate run -- true` per effect over one Python client's mean per effect");
        put("sidecar_heap_bytes_per_open_handle", s == null ? null : s.heapBytesPerHandle(),
                "sidecar phase: the sidecar's heap after a full GC with the open handles, less without, per handle");
        put("sidecar_threads_per_open_handle", s == null ? null : s.threadsPerHandle(),
                "sidecar phase: the sidecar's threads with the open handles, less without, per handle");
    }

    /** Issue 17 §5: the backlog questions at the large size over the small one (targets: 2 or less). */
    void backlog(Report.Backlog b) {
        if (b == null || b.sizes().size() != 2) {
            return;
        }
        Report.BacklogSize small = b.sizes().get(0);
        Report.BacklogSize large = b.sizes().get(1);
        String sizes = String.format(java.util.Locale.ROOT, "%,d consumed keys over %,d, the same %d-key backlog in each",
                large.consumedKeys(), small.consumedKeys(), b.backlogKeys());
        put("backlog_query_100k_vs_1k", small.queryMs().median() == 0 ? null : large.queryMs().median() / small.queryMs().median(),
                "backlog phase: median wall time of the backlog query (list --state send_status_unknown, from the backlog"
                        + " index) at " + sizes + " (target 2)");
        put("exporter_scan_100k_vs_1k", small.scanMs().median() == 0 ? null : large.scanMs().median() / small.scanMs().median(),
                "backlog phase: median wall time of one exporter scan (the backlog index) at " + sizes + " (target 2)");
        put("backlog_query_requests_100k_vs_1k", small.queryRequests().median() == 0 ? null
                : large.queryRequests().median() / small.queryRequests().median(),
                "backlog phase: requests the server received for the backlog query at " + sizes);
        put("backlog_walk_keys_per_second_100k", large.walkKeysPerSecond(),
                "backlog phase: keys per second of one full walk of every key (the exporter's walk) at the large size");
    }

    Map<String, Double> values() {
        return values;
    }

    Map<String, String> notes() {
        return notes;
    }

    /** oncegate's median units/s over {@code other}'s on one workload. */
    private void speed(String name, Workload workload, String other) {
        speed(name, workload, "oncegate", other);
    }

    /** {@code arm}'s median units/s over {@code other}'s on one workload. */
    private void speed(String name, Workload workload, String arm, String other) {
        Report.ArmResult og = Report.arms(workloads, workload).get(arm);
        Report.ArmResult base = Report.arms(workloads, workload).get(other);
        Double ratio = og == null || base == null || base.summary().perSecond().median() == 0 ? null
                : og.summary().perSecond().median() / base.summary().perSecond().median();
        put(name, ratio, workload.id() + ": median " + workload.unit() + "/s of " + arm + " over " + other);
    }

    /** A median cost per unit of one arm on one workload. */
    private void cost(String name, Workload workload, String arm, ToDoubleFunction<Report.Summary> figure) {
        Report.ArmResult result = Report.arms(workloads, workload).get(arm);
        put(name, result == null ? null : figure.applyAsDouble(result.summary()),
                workload.id() + ": median over the trials of " + arm + ", per " + workload.unit().replaceAll("s$", ""));
    }

    /** A figure of one arm's memory phase. */
    private void footprint(String name, String arm, ToDoubleFunction<Report.MemoryResult> figure) {
        Report.MemoryResult result = memory.stream().filter(m -> m.arm().equals(arm)).findFirst().orElse(null);
        put(name, result == null ? null : figure.applyAsDouble(result),
                "memory phase: " + arm + ", per consumed key, after container reaping and GC");
    }

    private void put(String name, Double value, String note) {
        values.put(name, value == null ? null : Math.round(value * 1000) / 1000.0);
        notes.put(name, note);
    }
}
