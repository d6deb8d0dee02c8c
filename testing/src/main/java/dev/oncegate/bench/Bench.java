package dev.oncegate.bench;

import java.io.IOException;
import java.io.InputStream;
import java.io.PrintStream;
import java.lang.management.ManagementFactory;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Properties;

/**
 * One benchmark run, start to end: a server, a fleet of sessions, the arms; consumed keys made
 * beforehand; one untimed warm-up per arm and workload; then the trials in rounds — every round
 * runs every workload, and within a workload every arm, in the same order (raw, raw_async64,
 * floor, naive, oncegate, oncegate_shared: A B C D A B C D …), so that a machine's changing load
 * falls on every arm alike; last, the memory phase. Everything runs against one real server in this process.
 * With {@code --startup DIR}, first the startup phase ({@link StartupPhase}); with {@code --startup-only}, only it.
 * With {@code --backlog}, then the backlog phase ({@link BacklogPhase}); with {@code --backlog-only}, only it.
 *
 * <p>Not thread-safe: a run belongs to the thread that calls {@link #run}.
 *
 * @param logs counts what the libraries logged in each trial
 * @param err  where progress goes
 */
record Bench(Options options, LogTally logs, PrintStream err) {

    private static final String ORDER = "rounds of workloads, each with its arms in turn";
    /** Workers of the memory phase: as in the new-keys workload with most workers. */
    private static final int MEMORY_WORKERS = Workload.NEW_KEYS_16.workers();

    /** Runs the benchmark; progress goes to {@code err}. */
    Report run() throws Exception {
        Instant started = Instant.now().truncatedTo(ChronoUnit.SECONDS);
        long t0 = System.nanoTime();
        double loadAtStart = loadAverage();
        try (BenchServer server = BenchServer.start(); Fleet fleet = Fleet.open(server.connectString(), Workload.maxWorkers())) {
            Keys keys = new Keys(options.seed());
            Stage stage = stage(server, fleet, keys);
            stage.progress().note("seed " + options.seed() + " (repeat with --seed " + options.seed() + "); server "
                    + server.connectString() + ", data in " + server.dataDir() + ", fsync on; " + fleet.size() + " sessions");
            Report.Startup startup = options.startup() == null ? null
                    : new StartupPhase(options.startup(), server.connectString(), options.startupRuns(), stage.progress()).measure();
            Report.Backlog backlog = options.backlogKeys() == 0 ? null
                    : new BacklogPhase(server, fleet, stage.runner(), stage.progress()).measure(options.backlogSmall(),
                            options.backlogKeys());
            if (options.startupOnly() || options.backlogOnly()) {
                Ratios ratios = Ratios.of(List.of(), List.of(), null, startup);
                ratios.backlog(backlog);
                return new Report(1, "oncegate-bench", started.toString(), (System.nanoTime() - t0) / 1e9, options.seed(),
                        options.quick(), environment(server, loadAtStart), settings(), List.of(), List.of(), 0, true,
                        ratios.values(), ratios.notes(), null, options.startupOnly() ? "--startup-only" : "--backlog-only",
                        startup, backlog);
            }
            Map<Arm, List<String>> consumed = consumeBeforehand(stage);
            if (!options.warmup().isZero()) {
                stage.round(consumed, 0, options.warmup(), (w, arm, t) ->
                        stage.progress().step("warm-up " + w.id() + " " + arm.name() + ": " + describe(t, w)));
            }
            Map<Workload, Map<Arm, List<Report.Trial>>> trials = new LinkedHashMap<>();
            for (int round = 1; round <= options.trials(); round++) {
                int r = round;
                stage.round(consumed, round, options.trial(), (w, arm, t) -> {
                    trials.computeIfAbsent(w, k -> new LinkedHashMap<>()).computeIfAbsent(arm, k -> new ArrayList<>()).add(t);
                    stage.progress().step(w.id() + " " + arm.name() + " trial " + r + "/" + options.trials() + ": " + describe(t, w));
                });
            }
            List<Report.MemoryResult> memory = memory(new MemoryPhase(server, fleet, keys, stage.progress()), fleet);
            SidecarPhase sidecarPhase = new SidecarPhase(options, server, fleet, stage.progress());
            String skipped = sidecarPhase.missing();
            Report.SidecarResult sidecar = null;
            if (skipped == null) {
                sidecar = sidecarPhase.run();
            } else {
                stage.progress().note("sidecar phase skipped: " + skipped);
            }
            long duplicates = stage.ledgers().values().stream().mapToLong(Ledger::duplicates).sum()
                    + memory.stream().mapToLong(Report.MemoryResult::duplicates).sum();
            List<Report.WorkloadResult> workloads = workloadResults(trials);
            Ratios ratios = Ratios.of(workloads, memory, sidecar, startup);
            ratios.backlog(backlog);
            return new Report(1, "oncegate-bench", started.toString(), (System.nanoTime() - t0) / 1e9, options.seed(),
                    options.quick(), environment(server, loadAtStart), settings(), workloads, List.copyOf(memory),
                    duplicates, duplicates == 0, ratios.values(), ratios.notes(), sidecar, skipped, startup, backlog);
        }
    }

