package dev.oncegate;

import java.io.IOException;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;

import org.apache.curator.framework.recipes.leader.LeaderLatch;
import org.apache.curator.framework.recipes.leader.LeaderLatchListener;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * How a gate's attempts leave their elections: off the caller's path, on one thread per gate, and
 * without tripping Curator. A {@link LeaderLatch} closed while a background {@code getChildren}
 * of its own is in flight finds its node gone, logs "failed to find our node; resetting" at
 * ERROR and creates and deletes a node for nothing; that is what happened when every waiter of a
 * key closed its latch at once as the outcome arrived (each close wakes the next waiter's latch).
 * So when a scope was consumed and all its contenders leave together, a latch that waits behind
 * others is closed when it comes to lead (its predecessors have left, so nothing of its own is in
 * flight), or when the gate closes; a latch that leads, whose node does not exist yet, or that
 * leaves on its own (a waiter giving up, interrupted) is closed at once. A latch waiting to be
 * closed never takes the lease: its attempt has ended, and authority comes only from the lease CAS.
 *
 * <p>Thread-safe.
 */
final class Elections {

    private static final Logger LOG = LoggerFactory.getLogger(Elections.class);

    /** How long closing the gate waits for the latches being closed: a close sends its delete in the background. */
    static final java.time.Duration CLOSE_BOUND = java.time.Duration.ofSeconds(2);

    private final Set<LeaderLatch> leaving = ConcurrentHashMap.newKeySet();
    private final ExecutorService closer;

    Elections(String name) {
        ThreadPoolExecutor executor = new ThreadPoolExecutor(1, 1, 10, TimeUnit.SECONDS, new LinkedBlockingQueue<>(), r -> {
            Thread t = new Thread(r, "oncegate-elections-" + name);
            t.setDaemon(true);
            return t;
        });
        executor.allowCoreThreadTimeOut(true);
        this.closer = executor;
    }

    /**
     * Leaves {@code latch}'s election, never blocking: at once, or — when {@code withEveryone}
     * and it waits behind others — once it leads.
     */
    void leave(LeaderLatch latch, boolean withEveryone) {
        if (!withEveryone || latch.hasLeadership() || latch.getOurPath() == null) {
            closeLater(latch);
            return;
        }
        leaving.add(latch);
        latch.addListener(new LeaderLatchListener() {
            @Override
            public void isLeader() {
                if (leaving.remove(latch)) {
                    closeLater(latch);
                }
            }

            @Override
            public void notLeader() {
                // still waiting for its turn
            }
        });
        if (latch.hasLeadership() && leaving.remove(latch)) {
            closeLater(latch); // it came to lead before the listener was in place
        }
    }

    /**
     * Closes every latch still waiting for its turn, and waits (up to {@link #CLOSE_BOUND}) until the
     * closing thread's queue is done: the caller closes the Curator client next, and a latch closed
     * after that fails ("could not close an election latch cleanly"). The interrupt flag is kept.
     */
    void closeAll() {
        for (LeaderLatch latch : leaving) {
            if (leaving.remove(latch)) {
                closeLater(latch);
            }
        }
        closer.shutdown();
        try {
            if (!closer.awaitTermination(CLOSE_BOUND.toMillis(), TimeUnit.MILLISECONDS)) {
                LOG.warn("oncegate: election latches still closing after {} ms; their ephemeral nodes go with the session",
                        CLOSE_BOUND.toMillis());
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt(); // their ephemeral nodes go with the session
        }
    }

    /** How many latches wait for their turn to be closed. */
    int waiting() {
        return leaving.size();
    }

    private void closeLater(LeaderLatch latch) {
        try {
            closer.execute(() -> close(latch));
        } catch (RejectedExecutionException gateClosed) {
            close(latch);
        }
    }

    private static void close(LeaderLatch latch) {
        try {
            latch.close();
        } catch (IOException | IllegalStateException e) {
            LOG.warn("oncegate: could not close an election latch cleanly ({}); its ephemeral node goes with the session",
                    e.toString());
        }
    }
}
