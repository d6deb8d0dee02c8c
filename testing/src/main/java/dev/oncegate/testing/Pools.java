package dev.oncegate.testing;

import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The threads the kit starts for a test (contenders, an executor in flight, a test's pool): daemon
 * threads with a recognisable name, and one way to stop them — interrupt all, then wait for each
 * up to {@link Timing#EVENTUALLY}. Stateless and thread-safe.
 */
final class Pools {

    private Pools() {
    }

    /** A fixed pool of daemon threads named {@code name-1}, {@code name-2}, … */
    static ExecutorService daemon(int threads, String name) {
        AtomicInteger n = new AtomicInteger();
        return Executors.newFixedThreadPool(threads, r -> {
            Thread t = new Thread(r, name + "-" + n.incrementAndGet());
            t.setDaemon(true);
            return t;
        });
    }

    /**
     * Interrupts every pool's threads, then waits until each pool has ended (up to
     * {@link Timing#EVENTUALLY} each). An interrupt of the caller is kept for it.
     */
    static void stop(List<ExecutorService> pools) {
        pools.forEach(ExecutorService::shutdownNow);
        boolean interrupted = false;
        for (ExecutorService pool : pools) {
            try {
                pool.awaitTermination(Timing.EVENTUALLY.toMillis(), TimeUnit.MILLISECONDS);
            } catch (InterruptedException e) {
                interrupted = true;
            }
        }
        if (interrupted) {
            Thread.currentThread().interrupt();
        }
    }
}
