package dev.oncegate;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.TreeMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

/**
 * The deterministic simulator's run: seeded histories of the real protocol code ({@link SimWorld}),
 * each checked after every step ({@link SimChecker}), for a time budget. A failing history is shrunk
 * (the world's dimensions turned off one by one while it still fails) and printed with a one-line
 * replay command.
 *
 * <p>Properties: {@code oncegate.sim.seconds} (budget, default 20; `-Psim` sets a longer one),
 * {@code oncegate.sim.histories} (at most this many), {@code oncegate.sim.seed} (the first seed; a random one otherwise, printed), {@code oncegate.sim.config}
 * (replays one history: a seed and this config, as printed), {@code oncegate.sim.threads} (default 2),
 * {@code oncegate.sim.wipe} (every history loses its data, instead of one in five).
 */
class SimulationTest {

    @Test
    void seededHistories_holdEveryInvariant() throws Exception {
        String replay = System.getProperty("oncegate.sim.config");
        if (replay != null) {
            long seed = Long.parseLong(System.getProperty("oncegate.sim.seed"));
            SimWorld.Result r = new SimWorld(seed, SimWorld.Config.decode(replay)).run();
            r.trace().forEach(System.out::println);
            assertThat(r.violations()).as("replayed history %d", seed).isEmpty();
            return;
        }
        long budget = Duration.ofSeconds(Long.getLong("oncegate.sim.seconds", 20)).toNanos();
        long first = Long.getLong("oncegate.sim.seed", new SplittableRandom().nextLong());
        int threads = Integer.getInteger("oncegate.sim.threads", 2);
        long maxHistories = Long.getLong("oncegate.sim.histories", Long.MAX_VALUE);
        System.out.println("simulation: seeds from " + first + " (replay with -Doncegate.sim.seed=" + first + "), "
                + threads + " threads, " + Duration.ofNanos(budget).toSeconds() + " s");
        AtomicLong next = new AtomicLong(first);
        AtomicLong histories = new AtomicLong();
        AtomicLong steps = new AtomicLong();
        AtomicBoolean failed = new AtomicBoolean();
        Map<String, Integer> rules = new TreeMap<>();
        List<SimWorld.Result> failures = new ArrayList<>();
        long start = System.nanoTime();
        long cpuStart = processCpuNanos();
        AtomicInteger runnerIds = new AtomicInteger();
        // sim-…: nothing is logged on these threads in the test JVMs (QuietSimulatedActors)
        ExecutorService pool = Executors.newFixedThreadPool(threads, r -> new Thread(r, "sim-runner-" + runnerIds.incrementAndGet()));
        List<Future<?>> runners = new ArrayList<>();
        for (int t = 0; t < threads; t++) {
            runners.add(pool.submit(() -> {
                while (System.nanoTime() - start < budget && !failed.get()) {
                    long seed = next.getAndIncrement();
                    if (seed - first >= maxHistories) {
                        break;
                    }
                    SimWorld.Result r = run(seed);
                    histories.incrementAndGet();
                    steps.addAndGet(r.steps());
                    synchronized (rules) {
                        r.rules().forEach((k, v) -> rules.merge(k, v, Integer::sum));
                        if (r.failed()) {
                            failures.add(r);
                            failed.set(true);
                        }
                    }
                }
                return null;
            }));
        }
        for (Future<?> f : runners) {
            f.get();
        }
        pool.shutdown();
        double seconds = (System.nanoTime() - start) / 1e9;
        double cpuMs = (processCpuNanos() - cpuStart) / 1e6 / Math.max(1, histories.get());
        System.out.printf("simulation: %d histories in %.1f s (%.0f per minute on this machine now), %d steps,"
                        + " %.1f ms CPU per history (%.0f histories per minute on 2 idle cores); rules exercised:%n",
                histories.get(), seconds, histories.get() * 60 / seconds, steps.get(), cpuMs, 2 * 60_000 / cpuMs);
        rules.forEach((k, v) -> System.out.printf("  %8d  %s%n", v, k));
        if (!failures.isEmpty()) {
            SimWorld.Result failing = failures.get(0);
            System.out.println("simulation: seed " + failing.seed() + " config " + failing.config().encode() + " failed: "
                    + failing.violations().get(0) + " (shrinking it)");
            SimWorld.Result shrunk = shrink(failing);
            System.out.println("simulation: FAILED seed " + shrunk.seed() + " config " + shrunk.config().encode());
            shrunk.trace().forEach(System.out::println);
            System.out.println("replay: mvn -o -B -pl coordinator test -Psim -Doncegate.sim.seed="
                    + shrunk.seed() + " -Doncegate.sim.config=" + shrunk.config().encode());
            assertThat(shrunk.violations()).as("seed %d", shrunk.seed()).isEmpty();
        }
        assertThat(histories.get()).isPositive();
    }

