package dev.oncegate.testing;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;

import org.junit.jupiter.api.Test;

/**
 * The bounded chaos run of the default suite: 10 to 25 s of faults per run (the worker processes'
 * kill phase keeps its 25 s: the JVMs take seconds to start), 60 s each under
 * {@code mvn -B verify -Plong} ({@link LongRuns}). Replay a failure with
 * {@code -Doncegate.chaos.seed=N}; the long soak is the {@code soak} profile ({@code mvn -B verify -Psoak}).
 */
class ChaosSuiteTest {

    static long seed() {
        String s = System.getProperty("oncegate.chaos.seed");
        return s == null || s.isBlank() ? new java.util.Random().nextLong() : Long.parseLong(s);
    }

    /** {@code seconds} of faults, a minute under {@code -Plong}. */
    private static Duration faults(int seconds) {
        return LongRuns.of(Duration.ofSeconds(seconds), Duration.ofSeconds(60));
    }

    @Test
    void standaloneServer_underRandomFaults_deliversEveryEffectAtMostOnce() throws Exception {
        long seed = seed();
        ChaosRun.Report report = runAtMostOnce("chaos", ChaosRun.builder().seed(seed).workers(6).effects(30).contenders(4)
                .duration(faults(10)).faultRate(1.0).build());

        assertThat(report.verdict().deliveries()).as("seed " + seed).isLessThanOrEqualTo(30).isPositive();
    }

    @Test
    void ensemble_withLeaderKillsAndWholeEnsembleRestarts_deliversEveryEffectAtMostOnce() throws Exception {
        runAtMostOnce("ensemble chaos", ChaosRun.builder().seed(seed()).ensemble(true).workers(6).effects(24).contenders(4)
                .duration(faults(12)).faultRate(0.8).build());
    }

    /**
     * Runs {@code config}, printing its seed, progress and report under {@code label}, and checks
     * the verdict every in-process chaos run must reach: no violation, no duplicate, nothing
     * undecided, and faults injected.
     */
    private static ChaosRun.Report runAtMostOnce(String label, ChaosRun.Config config) throws InterruptedException {
        long seed = config.seed();
        System.out.println(label + " seed " + seed + " (replay with -Doncegate.chaos.seed=" + seed + ")");
        ChaosRun.Report report = ChaosRun.run(config, p -> System.out.println(label + " progress " + p));

        System.out.println(label + " report " + report);
        assertThat(report.verdict().violations()).as("seed " + seed).isEmpty();
        assertThat(report.verdict().duplicates()).as("seed " + seed).isZero();
        assertThat(report.verdict().undecided()).as("seed " + seed).isZero();
        assertThat(report.totalFaults()).as("seed " + seed).isPositive();
        return report;
    }

    @Test
    void workerProcesses_sigkilledAtRandomPoints_neverDeliverTwice() throws Exception {
        long seed = seed();
        System.out.println("process chaos seed " + seed + " (replay with -Doncegate.chaos.seed=" + seed + ")");
        // the kill phase must outlast the workers' JVM start, which a slow machine stretches: scaled
        ProcessChaosRun.Config config = new ProcessChaosRun.Config(3, 12, 3, Timing.scaled(faults(25)), 0.15, seed,
                Duration.ofSeconds(90));

        ProcessChaosRun.Report report = ProcessChaosRun.run(config);

        System.out.println("process chaos report " + report);
        assertThat(report.verdict().violations()).as("seed " + seed).isEmpty();
        assertThat(report.verdict().duplicates()).as("seed " + seed).isZero();
        assertThat(report.verdict().undecided()).as("seed " + seed).isZero();
        assertThat(report.killsByPhase().values().stream().mapToInt(Integer::intValue).sum()).as("seed " + seed).isPositive();
    }
}
