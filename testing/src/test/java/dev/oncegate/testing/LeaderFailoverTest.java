package dev.oncegate.testing;

import dev.oncegate.ScopeState;
import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import dev.oncegate.Attempt;
import dev.oncegate.Crossing;
import dev.oncegate.Decision;
import dev.oncegate.KeyHistory;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * SPEC §9 "ZooKeeper leader failover in a 3-server ensemble": the leader dies during an
 * attempt; at most one delivery, and once the ensemble recovers the effect is either decided
 * or delivered exactly once by the next contender. A fresh ensemble per test (a second kill
 * would leave no quorum).
 */
class LeaderFailoverTest {

    @RegisterExtension
    static final ZooKeeperExtension zk = ZooKeeperExtension.ensemble3().perTest();

    static final Duration SESSION = Timing.scaled(10_000);

    private Worker worker(String task) {
        return zk.newWorker(task, SESSION, b -> b.connectTimeout(Timing.scaled(15_000)));
    }

    /** After recovery: a new contender either finds the effect decided or delivers it; never a second delivery. */
    private void assertRecoveredAtMostOnce(Worker observer) throws Exception {
        assertThat(zk.ensemble().awaitLeader(Timing.EVENTUALLY)).isTrue();
        Scenarios.eventually("observer reconnected", () -> observer.client().getZookeeperClient().isConnected());
        int before = zk.provider().deliveries();
        assertThat(before).isLessThanOrEqualTo(1);
        try (Attempt next = worker("task-next").gate().enter(zk.key(), Timing.WAIT)) {
            Decision d = next.decision();
            if (d instanceof Decision.Proceed) {
                assertThat(before).as("a contender proceeded although a delivery happened").isZero();
                assertThat(next.cross(zk.provider().verified())).isInstanceOf(Crossing.Crossed.class);
                assertThat(zk.provider().deliveries()).isEqualTo(1);
            } else {
                assertThat(d).isInstanceOfAny(Decision.StopSent.class, Decision.StopUnknown.class);
                if (d instanceof Decision.StopSent) {
                    assertThat(before).isEqualTo(1);
                }
            }
        }
        assertThat(zk.provider().deliveries()).isLessThanOrEqualTo(1);
        KeyHistory history = observer.gate().inspect(zk.key().key());
        if (history.state() == ScopeState.SENT_VERIFIED) {
            assertThat(zk.provider().deliveries()).isEqualTo(1);
        }
        assertThat(history.state()).isIn(ScopeState.SENT_VERIFIED, ScopeState.ARMED, ScopeState.SEND_STATUS_UNKNOWN);
        // and a late contender never proceeds again
        try (Attempt late = worker("task-late").gate().enter(zk.key())) {
            assertThat(late.decision().proceeds()).isFalse();
        }
        assertThat(zk.provider().deliveries()).isLessThanOrEqualTo(1);
    }

    @Test
    void leaderKilledAfterProceedBeforeCross_atMostOneDeliveryAndRecoveryDecides() throws Exception {
        // Given executor A proceeded on the ensemble
        Worker a = worker("task-a");
        Attempt attemptA = a.gate().enter(zk.key());
        assertThat(attemptA.decision().proceeds()).isTrue();

        // When the ZooKeeper leader dies and A crosses at once
        zk.ensemble().killLeader();
        Crossing crossing = attemptA.cross(zk.provider().verified());
        attemptA.close();

        // Then A either crossed (one delivery) or was refused with its action never invoked
        if (crossing instanceof Crossing.Refused) {
            assertThat(zk.provider().deliveries()).isZero();
        } else {
            assertThat(zk.provider().deliveries()).isEqualTo(1);
        }
        // and after recovery the effect is decided or delivered exactly once
        assertRecoveredAtMostOnce(a);
    }

    @Test
    void leaderKilledDuringTheAction_exactlyOneDeliveryAndRecoveryStopsOthers() throws Exception {
        // Given executor A armed the scope and is inside its action
        Worker a = worker("task-a");
        Attempt attemptA = a.gate().enter(zk.key());
        CrossingInFlight crossingA = zk.track(CrossingInFlight.cross(attemptA, zk.provider().verified()));
        assertThat(crossingA.awaitInAction(Timing.EVENTUALLY)).isTrue();

        // When the ZooKeeper leader dies, then the action completes
        zk.ensemble().killLeader();
        Crossing crossing = crossingA.releaseAndAwait(Timing.EVENTUALLY);
        attemptA.close();

        // Then exactly one delivery, recorded or left armed (unknown), and nobody delivers again
        assertThat(crossing).isInstanceOf(Crossing.Crossed.class);
        assertThat(zk.provider().deliveries()).isEqualTo(1);
        assertRecoveredAtMostOnce(a);
        assertThat(zk.provider().deliveries()).isEqualTo(1);
    }

    @Test
    void leaderKilledWhileContendersWait_oneDelivery() throws Exception {
        // Given executor A holds the lease and B waits for it
        Worker a = worker("task-a");
        Worker b = worker("task-b");
        Attempt attemptA = a.gate().enter(zk.key());
        assertThat(attemptA.decision().proceeds()).isTrue();
        Future<Attempt> enteredB = Scenarios.enterAsync(zk.newPool(1), b.gate(), zk.key(), Timing.WAIT);
        Scenarios.eventually("B waits, watching scope 0", () -> Scenarios.watched(zk, zk.keyPath() + "/0"));

        // When the leader dies, and A then finishes its crossing once the ensemble is back
        zk.ensemble().killLeader();
        assertThat(zk.ensemble().awaitLeader(Timing.EVENTUALLY)).isTrue();
        Scenarios.eventually("A reconnected", () -> a.client().getZookeeperClient().isConnected());
        Crossing crossing = attemptA.cross(zk.provider().verified());
        attemptA.close();

        // Then B never delivers a second time
        Attempt attemptB = enteredB.get(Timing.WAIT.toMillis() * 2, TimeUnit.MILLISECONDS);
        try (attemptB) {
            if (attemptB.decision().proceeds()) {
                assertThat(crossing).isInstanceOf(Crossing.Refused.class);
                attemptB.cross(zk.provider().verified());
            }
        }
        assertThat(zk.provider().deliveries()).isEqualTo(1);
        assertThat(a.gate().inspect(zk.key().key()).state()).isEqualTo(ScopeState.SENT_VERIFIED);
    }
}
