package dev.oncegate.testing;

import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

/**
 * A place in worker code where a test can hold the worker's thread — a paused executor (a GC
 * pause, a stopped VM) — past its lease TTL or session timeout, then let it go on. Put
 * {@link #reached()} where the pause should happen (between {@code enter} and {@code cross},
 * say); in the test, {@link #awaitReached} then {@link #release()}.
 *
 * <p>One-shot: the first thread to reach it is held; later threads pass. Thread-safe.
 */
public final class PausePoint {

    private final CountDownLatch reached = new CountDownLatch(1);
    private final CountDownLatch released = new CountDownLatch(1);

    /** A point that never holds anyone (for the workers a test does not pause). */
    public static PausePoint none() {
        PausePoint point = new PausePoint();
        point.release();
        return point;
    }

    /** Called by the worker: holds the first caller until {@link #release()}. */
    public void reached() throws InterruptedException {
        if (reached.getCount() == 0) {
            return;
        }
        reached.countDown();
        released.await();
    }

    /** Waits until a worker is held here. */
    public boolean awaitReached(Duration timeout) throws InterruptedException {
        return reached.await(timeout.toMillis(), TimeUnit.MILLISECONDS);
    }

    /** Lets the held worker go on. */
    public void release() {
        released.countDown();
    }
}
