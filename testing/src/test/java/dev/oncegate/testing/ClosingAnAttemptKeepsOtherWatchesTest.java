package dev.oncegate.testing;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.concurrent.TimeUnit;

import dev.oncegate.Attempt;
import dev.oncegate.Crossing;
import dev.oncegate.Decision;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Closing one attempt removes only its own watches (issue 15, item 8). Attempts of one gate share
 * its client, and so its ZooKeeper session, with the LeaderLatches of the others: a waiter that
 * watched the lease holder's election node must not take, when it closes, the watch that the next
 * member's latch set on that same node (its predecessor), or that member learns it leads only when
 * a lease TTL has passed.
 */
class ClosingAnAttemptKeepsOtherWatchesTest {

    @RegisterExtension
    static final ZooKeeperExtension zk = ZooKeeperExtension.standalone();

    /** Long enough that "promptly" and "after a TTL" cannot be mistaken for each other. */
    static final Duration TTL = Timing.scaled(Duration.ofSeconds(10));

    @Test
    void waiterOfTheSameGateCloses_thenTheHolderLeaves_theNextMemberProceedsPromptly() throws Exception {
        // Given one gate (one client, one session) whose attempts A and B wait on scope 0 while another worker
        // crosses it; its not_sent opens scope 1, and both join scope 1's election: one holds the lease, the
        // other waits as the next member (its latch watches the holder's election node)
        Scenarios.HolderAndMember scope1 = Scenarios.holderAndNextMember(zk, TTL);

        // When a third attempt of the gate waits outside the election (watching the holder's election node),
        // gives up and is closed, and then the holder leaves without crossing
        try (Attempt waiter = scope1.gate().enter(zk.key(), Timing.scaled(500))) {
            assertThat(waiter.decision()).isInstanceOf(Decision.StopBusy.class);
        }
        scope1.holder().close();
        long left = System.nanoTime();

        // Then the next member proceeds at once, well within the lease TTL, and delivers once
        try (Attempt member = scope1.member().get(Timing.WAIT.toMillis(), TimeUnit.MILLISECONDS)) {
            Duration after = Duration.ofNanos(System.nanoTime() - left);
            assertThat(member.decision()).isInstanceOf(Decision.Proceed.class);
            assertThat(after).as("the next member proceeded %s after the holder left (lease TTL %s)", after, TTL)
                    .isLessThan(TTL.dividedBy(2));
            assertThat(member.cross(zk.provider().verified())).isInstanceOf(Crossing.Crossed.class);
        }
        assertThat(zk.provider().deliveries()).isEqualTo(1);
        assertThat(zk.provider().ledger().get(0).scope()).isEqualTo(1);
        // and once every attempt of the gate is closed, no watch of its session is left on scope 1
        Scenarios.eventually("no watch left on scope 1", () -> !Scenarios.watched(zk, zk.keyPath() + "/1"));
        Scenarios.eventually("no watch left on scope 1's outcome", () -> !Scenarios.watched(zk, zk.keyPath() + "/1/outcome"));
    }
}
