package dev.oncegate.bench;

import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.function.Function;
import java.util.function.ToDoubleFunction;

/**
 * A benchmark run's report, as written to JSON (property names in snake_case) and rendered as
 * Markdown. Every cost is per unit of the workload (an effect, a stop, or a key); every
 * summary is over the trials of one arm: median, min and max.
 *
 * <p>Immutable records; thread-safe.
 *
 * @param schema       version of this layout
 * @param passed       false when any arm executed an effect twice
 * @param duplicates   effects executed more than once, over all arms and phases
 * @param ratios       the same-run comparisons issue 9 tracks (null where an arm did not run)
 * @param ratioNotes   where each ratio comes from
 * @param sidecar      the sidecar phase (issue 18), or null when it was skipped
 * @param sidecarSkipped why the sidecar phase was skipped, or null
 * @param startup      the startup phase, or null when it did not run
 */
record Report(int schema, String tool, String started, double wallSeconds, long seed, boolean quick,
              Environment environment, Settings settings, List<WorkloadResult> workloads, List<MemoryResult> memory,
              long duplicates, boolean passed, Map<String, Double> ratios, Map<String, String> ratioNotes,
              SidecarResult sidecar, String sidecarSkipped, Startup startup, Backlog backlog) {

    /**
     * The backlog phase ({@code --backlog}; null without it): the backlog questions at two sizes of the
     * keyspace, the same backlog in each ({@link BacklogPhase}).
     *
     * @param sizes       the small size, then the large one
     * @param backlogKeys keys in the backlog of each size
     * @param repeats     times each question was asked, interleaved
     * @param populatedBy how the consumed keys and the backlog were made
     */
    record Backlog(List<BacklogSize> sizes, int backlogKeys, int repeats, String populatedBy) {
    }

    /**
     * One size of the backlog phase.
     *
     * @param consumedKeys      keys consumed through the gate before the backlog was made
     * @param populateSeconds   how long making them took
     * @param walkedKeys        keys the full walk read
     * @param walkSeconds       how long it took
     * @param walkKeysPerSecond keys it read per second
     * @param indexMissing      index entries the walk found missing (the damaged key's aside: readers enter those)
     * @param indexStale        index entries the walk found stale
     * @param queryListed       keys the backlog query ({@code list --state send_status_unknown}) listed
     * @param queryMs           its wall milliseconds
     * @param queryRequests     requests the server received for it
     * @param scanListed        keys one exporter scan counted
     * @param scanMs            its wall milliseconds
     * @param scanRequests      requests the server received for it
     */
    record BacklogSize(int consumedKeys, double populateSeconds, long walkedKeys, double walkSeconds,
                       double walkKeysPerSecond, int indexMissing, int indexStale, int queryListed, Stat queryMs,
                       Stat queryRequests, int scanListed, Stat scanMs, Stat scanRequests) {
    }

    /**
     * The startup phase ({@code --startup DIR}; null without it): the distribution's commands
     * against a bare {@code java -cp DIR Hello}, wall clock from a process's start to its exit.
     *
     * @param distribution the unpacked distribution whose {@code bin/oncegate} ran
     * @param runs         runs of each command, interleaved
     * @param firstUseMs   the first {@code key}, which makes the class-data sharing archive
     * @param commands     floor, version, key, inspect, run_true, curator_minimum: milliseconds, and the median over the floor's
     */
    record Startup(String distribution, int runs, double firstUseMs, List<StartupCommand> commands) {
    }

    /** One command of the startup phase: its milliseconds over the runs, and its median over the floor's median. */
    record StartupCommand(String command, Stat ms, double vsFloor) {
    }

    /**
     * Where the run ran.
     *
     * @param fsync          whether the server's transaction log forces every commit to disk
     * @param fsyncsObserved fsyncs the server made during the whole run
     * @param loadAverage    the system's one-minute load average at the start and the end of the run
     */
    record Environment(String java, String os, int cpus, long maxHeapBytes, String zookeeper, String curator,
                       boolean fsync, long fsyncsObserved, String dataDir, List<Double> loadAverage) {
    }

    /** How the run was sized. */
    record Settings(int trials, double trialSeconds, double warmupSeconds, int consumedKeys, long memoryKeys,
                    int sessionTimeoutMs, String order) {
    }

    /** One workload, every arm that ran it. */
    record WorkloadResult(String workload, String unit, int workers, String description, List<ArmResult> arms) {
    }

    /** One arm on one workload: the summary over its trials, and each trial. */
    record ArmResult(String arm, Summary summary, List<Trial> trials) {
    }

    /**
     * One trial.
     *
     * @param units     effects, stops or keys done
     * @param seconds   from the first attempt to the last decision
     * @param perSecond units per second
     * @param perUnit   what each unit cost, counted at the server (and threads, in this JVM)
     */
    record Trial(int trial, long units, double seconds, double perSecond, Latency latency, Verdicts verdicts, Costs perUnit) {
    }

    /** Latency of one unit (for a contended key: until its last contender had its decision). */
    record Latency(long samples, double p50Ms, double p99Ms, double p999Ms, double maxMs) {
    }

    /** What the contenders of a trial came to; {@code firstError} is the first failure, if any. */
    record Verdicts(long executed, long stopped, long undecided, long duplicates, String firstError) {
    }

    /**
     * Costs per unit. {@code requests} excludes pings; {@code operations} counts each operation a
     * {@code multi} carries ({@code operationsByType} by type); {@code txns} counts every
     * transaction (failed conditional writes included) by the zxid's advance; {@code threadsCreated}
     * counts threads started in this JVM; {@code serverCpuMicros} is the CPU time of the server's
     * threads and {@code processCpuMicros} of the whole JVM (server, clients, harness); the log
     * counts are lines the libraries logged at WARN and ERROR (null when the run's log could not
     * be read).
     */
    record Costs(double txns, double requests, Map<String, Double> requestsByType, double operations,
                 Map<String, Double> operationsByType, double watchNotifications, double fsyncs, double threadsCreated,
                 double serverCpuMicros, double processCpuMicros, Double warnLogs, Double errorLogs) {
    }

    /** Median, min and max of one figure over the trials. */
    record Stat(double median, double min, double max) {

        static <T> Stat of(List<T> trials, ToDoubleFunction<T> figure) {
            double[] v = trials.stream().mapToDouble(figure).sorted().toArray();
            if (v.length == 0) {
                return new Stat(0, 0, 0);
            }
            double median = v.length % 2 == 1 ? v[v.length / 2] : (v[v.length / 2 - 1] + v[v.length / 2]) / 2;
            return new Stat(median, v[0], v[v.length - 1]);
        }
    }

    /** An arm's trials in one: medians, minima and maxima, and totals of what went wrong. */
    record Summary(Stat perSecond, Stat p50Ms, Stat p99Ms, Stat p999Ms, Stat txns, Stat requests,
                   Map<String, Double> requestsByType, Stat operations, Map<String, Double> operationsByType,
                   Stat watchNotifications, Stat threadsCreated, Stat fsyncs, Stat serverCpuMicros, Stat processCpuMicros,
                   Stat errorLogs, long undecided, long duplicates) {

        static Summary of(List<Trial> trials) {
            return new Summary(Stat.of(trials, Trial::perSecond), Stat.of(trials, t -> t.latency().p50Ms()),
                    Stat.of(trials, t -> t.latency().p99Ms()), Stat.of(trials, t -> t.latency().p999Ms()),
                    Stat.of(trials, t -> t.perUnit().txns()), Stat.of(trials, t -> t.perUnit().requests()),
                    medians(trials, Costs::requestsByType), Stat.of(trials, t -> t.perUnit().operations()),
                    medians(trials, Costs::operationsByType),
                    Stat.of(trials, t -> t.perUnit().watchNotifications()), Stat.of(trials, t -> t.perUnit().threadsCreated()),
                    Stat.of(trials, t -> t.perUnit().fsyncs()), Stat.of(trials, t -> t.perUnit().serverCpuMicros()),
                    Stat.of(trials, t -> t.perUnit().processCpuMicros()),
                    Stat.of(trials, t -> t.perUnit().errorLogs() == null ? 0 : t.perUnit().errorLogs()),
                    trials.stream().mapToLong(t -> t.verdicts().undecided()).sum(),
                    trials.stream().mapToLong(t -> t.verdicts().duplicates()).sum());
        }

        /** The median of each type's figure over the trials (0 in a trial without it). */
        private static Map<String, Double> medians(List<Trial> trials, Function<Costs, Map<String, Double>> byType) {
            Map<String, Double> medians = new TreeMap<>();
            TreeSet<String> types = new TreeSet<>();
            trials.forEach(t -> types.addAll(byType.apply(t.perUnit()).keySet()));
            for (String type : types) {
                medians.put(type, Stat.of(trials, t -> byType.apply(t.perUnit()).getOrDefault(type, 0.0)).median());
            }
            return medians;
        }
    }

    /**
     * An arm's permanent footprint: keys run through it into a fresh subtree, then containers
     * reaped and the heap collected.
     *
     * @param heapBytesPerKey     JVM heap growth per key (server and clients share this JVM; the
     *                            clients hold nothing per key)
     * @param dataBytesPerKey     growth of ZooKeeper's own estimate of path and data bytes
     * @param containersReapedPerKey containers (latch or lock parents) the server deleted per key
     */
    record MemoryResult(String arm, long keys, double seconds, double znodesPerKey, double heapBytesPerKey,
                        double snapshotBytesPerKey, double dataBytesPerKey, double containersReapedPerKey,
                        long undecided, long duplicates) {
    }

    /**
     * The sidecar phase ({@link SidecarPhase}): Python agents through {@code oncegate sidecar}, {@code oncegate run}
     * per effect, and the sidecar's footprint per open handle.
     *
     * @param skipped            always null here (see {@link Report#sidecarSkipped})
     * @param latency            per effect, from the agent's enter to its recorded outcome, over all clients
     * @param oneClientMeanMs    mean per effect of one client alone
     * @param runMeanMs          mean wall time of {@code oncegate run -- true} per effect, one after another
     * @param heapBytesPerHandle the sidecar's heap after a full GC, per open handle (against none open)
     * @param rssBytesPerHandle  its resident memory, per open handle
     * @param threadsPerHandle   its threads, per open handle
     * @param twoCallEffects     the same 16 clients with enter-and-cross (two calls per effect): effects
     * @param twoCallPerSecond   their effects/s
     * @param twoCallLatency     their per-effect latency
     * @param twoCallUndecided   their effects without a decision
     * @param twoCallOneClientMeanMs  one client alone with enter-and-cross: mean per effect
     * @param twoCallOneClientLatency its per-effect latency
     */
    record SidecarResult(String skipped, int clients, double seconds, long effects, double perSecond, Latency latency,
                         long undecided, String firstError, double oneClientMeanMs, Latency oneClientLatency,
                         int runEffects, double runMeanMs, int openHandles, double heapBytesPerHandle,
                         double rssBytesPerHandle, double threadsPerHandle, int threadsWithoutHandles,
                         int threadsWithHandles, long twoCallEffects, double twoCallPerSecond, Latency twoCallLatency,
                         long twoCallUndecided, double twoCallOneClientMeanMs, Latency twoCallOneClientLatency) {
    }

    /** The arm results of one workload, by arm name; empty when the workload did not run. */
    static Map<String, ArmResult> arms(List<WorkloadResult> workloads, Workload workload) {
        Map<String, ArmResult> arms = new TreeMap<>();
        workloads.stream().filter(w -> w.workload().equals(workload.id()))
                .forEach(w -> w.arms().forEach(a -> arms.put(a.arm(), a)));
        return arms;
    }
}