    /** The timed arms, prepared, each with its ledger; the runner; the progress line. */
    private Stage stage(BenchServer server, Fleet fleet, Keys keys) throws Exception {
        List<Arm> arms = List.of(RawArm.sync(fleet, "/bench/raw"), RawArm.async(fleet, "/bench/raw-async", 64),
                new FloorArm(fleet, "/bench/floor"), new NaiveArm(fleet, "/bench/naive"),
                OncegateArm.perWorker(fleet, "/bench/oncegate"), OncegateArm.shared(fleet, "/bench/oncegate-shared"));
        Map<Arm, Ledger> ledgers = new LinkedHashMap<>();
        int pairs = 0;
        for (Arm arm : arms) {
            arm.prepare(fleet.size());
            ledgers.put(arm, new Ledger());
            for (Workload w : Workload.values()) {
                pairs += arm.runs(w) ? 1 : 0;
            }
        }
        int rounds = options.trials() + (options.warmup().isZero() ? 0 : 1);
        return new Stage(arms, ledgers, new TrialRunner(server, fleet, keys, logs),
                new Progress(err, pairs * rounds + 5));
    }

    /** Makes the consumed keys of every arm that has a consumed workload, before any trial. */
    private Map<Arm, List<String>> consumeBeforehand(Stage stage) throws InterruptedException {
        Map<Arm, List<String>> consumed = new LinkedHashMap<>();
        for (Arm arm : stage.arms()) {
            if (arm.runs(Workload.CONSUMED_16)) {
                consumed.put(arm, stage.runner().consume(arm, stage.ledgers().get(arm), options.consumedKeys(),
                        Workload.CONSUMED_16.workers()));
            }
        }
        stage.progress().note("consumed " + options.consumedKeys() + " keys beforehand in each of "
                + consumed.keySet().stream().map(Arm::name).toList());
        return consumed;
    }

    /** The memory phase: oncegate, then the naive gate, each into a subtree of its own. */
    private List<Report.MemoryResult> memory(MemoryPhase phase, Fleet fleet) throws Exception {
        List<Report.MemoryResult> memory = new ArrayList<>();
        for (Arm arm : List.of(OncegateArm.perWorker(fleet, "/bench/memory/oncegate"), new NaiveArm(fleet, "/bench/memory/naive"))) {
            Report.MemoryResult m = phase.measure(arm, options.memoryKeys(), MEMORY_WORKERS);
            memory.add(m);
            phase.progress().step(String.format(Locale.ROOT, "memory %s: %d keys, %.2f znodes, %.0f heap bytes,"
                    + " %.0f snapshot bytes per key", m.arm(), m.keys(), m.znodesPerKey(), m.heapBytesPerKey(),
                    m.snapshotBytesPerKey()));
        }
        return memory;
    }

