package dev.oncegate.testing;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.Callable;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

import dev.oncegate.Attempt;
import dev.oncegate.BoundaryAction;
import dev.oncegate.Crossing;
import dev.oncegate.Decision;
import dev.oncegate.EffectKey;
import dev.oncegate.Gate;

/**
 * Contenders that race on one key: each on its own thread, all released at once through a
 * barrier, each entering the key, crossing with the given action if it proceeds, and closing its
 * attempt. The result is one {@link Entry} per contender — its decision and its crossing — for
 * assertions such as "exactly one delivered, every other one stopped sent".
 *
 * <pre>{@code
 * List<Race.Entry> entries = Race.of(gateA, gateB, gateC).enter(key, Timing.WAIT, provider.verified());
 * assertThat(entries).filteredOn(Race.Entry::crossed).hasSize(1);
 * assertThat(entries).filteredOn(e -> e.decision() instanceof Decision.StopSent).hasSize(2);
 * }</pre>
 *
 * <p>{@link #start} returns while the contenders run, so the test can act meanwhile (wait until
 * they block, then let the executor finish); {@link #together} races arbitrary calls (two
 * operators authorizing at once, say). Every thread a race starts has ended, or was interrupted
 * and awaited, when its results are returned or it is closed.
 *
 * <p>Immutable and thread-safe; a {@link Started} race is thread-safe.
 */
public final class Race {

    /**
     * What one contender did.
     *
     * @param contender its position among the gates given to {@link #of}
     * @param decision  the decision {@code enter} returned
     * @param crossing  its crossing when it proceeded (and an action was given), else null
     */
    public record Entry(int contender, Decision decision, Crossing crossing) {

        public Entry {
            Objects.requireNonNull(decision, "decision");
        }

        /** Whether it proceeded. */
        public boolean proceeded() {
            return decision.proceeds();
        }

        /** Whether it crossed: its action ran and an outcome was decided ({@link Crossing.Crossed}). */
        public boolean crossed() {
            return crossing instanceof Crossing.Crossed;
        }
    }

    private final List<Gate> gates;

    private Race(List<Gate> gates) {
        this.gates = gates;
    }

    /** A race of these gates, one contender each (a gate given twice contends twice). */
    public static Race of(Gate... gates) {
        return of(Arrays.asList(Objects.requireNonNull(gates, "gates")));
    }

    /** A race of these gates, one contender each. */
    public static Race of(List<Gate> gates) {
        Objects.requireNonNull(gates, "gates");
        if (gates.isEmpty()) {
            throw new IllegalArgumentException("gates: a race needs at least one contender");
        }
        gates.forEach(g -> Objects.requireNonNull(g, "gates: a null gate"));
        return new Race(List.copyOf(gates));
    }

    /**
     * Every contender enters {@code key} at once, willing to wait up to {@code wait}; one that
     * proceeds crosses with {@code action}. Returns when all are done.
     *
     * @throws IllegalStateException when a contender failed (its enter or cross threw) or the
     *                               race did not end within {@code wait} plus {@link Timing#EVENTUALLY}
     */
    public List<Entry> enter(EffectKey key, Duration wait, BoundaryAction action) throws InterruptedException {
        Objects.requireNonNull(wait, "wait");
        try (Started race = start(key, wait, action)) {
            return race.entries(wait.plus(Timing.EVENTUALLY));
        }
    }

    /**
     * Every contender enters {@code key} at once and leaves without crossing (a contender that
     * proceeds releases its lease on leaving, so a waiting one may proceed after it).
     */
    public List<Entry> enter(EffectKey key, Duration wait) throws InterruptedException {
        Objects.requireNonNull(wait, "wait");
        try (Started race = start(key, wait)) {
            return race.entries(wait.plus(Timing.EVENTUALLY));
        }
    }

    /** {@link #enter(EffectKey, Duration, BoundaryAction)}, returning while the contenders run. */
    public Started start(EffectKey key, Duration wait, BoundaryAction action) {
        return start(key, wait, Objects.requireNonNull(action, "action"), true);
    }

