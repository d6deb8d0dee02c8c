package dev.oncegate.testing;

import java.time.Duration;
import java.util.Objects;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

import dev.oncegate.Attempt;
import dev.oncegate.BoundaryAction;
import dev.oncegate.Crossing;
import dev.oncegate.EffectKey;
import dev.oncegate.Gate;

/**
 * An executor caught inside its action: on its own thread it enters the key, must proceed,
 * crosses, and holds inside the action until the test {@link #release releases} it; then it runs
 * the given action (deliver, reject, fail…) and records the outcome. Lets a test do something to
 * ZooKeeper — delete a key, rewrite a scope, authorize a redelivery, start a rival — while a
 * crossing is in flight, then look at what each side recorded.
 *
 * <pre>{@code
 * try (CrossingInFlight a = CrossingInFlight.start(gateA, key, provider.verified())) {
 *     assertThat(a.awaitInAction(Duration.ofSeconds(10))).isTrue();
 *     // ... interfere ...
 *     a.release();
 *     Crossing crossing = a.crossing(Duration.ofSeconds(10));
 * }
 * }</pre>
 *
 * <p>Thread-safe; {@link #close} stops the executor's thread (interrupting it if it still runs).
 */
public final class CrossingInFlight implements AutoCloseable {

    private final ExecutorService thread = Executors.newSingleThreadExecutor(r -> {
        Thread t = new Thread(r, "crossing-in-flight");
        t.setDaemon(true);
        return t;
    });
    private final CountDownLatch inAction = new CountDownLatch(1);
    private final CountDownLatch release = new CountDownLatch(1);
    private final Future<Crossing> crossing;

    private CrossingInFlight(Gate gate, EffectKey key, BoundaryAction then) {
        crossing = thread.submit(() -> {
            try (Attempt attempt = gate.enter(key)) {
                if (!attempt.decision().proceeds()) {
                    throw new IllegalStateException("the executor did not proceed: " + attempt.decision());
                }
                return attempt.cross(ctx -> {
                    inAction.countDown();
                    release.await();
                    return then.deliver(ctx);
                });
            }
        });
    }

    /**
     * Starts the executor: {@code gate.enter(key)} (without waiting), then a crossing whose action
     * waits for {@link #release} and then runs {@code then}.
     */
    public static CrossingInFlight start(Gate gate, EffectKey key, BoundaryAction then) {
        return new CrossingInFlight(Objects.requireNonNull(gate, "gate"), Objects.requireNonNull(key, "key"),
                Objects.requireNonNull(then, "then"));
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
        release.countDown();
        thread.shutdownNow();
    }
}
