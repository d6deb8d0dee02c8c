package dev.oncegate.bench;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;

import dev.oncegate.ActionResult;
import dev.oncegate.Attempt;
import dev.oncegate.Destination;
import dev.oncegate.EffectKey;
import dev.oncegate.Gate;
import dev.oncegate.Operator;
import dev.oncegate.ScopeState;

/**
 * The backlog phase (issue 17 §5): the operator's backlog questions at two sizes of the keyspace, side
 * by side in one run, with the same small backlog in each. Per size, a namespace of its own:
 * <ol>
 *   <li>its consumed keys, made through the real gate ({@link OncegateArm}, a gate per worker over its
 *       own session, {@value #WORKERS} workers at once): every record the protocol writes, index
 *       entries included;</li>
 *   <li>the same backlog of {@value #BACKLOG} keys: 3 armed without an outcome (their executors held
 *       inside their actions until the phase ends), 3 {@code send_status_unknown}, 3 delivered with an
 *       unused redelivery authorization, and 1 delivered whose outcome record was then damaged;</li>
 *   <li>one full walk of every key ({@link Operator#checkIndex}, what the exporter's walk runs), timed:
 *       keys per second; it also enters the damaged key in the index, as the exporter's walk would;</li>
 *   <li>once untimed, then {@value #REPEATS} times, the sizes in turn: the backlog query ({@link Operator#backlog} for
 *       {@code send_status_unknown}, what {@code oncegate list --state send_status_unknown} runs) and one
 *       exporter scan ({@link Operator#backlog} of the whole backlog, what the exporter's scan runs):
 *       wall time and the requests the server received for each.</li>
 * </ol>
 * The ratios are the large size's median over the small one's (target: 2 or less).
 *
 * <p>Not thread-safe: it belongs to the run's thread.
 */
final class BacklogPhase {

    static final int WORKERS = 32;
    static final int BACKLOG = 10;
    static final int REPEATS = 15;

    private final BenchServer server;
    private final Fleet fleet;
    private final TrialRunner runner;
    private final Progress progress;

    BacklogPhase(BenchServer server, Fleet fleet, TrialRunner runner, Progress progress) {
        this.server = server;
        this.fleet = fleet;
        this.runner = runner;
        this.progress = progress;
    }

    /** Both sizes, the small one first: each made and walked, then their questions asked in turn. */
    Report.Backlog measure(int small, int large) throws Exception {
        ExecutorService held = Executors.newFixedThreadPool(6, r -> {
            Thread t = new Thread(r, "bench-backlog-armed");
            t.setDaemon(true);
            return t;
        });
        CountDownLatch release = new CountDownLatch(1);
        try {
            List<Size> sizes = new ArrayList<>();
            for (int consumed : List.of(small, large)) {
                sizes.add(make(consumed, held, release));
            }
            for (Size size : sizes) {
                size.walk();
            }
            for (Size size : sizes) {
                size.ask(); // untimed: the first questions load classes and warm the JIT for both sizes alike
            }
            for (int i = 0; i < REPEATS; i++) {
                for (Size size : sizes) {
                    size.ask();
                }
            }
            List<Report.BacklogSize> results = new ArrayList<>();
            for (Size size : sizes) {
                Report.BacklogSize r = size.result();
                results.add(r);
                progress.step(String.format(Locale.ROOT, "backlog %,d keys: query %.1f ms (%.0f requests, %d listed),"
                                + " exporter scan %.1f ms (%.0f requests, %d listed), walk %.0f keys/s", r.consumedKeys(),
                        r.queryMs().median(), r.queryRequests().median(), r.queryListed(), r.scanMs().median(),
                        r.scanRequests().median(), r.scanListed(), r.walkKeysPerSecond()));
            }
            return new Report.Backlog(results, BACKLOG, REPEATS, "consumed keys through the real gate (a gate per"
                    + " worker, " + WORKERS + " workers); backlog: 3 armed without outcome (executors held in their"
                    + " actions), 3 send_status_unknown, 3 unused authorizations, 1 damaged outcome record; sizes walked,"
                    + " then asked in turn (one untimed round first)");
        } finally {
            release.countDown();
            held.shutdown();
        }
    }

    /** One size: its consumed keys and backlog made through the gate, in a namespace of its own. */
    private Size make(int consumed, ExecutorService held, CountDownLatch release) throws Exception {
        String namespace = "/bench/backlog-" + consumed;
        OncegateArm arm = OncegateArm.perWorker(fleet, namespace);
        arm.prepare(fleet.size());
        long t0 = System.nanoTime();
        runner.consume(arm, new Ledger(), consumed, Math.min(WORKERS, fleet.size()));
        double populate = (System.nanoTime() - t0) / 1e9;
        progress.note(String.format(Locale.ROOT, "backlog phase: %,d consumed keys in %s in %.0f s (%.0f keys/s)",
                consumed, namespace, populate, consumed / populate));
        Operator operator = Operator.builder(fleet.client(0)).namespace(namespace).build();
        backlog(namespace, fleet.gate(0, namespace), operator, held, release);
        server.settle(Duration.ofMillis(200), Duration.ofSeconds(30));
        return new Size(consumed, populate, operator);
    }

