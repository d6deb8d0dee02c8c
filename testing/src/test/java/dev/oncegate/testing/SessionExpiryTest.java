package dev.oncegate.testing;

import dev.oncegate.ScopeState;
import static org.assertj.core.api.Assertions.assertThat;

import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import dev.oncegate.Attempt;
import dev.oncegate.BoundaryAction;
import dev.oncegate.Crossing;
import dev.oncegate.Decision;
import dev.oncegate.KeyHistory;
import dev.oncegate.StopReason;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * SPEC §9 "session expiry at each step", with the session ended on the server
 * ({@link Faults#expireSession}): the victim's ephemerals vanish, as in a real expiry.
 */
class SessionExpiryTest {

    @RegisterExtension
    static final ZooKeeperExtension zk = ZooKeeperExtension.standalone();

    private BoundaryAction counting(AtomicInteger invoked) {
        return ctx -> {
            invoked.incrementAndGet();
            return zk.provider().verified().deliver(ctx);
        };
    }

    /** Expires the worker's session and waits until its client runs on a new one. */
    private void expireAndAwaitNewSession(Worker w) throws Exception {
        long old = Faults.expireSession(w.client(), Timing.EVENTUALLY);
        Scenarios.eventually("a new session for " + w.taskId(), () -> w.client().getZookeeperClient().isConnected()
                && Faults.sessionId(w.client()) != old && Faults.sessionId(w.client()) != 0);
    }

    @Test
    void expiredWhileWaitingAsContender_neverDeliversTwice() throws Exception {
        // Given executor A holds the lease and contender B waits in scope 0's election
        Worker a = zk.newWorker("task-a");
        Worker b = zk.newWorker("task-b");
        Attempt attemptA = zk.track(a.gate().enter(zk.key()));
        assertThat(attemptA.decision().proceeds()).isTrue();
        Future<Attempt> enteredB = Scenarios.enterAsync(zk.newPool(1), b.gate(), zk.key(), Timing.WAIT);
        Scenarios.eventually("B waits, watching scope 0", () -> Scenarios.watched(zk, zk.keyPath() + "/0"));

        // When B's session expires while it waits, and then A delivers
        expireAndAwaitNewSession(b);
        assertThat(attemptA.cross(zk.provider().verified())).isInstanceOf(Crossing.Crossed.class);

        // Then B does not proceed: it learns the key was sent (or fails closed)
        Attempt attemptB = zk.track(enteredB.get(Timing.WAIT.toMillis(), TimeUnit.MILLISECONDS));
        assertThat(attemptB.decision()).isInstanceOfAny(Decision.StopSent.class, Decision.StopUnavailable.class);
        assertThat(zk.provider().deliveries()).isEqualTo(1);
        assertThat(a.gate().inspect(zk.key().key()).state()).isEqualTo(ScopeState.SENT_VERIFIED);
    }

    @Test
    void expiredAfterProceedBeforeCheckpoint_checkpointStopsConnectionLostAndAnotherDeliversOnce() throws Exception {
        // Given executor A proceeded
        Worker a = zk.newWorker("task-a");
        Attempt attemptA = zk.track(a.gate().enter(zk.key()));
        assertThat(attemptA.decision().proceeds()).isTrue();

        // When its session expires (and its client reconnects with a new session) before a checkpoint
        expireAndAwaitNewSession(a);
        Decision checkpoint = attemptA.checkpoint("picker-open");

        // Then the checkpoint stops it: unavailable, connection lost
        assertThat(checkpoint).isInstanceOfSatisfying(Decision.StopUnavailable.class,
                s -> assertThat(s.reason()).isEqualTo(StopReason.CONNECTION_LOST));
        assertThat(zk.provider().deliveries()).isZero();
        assertThat(a.gate().inspect(zk.key().key()).scopes().get(0).armed()).isNull();

        // and another contender takes the abandoned lease over and delivers exactly once
        try (Attempt attemptB = zk.newWorker("task-b").gate().enter(zk.key(), Timing.WAIT)) {
            assertThat(attemptB.decision().proceeds()).isTrue();
            assertThat(attemptB.cross(zk.provider().verified())).isInstanceOf(Crossing.Crossed.class);
        }
        assertThat(zk.provider().deliveries()).isEqualTo(1);
        assertThat(zk.provider().ledger().get(0).taskId()).isEqualTo("task-b");
    }

    @Test
    void expiredAfterProceedBeforeCross_crossingRefusedActionNeverInvoked() throws Exception {
        // Given executor A proceeded and passed a checkpoint
        Worker a = zk.newWorker("task-a");
        Attempt attemptA = zk.track(a.gate().enter(zk.key()));
        assertThat(attemptA.checkpoint("picker-open").proceeds()).isTrue();

        // When its session expires (client already on a new session) before it crosses
        expireAndAwaitNewSession(a);
        AtomicInteger invoked = new AtomicInteger();
        Crossing crossing = attemptA.cross(counting(invoked));

        // Then arming is refused (connection lost) and the action never ran
        Scenarios.assertRefused(crossing, Decision.StopUnavailable.class, StopReason.CONNECTION_LOST);
        assertThat(invoked).hasValue(0);
        assertThat(zk.provider().deliveries()).isZero();
        KeyHistory history = a.gate().inspect(zk.key().key());
        assertThat(history.scopes().get(0).armed()).isNull();
        assertThat(history.state()).isIn(ScopeState.LEASED, ScopeState.OPEN);
    }

    @Test
    void expiredImmediatelyBeforeCross_crossingRefusedWhetherOrNotTheClientNoticed() throws Exception {
        // Given executor A proceeded
        Worker a = zk.newWorker("task-a");
        Attempt attemptA = zk.track(a.gate().enter(zk.key()));
        assertThat(attemptA.decision().proceeds()).isTrue();

        // When the server expires its session and A crosses at once (it may not have noticed)
        Faults.expireSession(a.client(), Timing.EVENTUALLY);
        AtomicInteger invoked = new AtomicInteger();
        Crossing crossing = attemptA.cross(counting(invoked));

        // Then arming is refused, connection lost or write result unknown, and the action never ran
        assertThat(crossing).isInstanceOfSatisfying(Crossing.Refused.class, r -> {
            assertThat(r.stop()).isInstanceOf(Decision.StopUnavailable.class);
            assertThat(r.stop().reason()).isIn(StopReason.CONNECTION_LOST, StopReason.WRITE_RESULT_UNKNOWN);
        });
        assertThat(invoked).hasValue(0);
        assertThat(zk.provider().deliveries()).isZero();
        Scenarios.eventually("reconnected", () -> a.client().getZookeeperClient().isConnected());
        KeyHistory history = a.gate().inspect(zk.key().key());
        // a write on an expired session is never applied
        assertThat(history.scopes().get(0).armed()).isNull();
    }

    @Test
    void expiredDuringTheAction_outcomeRecordedOrScopeReadsUnknown_neverTwoDeliveries() throws Exception {
        // Given executor A armed scope 0 and is inside its action
        Worker a = zk.newWorker("task-a");
        Attempt attemptA = zk.track(a.gate().enter(zk.key()));
        CrossingInFlight crossingA = zk.track(CrossingInFlight.cross(attemptA, zk.provider().verified()));
        assertThat(crossingA.awaitInAction(Timing.EVENTUALLY)).isTrue();

        // When the server expires A's session (its latch node vanishes)
        expireAndAwaitNewSession(a);

        // Then a contender stops unknown while A is still inside the action
        try (Attempt other = zk.newWorker("task-b").gate().enter(zk.key(), Timing.scaled(1_000))) {
            assertThat(other.decision()).isInstanceOfSatisfying(Decision.StopUnknown.class,
                    s -> assertThat(s.reason()).isEqualTo(StopReason.ARMED_WITHOUT_OUTCOME));
        }
        // and when the action completes, A records its outcome (from its new session: the armed
        // scope cannot be taken over, so the outcome multi's version check still holds) or leaves it armed
        Crossing crossed = crossingA.releaseAndAwait(Timing.EVENTUALLY);
        assertThat(crossed).isInstanceOf(Crossing.Crossed.class);
        assertThat(zk.provider().deliveries()).isEqualTo(1);
        KeyHistory history = a.gate().inspect(zk.key().key());
        assertThat(history.state()).isIn(ScopeState.SENT_VERIFIED, ScopeState.ARMED);
        assertThat(((Crossing.Crossed) crossed).recorded()).isEqualTo(history.state() == ScopeState.SENT_VERIFIED);
        try (Attempt late = zk.newWorker("task-c").gate().enter(zk.key())) {
            assertThat(late.decision()).isInstanceOfAny(Decision.StopSent.class, Decision.StopUnknown.class);
        }
        assertThat(zk.provider().deliveries()).isEqualTo(1);
    }
}