    /** CPU time of this process (every thread), in nanoseconds. */
    static long processCpuNanos() {
        return ((com.sun.management.OperatingSystemMXBean) java.lang.management.ManagementFactory.getOperatingSystemMXBean())
                .getProcessCpuTime();
    }

    /** One history of {@code seed}, its world drawn from the seed. */
    static SimWorld.Result run(long seed) {
        SimWorld.Config config = SimWorld.Config.random(new SplittableRandom(seed ^ 0x5eed));
        return new SimWorld(seed, WIPE_EVERY_HISTORY ? config.withWipe(true) : config).run();
    }

    /** {@code -Doncegate.sim.wipe=true}: every history loses its data (to hunt where a wipe matters). */
    private static final boolean WIPE_EVERY_HISTORY = Boolean.getBoolean("oncegate.sim.wipe");

    /**
     * The failing history, with each dimension of its world turned off (or cut down) while it still
     * fails, and its steps cut to the first violation.
     */
    static SimWorld.Result shrink(SimWorld.Result failing) {
        SimWorld.Result best = failing;
        boolean progress = true;
        while (progress) {
            progress = false;
            SimWorld.Config c = best.config();
            List<SimWorld.Config> smaller = List.of(
                    new SimWorld.Config(c.contenders(), c.keys(), false, c.rogue(), c.faults(), c.clocks(), c.maxSteps(), c.wipe(), c.interrupts()),
                    new SimWorld.Config(c.contenders(), c.keys(), c.operator(), false, c.faults(), c.clocks(), c.maxSteps(), c.wipe(), c.interrupts()),
                    new SimWorld.Config(c.contenders(), c.keys(), c.operator(), c.rogue(), false, c.clocks(), c.maxSteps(), c.wipe(), false),
                    new SimWorld.Config(c.contenders(), c.keys(), c.operator(), c.rogue(), c.faults(), false, c.maxSteps(), c.wipe(), c.interrupts()),
                    new SimWorld.Config(Math.max(1, c.contenders() - 1), c.keys(), c.operator(), c.rogue(), c.faults(), c.clocks(), c.maxSteps(), c.wipe(), c.interrupts()),
                    new SimWorld.Config(c.contenders(), Math.max(1, c.keys() - 1), c.operator(), c.rogue(), c.faults(), c.clocks(), c.maxSteps(), c.wipe(), c.interrupts()),
                    new SimWorld.Config(c.contenders(), c.keys(), c.operator(), c.rogue(), c.faults(), c.clocks(),
                            Math.max(10, best.steps()), c.wipe(), c.interrupts()),
                    c.withWipe(false),
                    c.withInterrupts(false));
            for (SimWorld.Config s : smaller) {
                if (s.equals(c)) {
                    continue;
                }
                SimWorld.Result r = new SimWorld(best.seed(), s).run();
                if (r.failed()) {
                    best = r; // every candidate is smaller than the current one in one dimension
                    progress = true;
                    break;
                }
            }
        }
        return best;
    }
}
