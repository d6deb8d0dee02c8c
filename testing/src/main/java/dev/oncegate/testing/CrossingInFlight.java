package dev.oncegate.testing;

import java.time.Duration;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

import dev.oncegate.Attempt;
import dev.oncegate.BoundaryAction;
import dev.oncegate.Crossing;
import dev.oncegate.EffectKey;
import dev.oncegate.Gate;

/**
 * An executor caught inside its action: on its own thread it crosses, and holds inside the action
 * until the test {@link #release releases} it; then it runs the given action (deliver, reject,
 * fail…) and records the outcome. Lets a test do something to ZooKeeper — delete a key, rewrite a
 * scope, authorize a redelivery, start a rival, kill the leader, expire the session, crash the
 * worker — while a crossing is in flight, then look at what each side recorded.
 *
 * <pre>{@code
 * try (CrossingInFlight a = CrossingInFlight.start(gateA, key, provider.verified())) {
 *     assertThat(a.awaitInAction(Timing.EVENTUALLY)).isTrue();
 *     // ... interfere ...
 *     Crossing crossing = a.releaseAndAwait(Timing.EVENTUALLY);
 * }
 * }</pre>
 *
 * <p>{@link #start} enters the key on the executor's thread too (and closes that attempt);
 * {@link #cross} takes an attempt the test entered itself and leaves closing it to the test.
 *
 * <p>Thread-safe. {@link #close} without a release is a process killed inside its action: the
 * executor's thread is interrupted where it holds, {@code then} never runs, and close waits
 * (up to {@link Timing#EVENTUALLY}) for the thread to end.
 */
public final class CrossingInFlight implements AutoCloseable {

    private final ExecutorService thread = Pools.daemon(1, "crossing-in-flight");
    private final CountDownLatch inAction = new CountDownLatch(1);
    private final CountDownLatch release = new CountDownLatch(1);
    private final Future<Crossing> crossing;

    /** What the executor's thread does with the action that holds until {@link #release}. */
    private interface Executor {
        Crossing run(BoundaryAction holding) throws Exception;
    }

    private CrossingInFlight(BoundaryAction then, Executor executor) {
        BoundaryAction holding = ctx -> {
            inAction.countDown();
            release.await();
            return then.deliver(ctx);
        };
        crossing = thread.submit(() -> executor.run(holding));
    }

    /**
     * Starts the executor: {@code gate.enter(key)} (without waiting) on its own thread, then a
     * crossing whose action waits for {@link #release} and then runs {@code then}. The executor
     * fails (see {@link #crossing}) when it does not proceed.
     */
    public static CrossingInFlight start(Gate gate, EffectKey key, BoundaryAction then) {
        Objects.requireNonNull(gate, "gate");
        Objects.requireNonNull(key, "key");
        return new CrossingInFlight(Objects.requireNonNull(then, "then"), holding -> {
            try (Attempt attempt = gate.enter(key)) {
                if (!attempt.decision().proceeds()) {
                    throw new IllegalStateException("the executor did not proceed: " + attempt.decision());
                }
                return attempt.cross(holding);
            }
        });
    }

    /**
     * Crosses {@code attempt} — one that proceeded, entered by the test on its own thread — on
     * the executor's thread, with an action that waits for {@link #release} and then runs
     * {@code then}. The test still owns the attempt and closes it.
     */
    public static CrossingInFlight cross(Attempt attempt, BoundaryAction then) {
        Objects.requireNonNull(attempt, "attempt");
        return new CrossingInFlight(Objects.requireNonNull(then, "then"), attempt::cross);
    }

    /** Waits until the scope is armed and the executor is inside its action; false on timeout. */
    public boolean awaitInAction(Duration timeout) throws InterruptedException {
        return inAction.await(timeout.toMillis(), TimeUnit.MILLISECONDS);
    }

    /** Lets the executor run {@code then} and record its outcome. */
    public void release() {
        release.countDown();
    }

    /**
     * The crossing, once the executor finished.
     *
     * @throws IllegalStateException when the executor failed (it did not proceed, say) or did not finish in time
     */
    public Crossing crossing(Duration timeout) throws InterruptedException {
        try {
            return crossing.get(timeout.toMillis(), TimeUnit.MILLISECONDS);
        } catch (ExecutionException e) {
            throw new IllegalStateException("the executor failed: " + e.getCause(), e.getCause());
        } catch (TimeoutException e) {
            throw new IllegalStateException("the executor did not finish within " + timeout, e);
        }
    }

    /** {@link #release} and {@link #crossing(Duration)}. */
    public Crossing releaseAndAwait(Duration timeout) throws InterruptedException {
        release();
        return crossing(timeout);
    }

    @Override
    public void close() {
        Pools.stop(List.of(thread));
    }
}
