package dev.oncegate.bench;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Runs one trial of one arm on one workload and turns what the server counted into per-unit
 * costs. A trial runs for a fixed time (an attempt under way at the deadline finishes); then
 * the runner waits until the server is idle, so that what clients do in the background after
 * their last decision (a latch node deleted after its close, say) is charged to this trial
 * and not to the next arm's.
 *
 * <p>Not thread-safe: one trial at a time, from the run's main thread.
 */
record TrialRunner(BenchServer server, Fleet fleet, Keys keys, LogTally logs) {

    /** How long the server must be idle before a trial's costs are read. */
    static final Duration QUIET = Duration.ofMillis(100);
    private static final Duration SETTLE_AT_MOST = Duration.ofSeconds(10);

    /**
     * Runs a trial.
     *
     * @param consumed keys whose effect already ran in this arm (for {@link Workload.Shape#CONSUMED})
     */
    Report.Trial run(Workload workload, Arm arm, Ledger ledger, List<String> consumed, int trial, Duration length)
            throws InterruptedException {
        int n = workload.workers();
        List<Tally> tallies = new ArrayList<>();
        for (int w = 0; w < n; w++) {
            tallies.add(new Tally());
        }
        Tally perKey = new Tally();
        if (workload.shape() == Workload.Shape.CONSUMED) {
            server.reapContainers(); // late contenders come after the server reaped the keys' containers
        }
        long duplicatesBefore = ledger.duplicates();
        LogTally.Mark logMark = logs.mark();
        ServerSample before = server.sample();
        long started = System.nanoTime();
        long deadline = started + length.toNanos();
        long units = switch (workload.shape()) {
            case NEW_KEYS -> newKeys(arm, ledger, tallies, deadline);
            case CONSUMED -> consumed(arm, ledger, consumed, tallies, deadline);
            case CONTENDED -> contended(arm, ledger, tallies, perKey, deadline);
        };
        double seconds = (System.nanoTime() - started) / 1e9;
        server.settle(QUIET, SETTLE_AT_MOST);
        ServerSample cost = server.sample().minus(before);
        LogTally.Counts logged = logs.since(logMark);

        Tally all = Tally.merge(tallies);
        Report.Latency latency = workload.shape() == Workload.Shape.CONTENDED ? perKey.latency() : all.latency();
        Report.Verdicts verdicts = new Report.Verdicts(all.count(Verdict.EXECUTED), all.count(Verdict.STOPPED),
                all.count(Verdict.UNDECIDED), ledger.duplicates() - duplicatesBefore, all.firstError());
        return new Report.Trial(trial, units, seconds, units / seconds, latency, verdicts, perUnit(cost, logged, units));
    }

    /** Every worker takes fresh keys until the deadline. */
    private long newKeys(Arm arm, Ledger ledger, List<Tally> tallies, long deadline) throws InterruptedException {
        Arm.KeySource source = () -> System.nanoTime() < deadline ? keys.fresh() : null;
        fleet.onWorkers(tallies.size(), w -> arm.stream(w, source, ledger, tallies.get(w)));
        return attempts(tallies);
    }

    /**
     * The workers take the consumed keys in turn, each key once, until the deadline or until
     * every key was met: every attempt is a late contender's first since the containers were reaped.
     */
    private long consumed(Arm arm, Ledger ledger, List<String> consumed, List<Tally> tallies, long deadline)
            throws InterruptedException {
        AtomicInteger next = new AtomicInteger();
        fleet.onWorkers(tallies.size(), w -> {
            Tally tally = tallies.get(w);
            for (int i = next.getAndIncrement(); i < consumed.size() && System.nanoTime() < deadline; i = next.getAndIncrement()) {
                String key = consumed.get(i);
                tally.time(() -> arm.lateAttempt(w, key, ledger));
            }
        });
        return attempts(tallies);
    }

    /**
     * Fresh keys one after another until the deadline (at least one): every worker contends for
     * the key at once; the key is done when its last contender has its decision.
     */
    private long contended(Arm arm, Ledger ledger, List<Tally> tallies, Tally perKey, long deadline)
            throws InterruptedException {
        int n = tallies.size();
        long done = 0;
        do {
            String key = keys.fresh();
            AtomicLong released = new AtomicLong();
            long[] decided = new long[n];
            CyclicBarrier start = new CyclicBarrier(n, () -> released.set(System.nanoTime()));
            fleet.onWorkers(n, w -> {
                start.await();
                Tally tally = tallies.get(w);
                try {
                    tally.record(arm.attempt(w, key, ledger), -1);
                } catch (InterruptedException e) {
                    throw e;
                } catch (Exception e) {
                    tally.error(e);
                }
                decided[w] = System.nanoTime();
            });
            long last = 0;
            for (long t : decided) {
                last = Math.max(last, t);
            }
            perKey.latency(last - released.get());
            done++;
        } while (System.nanoTime() < deadline);
        return done;
    }

    /**
     * Makes {@code count} effects happen in {@code arm} before any trial, spread over the last
     * {@code workers} workers of the fleet (not the ones that contend later), and returns their keys.
     *
     * @throws IllegalStateException when an effect did not execute
     */
    List<String> consume(Arm arm, Ledger ledger, int count, int workers) throws InterruptedException {
        List<String> made = new ArrayList<>();
        for (int i = 0; i < count; i++) {
            made.add(keys.fresh());
        }
        int first = fleet.size() - workers;
        fleet.onWorkers(workers, i -> {
            int w = first + i;
            Tally mine = new Tally();
            for (int k = i; k < count; k += workers) {
                String key = made.get(k);
                mine.time(() -> arm.attempt(w, key, ledger));
            }
            long missed = mine.count(Verdict.STOPPED) + mine.count(Verdict.UNDECIDED);
            if (missed > 0) {
                throw new IllegalStateException(arm.name() + ": " + missed + " effects did not execute while preparing"
                        + " consumed keys (" + mine.firstError() + ")");
            }
        });
        server.settle(QUIET, SETTLE_AT_MOST);
        return List.copyOf(made);
    }

    private static long attempts(List<Tally> tallies) {
        long n = 0;
        for (Tally t : tallies) {
            n += t.count(Verdict.EXECUTED) + t.count(Verdict.STOPPED) + t.count(Verdict.UNDECIDED);
        }
        return n;
    }

    private static Report.Costs perUnit(ServerSample cost, LogTally.Counts logged, long units) {
        double u = Math.max(1, units);
        return new Report.Costs(cost.zxid() / u, cost.workRequests() / u, perUnit(cost.requests(), u),
                cost.workOperations() / u, perUnit(cost.operations(), u), cost.watchesFired() / u,
                cost.fsyncs() / u, cost.threadsStarted() / u, cost.serverCpuNanos() / 1000.0 / u,
                cost.processCpuNanos() / 1000.0 / u,
                logged == null ? null : logged.warn() / u, logged == null ? null : logged.error() / u);
    }

    /** Counts by type, pings left out, per unit. */
    private static Map<String, Double> perUnit(Map<String, Long> byType, double units) {
        Map<String, Double> out = new TreeMap<>();
        byType.forEach((type, count) -> {
            if (!type.equals(ServerSample.PING)) {
                out.put(type, count / units);
            }
        });
        return out;
    }
}
