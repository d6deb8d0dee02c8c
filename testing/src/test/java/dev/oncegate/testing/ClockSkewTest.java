package dev.oncegate.testing;

import dev.oncegate.ScopeState;
import static org.assertj.core.api.Assertions.assertThat;

import java.time.Clock;
import java.time.Duration;

import dev.oncegate.Attempt;
import dev.oncegate.Crossing;
import dev.oncegate.Decision;
import dev.oncegate.KeyHistory;
import dev.oncegate.StopReason;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * SPEC §4 "Clocks affect only liveness, never safety": a contender whose clock runs an hour
 * ahead sees every lease as lapsed and takes it over at once. That may cost the honest
 * executor its turn, but never yields a second delivery.
 */
class ClockSkewTest {

    @RegisterExtension
    static final ZooKeeperExtension zk = ZooKeeperExtension.standalone();

    static final Clock AHEAD = Clock.offset(Clock.systemUTC(), Duration.ofHours(1));

    @Test
    void contenderClockAhead_takesOverAtOnceButOnlyOneDelivers() throws Exception {
        // Given executor A proceeded with a 30 s lease, and B's clock runs an hour ahead
        Worker a = zk.newWorker("task-a");
        Worker b = zk.newWorker("task-b", builder -> builder.clock(AHEAD));
        Attempt attemptA = zk.track(a.gate().enter(zk.key()));
        assertThat(attemptA.decision().proceeds()).isTrue();

        // When B enters: A's lease looks long lapsed to B
        Attempt attemptB = zk.track(b.gate().enter(zk.key()));
        assertThat(attemptB.decision()).isInstanceOf(Decision.Proceed.class);

        // Then at most one of them can cross: B (the later token) delivers, A is fenced
        Crossing crossingA = attemptA.cross(zk.provider().verified());
        Crossing crossingB = attemptB.cross(zk.provider().verified());
        assertThat(crossingA).isInstanceOfSatisfying(Crossing.Refused.class,
                r -> assertThat(r.stop().reason()).isEqualTo(StopReason.FENCED));
        assertThat(crossingB).isInstanceOf(Crossing.Crossed.class);
        assertThat(zk.provider().deliveries()).isEqualTo(1);
        assertThat(zk.provider().ledger().get(0).taskId()).isEqualTo("task-b");
        assertThat(a.gate().inspect(zk.key().key()).state()).isEqualTo(ScopeState.SENT_VERIFIED);
    }

    @Test
    void contenderClockAhead_cannotTakeOverAnArmedScope() throws Exception {
        // Given A armed scope 0 and is inside its action; B's clock runs an hour ahead
        Worker a = zk.newWorker("task-a");
        Worker b = zk.newWorker("task-b", builder -> builder.clock(AHEAD));
        Attempt attemptA = zk.track(a.gate().enter(zk.key()));
        CrossingInFlight crossingA = zk.track(CrossingInFlight.cross(attemptA, zk.provider().verified()));
        assertThat(crossingA.awaitInAction(Timing.EVENTUALLY)).isTrue();

        // When B enters (the armed lease looks lapsed to B)
        try (Attempt attemptB = b.gate().enter(zk.key())) {
            // Then B stops unknown: armed means consumed, whatever the clock says
            assertThat(attemptB.decision()).isInstanceOfSatisfying(Decision.StopUnknown.class,
                    s -> assertThat(s.reason()).isEqualTo(StopReason.ARMED_WITHOUT_OUTCOME));
        }
        assertThat(crossingA.releaseAndAwait(Timing.EVENTUALLY)).isInstanceOf(Crossing.Crossed.class);
        assertThat(zk.provider().deliveries()).isEqualTo(1);
        KeyHistory history = a.gate().inspect(zk.key().key());
        assertThat(history.state()).isEqualTo(ScopeState.SENT_VERIFIED);
    }
}