    /** What one size measured. Not thread-safe: the run's thread. */
    private final class Size {
        private final int consumed;
        private final double populate;
        private final Operator operator;
        private final List<double[]> query = new ArrayList<>();
        private final List<double[]> scan = new ArrayList<>();
        private final int[] listed = new int[2];
        private long walked;
        private double walkSeconds;
        private Operator.IndexCheck check;

        Size(int consumed, double populate, Operator operator) {
            this.consumed = consumed;
            this.populate = populate;
            this.operator = operator;
        }

        /** One full walk of every key, as the exporter's walk runs it (it enters the damaged key). */
        void walk() throws Exception {
            long walkStart = System.nanoTime();
            long[] n = {0};
            check = operator.checkIndex(false, s -> n[0]++);
            walkSeconds = (System.nanoTime() - walkStart) / 1e9;
            walked = n[0];
            progress.note(String.format(Locale.ROOT, "backlog phase: walk of %,d keys in %.1f s (%.0f keys/s); index"
                    + " missing %d, stale %d", walked, walkSeconds, walked / walkSeconds, check.missing(), check.stale()));
        }

        /** The backlog query, then one exporter scan. */
        void ask() throws Exception {
            query.add(timed(() -> listed[0] = operator.backlog(
                    new Operator.ListQuery(ScopeState.SEND_STATUS_UNKNOWN, null, 0), s -> { }).listed()));
            scan.add(timed(() -> listed[1] = operator.backlog(Operator.ListQuery.all(), s -> { }).listed()));
        }

        Report.BacklogSize result() {
            List<double[]> q = query.subList(1, query.size());
            List<double[]> sc = scan.subList(1, scan.size());
            return new Report.BacklogSize(consumed, populate, walked, walkSeconds, walked / walkSeconds, check.missing(),
                    check.stale(), listed[0], Report.Stat.of(q, x -> x[0]), Report.Stat.of(q, x -> x[1]), listed[1],
                    Report.Stat.of(sc, x -> x[0]), Report.Stat.of(sc, x -> x[1]));
        }
    }

    /** The same small backlog in every namespace. */
    private void backlog(String namespace, Gate gate, Operator operator, ExecutorService held, CountDownLatch release)
            throws Exception {
        CountDownLatch armed = new CountDownLatch(3);
        for (int i = 0; i < 3; i++) {
            EffectKey key = key(namespace, "armed-" + i);
            held.submit(() -> {
                try (Attempt a = gate.enter(key)) {
                    a.cross(context -> {
                        armed.countDown();
                        release.await();
                        return ActionResult.verified("released");
                    });
                }
                return null;
            });
        }
        for (int i = 0; i < 3; i++) {
            try (Attempt a = gate.enter(key(namespace, "unknown-" + i))) {
                a.cross(context -> ActionResult.unconfirmed("the reply was lost"));
            }
        }
        for (int i = 0; i < 3; i++) {
            EffectKey key = key(namespace, "authorized-" + i);
            try (Attempt a = gate.enter(key)) {
                a.cross(context -> ActionResult.verified("delivered"));
            }
            operator.authorize(key.key(), 0, "bench", "redelivery asked for");
        }
        EffectKey damaged = key(namespace, "damaged");
        try (Attempt a = gate.enter(damaged)) {
            a.cross(context -> ActionResult.verified("delivered"));
        }
        fleet.client(0).setData().forPath(damaged.path(namespace) + "/0/armed/outcome",
                "{damaged".getBytes(StandardCharsets.UTF_8));
        if (!armed.await(60, java.util.concurrent.TimeUnit.SECONDS)) {
            throw new IllegalStateException("backlog phase: the armed executors did not reach their actions");
        }
    }

    private static EffectKey key(String namespace, String name) {
        return EffectKey.of(Destination.stable("bench", "backlog"), (namespace + " " + name).getBytes(StandardCharsets.UTF_8));
    }

    @FunctionalInterface
    private interface Work {
        void run() throws Exception;
    }

    /** {@code work}'s wall milliseconds and the requests the server received meanwhile. */
    private double[] timed(Work work) throws Exception {
        ServerSample before = server.sample();
        long t0 = System.nanoTime();
        work.run();
        double ms = (System.nanoTime() - t0) / 1e6;
        return new double[] {ms, server.sample().minus(before).workRequests()};
    }
}