    private static List<Report.WorkloadResult> workloadResults(Map<Workload, Map<Arm, List<Report.Trial>>> trials) {
        List<Report.WorkloadResult> workloads = new ArrayList<>();
        trials.forEach((w, byArm) -> {
            List<Report.ArmResult> results = new ArrayList<>();
            byArm.forEach((arm, list) -> results.add(new Report.ArmResult(arm.name(), Report.Summary.of(list), List.copyOf(list))));
            workloads.add(new Report.WorkloadResult(w.id(), w.unit(), w.workers(), w.description(), List.copyOf(results)));
        });
        return List.copyOf(workloads);
    }

    private Report.Environment environment(BenchServer server, double loadAtStart) {
        return new Report.Environment(System.getProperty("java.vendor") + " " + System.getProperty("java.version"),
                System.getProperty("os.name") + " " + System.getProperty("os.version") + " " + System.getProperty("os.arch"),
                Runtime.getRuntime().availableProcessors(), Runtime.getRuntime().maxMemory(),
                org.apache.zookeeper.Version.getFullVersion(), mavenVersion("org.apache.curator", "curator-framework"),
                true, server.sample().fsyncs(), server.dataDir().toString(), List.of(loadAtStart, loadAverage()));
    }

    private Report.Settings settings() {
        return new Report.Settings(options.trials(), options.trial().toMillis() / 1000.0,
                options.warmup().toMillis() / 1000.0, options.consumedKeys(), options.memoryKeys(),
                (int) Fleet.SESSION.toMillis(), ORDER);
    }

    /**
     * The timed part of a run: its arms, their ledgers, the trial runner, the progress line.
     * Not thread-safe, as the run.
     */
    private record Stage(List<Arm> arms, Map<Arm, Ledger> ledgers, TrialRunner runner, Progress progress) {

        /** One trial of every arm on every workload it takes part in: workload by workload, arm by arm. */
        void round(Map<Arm, List<String>> consumed, int round, Duration length, TrialSink sink) throws InterruptedException {
            for (Workload w : Workload.values()) {
                for (Arm arm : arms) {
                    if (arm.runs(w)) {
                        sink.accept(w, arm, runner.run(w, arm, ledgers.get(arm), consumed.get(arm), round, length));
                    }
                }
            }
        }
    }

    /** Where {@link Stage#round} hands each trial. */
    @FunctionalInterface
    private interface TrialSink {
        void accept(Workload workload, Arm arm, Report.Trial trial);
    }

    private static String describe(Report.Trial t, Workload w) {
        String line = String.format(Locale.ROOT, "%.1f %s/s, %.2f requests and %.2f txns per %s",
                t.perSecond(), w.unit(), t.perUnit().requests(), t.perUnit().txns(), w.unit().replaceAll("s$", ""));
        if (t.verdicts().undecided() > 0) {
            line += ", " + t.verdicts().undecided() + " undecided (" + t.verdicts().firstError() + ")";
        }
        if (t.verdicts().duplicates() > 0) {
            line += ", " + t.verdicts().duplicates() + " EFFECTS EXECUTED TWICE";
        }
        return line;
    }

    private static double loadAverage() {
        return Math.round(ManagementFactory.getOperatingSystemMXBean().getSystemLoadAverage() * 100) / 100.0;
    }

    /** A library's version from the pom.properties Maven puts in its jar (kept by the shaded jar). */
    private static String mavenVersion(String group, String artifact) {
        String resource = "/META-INF/maven/" + group + "/" + artifact + "/pom.properties";
        try (InputStream in = Bench.class.getResourceAsStream(resource)) {
            if (in == null) {
                return "unknown";
            }
            Properties p = new Properties();
            p.load(in);
            return p.getProperty("version", "unknown");
        } catch (IOException e) {
            return "unknown";
        }
    }
}
