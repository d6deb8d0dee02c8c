package dev.oncegate.testing;

import dev.oncegate.ScopeState;
import static org.assertj.core.api.Assertions.assertThat;

import java.time.Clock;
import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import dev.oncegate.Attempt;
import dev.oncegate.Crossing;
import dev.oncegate.Decision;
import dev.oncegate.KeyHistory;
import dev.oncegate.StopReason;
import org.junit.jupiter.api.Test;

/**
 * SPEC §4 "Clocks affect only liveness, never safety": a contender whose clock runs an hour
 * ahead sees every lease as lapsed and takes it over at once. That may cost the honest
 * executor its turn, but never yields a second delivery.
 */
class ClockSkewTest extends ServerScenario {

    static final Clock AHEAD = Clock.offset(Clock.systemUTC(), Duration.ofHours(1));

    @Test
    void contenderClockAhead_takesOverAtOnceButOnlyOneDelivers() throws Exception {
        // Given executor A proceeded with a 30 s lease, and B's clock runs an hour ahead
        Worker a = worker("task-a");
        Worker b = worker("task-b", builder -> builder.clock(AHEAD));
        Attempt attemptA = track(a.gate().enter(key));
        assertThat(attemptA.decision().proceeds()).isTrue();

        // When B enters: A's lease looks long lapsed to B
        Attempt attemptB = track(b.gate().enter(key));
        assertThat(attemptB.decision()).isInstanceOf(Decision.Proceed.class);

        // Then at most one of them can cross: B (the later token) delivers, A is fenced
        Crossing crossingA = attemptA.cross(provider.verified());
        Crossing crossingB = attemptB.cross(provider.verified());
        assertThat(crossingA).isInstanceOfSatisfying(Crossing.Refused.class,
                r -> assertThat(r.stop().reason()).isEqualTo(StopReason.FENCED));
        assertThat(crossingB).isInstanceOf(Crossing.Crossed.class);
        assertThat(provider.deliveries()).isEqualTo(1);
        assertThat(provider.ledger().get(0).taskId()).isEqualTo("task-b");
        assertThat(a.gate().inspect(key.key()).state()).isEqualTo(ScopeState.SENT_VERIFIED);
    }

    @Test
    void contenderClockAhead_cannotTakeOverAnArmedScope() throws Exception {
        // Given A armed scope 0 and is inside its action; B's clock runs an hour ahead
        Worker a = worker("task-a");
        Worker b = worker("task-b", builder -> builder.clock(AHEAD));
        Attempt attemptA = track(a.gate().enter(key));
        CountDownLatch entered = new CountDownLatch(1);
        CountDownLatch release = new CountDownLatch(1);
        Future<Crossing> crossingA = pool(1).submit(() -> attemptA.cross(provider.blocking(entered, release)));
        assertThat(entered.await(Timing.EVENTUALLY.toMillis(), TimeUnit.MILLISECONDS)).isTrue();

        // When B enters (the armed lease looks lapsed to B)
        try (Attempt attemptB = b.gate().enter(key)) {
            // Then B stops unknown: armed means consumed, whatever the clock says
            assertThat(attemptB.decision()).isInstanceOfSatisfying(Decision.StopUnknown.class,
                    s -> assertThat(s.reason()).isEqualTo(StopReason.ARMED_WITHOUT_OUTCOME));
        }
        release.countDown();
        assertThat(crossingA.get(Timing.EVENTUALLY.toMillis(), TimeUnit.MILLISECONDS)).isInstanceOf(Crossing.Crossed.class);
        assertThat(provider.deliveries()).isEqualTo(1);
        KeyHistory history = a.gate().inspect(key.key());
        assertThat(history.state()).isEqualTo(ScopeState.SENT_VERIFIED);
    }
}