    /** {@link #enter(EffectKey, Duration)}, returning while the contenders run. */
    public Started start(EffectKey key, Duration wait) {
        return start(key, wait, null, false);
    }

    private Started start(EffectKey key, Duration wait, BoundaryAction action, boolean cross) {
        Objects.requireNonNull(key, "key");
        Objects.requireNonNull(wait, "wait");
        List<Callable<Entry>> contenders = new ArrayList<>();
        for (int i = 0; i < gates.size(); i++) {
            int contender = i;
            Gate gate = gates.get(i);
            contenders.add(() -> {
                try (Attempt attempt = gate.enter(key, wait)) {
                    Decision decision = attempt.decision();
                    Crossing crossing = cross && decision.proceeds() ? attempt.cross(action) : null;
                    return new Entry(contender, decision, crossing);
                }
            });
        }
        return new Started(contenders);
    }

    /**
     * Runs every call on its own thread, released at once, and returns their results in order.
     *
     * @throws IllegalStateException when a call failed or they did not all end within {@link Timing#EVENTUALLY}
     */
    @SafeVarargs
    public static <T> List<T> together(Callable<? extends T>... calls) throws InterruptedException {
        return together(Arrays.asList(Objects.requireNonNull(calls, "calls")));
    }

    /** {@link #together(Callable[])} for a list of calls. */
    public static <T> List<T> together(List<? extends Callable<? extends T>> calls) throws InterruptedException {
        Objects.requireNonNull(calls, "calls");
        if (calls.isEmpty()) {
            throw new IllegalArgumentException("calls: a race needs at least one contender");
        }
        try (Started race = new Started(calls)) {
            return race.results(Timing.EVENTUALLY);
        }
    }

    /**
     * A race under way: its contenders were submitted, each waits (up to {@link Timing#EVENTUALLY})
     * until all have started, then runs. {@link #close} interrupts those still running.
     */
    public static final class Started implements AutoCloseable {

        private final ExecutorService pool;
        private final List<Future<Object>> futures = new ArrayList<>();

        private Started(List<? extends Callable<?>> calls) {
            calls.forEach(c -> Objects.requireNonNull(c, "calls: a null call"));
            pool = Pools.daemon(calls.size(), "race-contender");
            CyclicBarrier startLine = new CyclicBarrier(calls.size());
            for (Callable<?> call : calls) {
                futures.add(pool.submit(() -> {
                    startLine.await(Timing.EVENTUALLY.toMillis(), TimeUnit.MILLISECONDS);
                    return call.call();
                }));
            }
        }

        /**
         * Each contender's entry, in the order of the gates, once all are done.
         *
         * @throws IllegalStateException when a contender failed or they did not all end within {@code timeout}
         */
        public List<Entry> entries(Duration timeout) throws InterruptedException {
            List<Entry> entries = new ArrayList<>();
            for (Object result : results(timeout)) {
                entries.add((Entry) result);
            }
            return entries;
        }

        @SuppressWarnings("unchecked")
        private <T> List<T> results(Duration timeout) throws InterruptedException {
            long deadline = System.nanoTime() + Objects.requireNonNull(timeout, "timeout").toNanos();
            List<T> results = new ArrayList<>();
            for (int i = 0; i < futures.size(); i++) {
                try {
                    long left = Math.max(0, deadline - System.nanoTime());
                    results.add((T) futures.get(i).get(left, TimeUnit.NANOSECONDS));
                } catch (ExecutionException e) {
                    throw new IllegalStateException("contender " + i + " failed: " + e.getCause(), e.getCause());
                } catch (TimeoutException e) {
                    throw new IllegalStateException("contender " + i + " did not finish within " + timeout, e);
                }
            }
            return results;
        }

        /** Interrupts the contenders still running and waits (up to {@link Timing#EVENTUALLY}) until they ended. */
        @Override
        public void close() {
            Pools.stop(List.of(pool));
        }
    }
}
