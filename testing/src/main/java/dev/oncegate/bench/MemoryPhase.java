package dev.oncegate.bench;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The memory phase: many keys through one arm into a fresh subtree, then what stays behind per
 * consumed key once the server reaped the containers and the JVM collected its garbage —
 * znodes, heap, snapshot bytes. Before each arm the leftovers of earlier phases are reaped
 * too, so each arm's figures are its own growth.
 *
 * <p>Not thread-safe: one measurement at a time, from the run's main thread.
 */
record MemoryPhase(BenchServer server, Fleet fleet, Keys keys, Progress progress) {

    private static final Duration SETTLE_AT_MOST = Duration.ofMinutes(1);

    /**
     * Runs {@code count} fresh keys through {@code arm} with {@code workers} workers and measures
     * what they left behind.
     */
    Report.MemoryResult measure(Arm arm, long count, int workers) throws Exception {
        arm.prepare(workers);
        server.settle(TrialRunner.QUIET, SETTLE_AT_MOST);
        server.reapContainers();
        BenchServer.Footprint before = server.footprint();

        Ledger ledger = new Ledger();
        List<Tally> tallies = new ArrayList<>();
        for (int w = 0; w < workers; w++) {
            tallies.add(new Tally());
        }
        AtomicLong handedOut = new AtomicLong();
        long tenth = Math.max(1, count / 10);
        Arm.KeySource source = () -> {
            long n = handedOut.getAndIncrement();
            if (n >= count) {
                return null;
            }
            if (n > 0 && n % tenth == 0) {
                progress.note("memory " + arm.name() + ": " + n + " of " + count + " keys");
            }
            return keys.fresh();
        };
        long started = System.nanoTime();
        fleet.onWorkers(workers, w -> arm.stream(w, source, ledger, tallies.get(w)));
        double seconds = (System.nanoTime() - started) / 1e9;
        Tally all = Tally.merge(tallies);
        tallies.clear();
        long undecided = all.count(Verdict.UNDECIDED) + all.count(Verdict.STOPPED);
        long duplicates = ledger.duplicates();
        ledger.forgetEffects(); // so that the heap measured holds nothing of the benchmark's own per key

        server.settle(TrialRunner.QUIET, SETTLE_AT_MOST);
        long reaped = server.reapContainers();
        BenchServer.Footprint after = server.footprint();
        double k = count;
        return new Report.MemoryResult(arm.name(), count, seconds, (after.znodes() - before.znodes()) / k,
                (after.heapBytes() - before.heapBytes()) / k, (after.snapshotBytes() - before.snapshotBytes()) / k,
                (after.dataBytes() - before.dataBytes()) / k, reaped / k, undecided, duplicates);
    }
}
