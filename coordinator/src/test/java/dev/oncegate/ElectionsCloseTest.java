package dev.oncegate;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import org.apache.curator.framework.recipes.leader.LeaderLatch;
import org.junit.jupiter.api.Test;

/**
 * Closing a gate closes the latches its attempts left behind before it returns: the caller closes
 * the Curator client next, and a latch closed after that logged "could not close an election latch
 * cleanly (CuratorClosedException)" on every `oncegate run` that lost the race (seen in CI, on the
 * stderr of a run that had delivered and recorded its outcome).
 */
class ElectionsCloseTest extends OneServerPerClass {

    @Test
    void closeAll_returnsOnlyOnceEveryLeavingLatchIsClosed() throws Exception {
        // Given latches that left a consumed scope's election together while waiting behind its leader (each
        // is closed when it comes to lead, or when the gate closes), and a latch whose close is under way on
        // the gate's closing thread (held up on the latch's monitor, which Curator's own callbacks take too)
        Elections elections = new Elections("close-test");
        LeaderLatch leader = latch("leader");
        assertThat(leader.await(10, TimeUnit.SECONDS)).as("the leader leads").isTrue();
        List<LeaderLatch> waiters = new ArrayList<>();
        for (int i = 0; i < 10; i++) {
            waiters.add(latch("m" + i));
        }
        for (LeaderLatch waiter : waiters) {
            awaitUntil(() -> waiter.getOurPath() != null); // its node is created
            elections.leave(waiter, true);
        }
        assertThat(elections.waiting()).as("latches waiting for their turn").isEqualTo(10);
        LeaderLatch blocker = latch("blocker");
        awaitUntil(() -> blocker.getOurPath() != null);
        Thread closing = new Thread(elections::closeAll, "gate-close");
        synchronized (blocker) {
            elections.leave(blocker, false);

            // When the gate closes them meanwhile
            closing.start();

            // Then closing does not return while a close is still queued
            awaitUntil(() -> closing.getState() == Thread.State.TERMINATED || closing.getState() == Thread.State.TIMED_WAITING);
            assertThat(closing.getState()).as("the gate's close, while latches are still being closed").isNotEqualTo(Thread.State.TERMINATED);
        }
        // and once it returns, every latch is closed
        closing.join(TimeUnit.SECONDS.toMillis(10));
        assertThat(closing.isAlive()).isFalse();
        assertThat(waiters).extracting(LeaderLatch::getState).containsOnly(LeaderLatch.State.CLOSED);
        assertThat(blocker.getState()).isEqualTo(LeaderLatch.State.CLOSED);
        leader.close();
    }

    private static LeaderLatch latch(String id) throws Exception {
        LeaderLatch latch = new LeaderLatch(client, "/elections-close-test", id, LeaderLatch.CloseMode.SILENT);
        latch.start();
        return latch;
    }

    private static void awaitUntil(java.util.concurrent.Callable<Boolean> condition) {
        org.awaitility.Awaitility.await().atMost(java.time.Duration.ofSeconds(10)).pollInterval(java.time.Duration.ofMillis(1))
                .until(condition);
    }
}
