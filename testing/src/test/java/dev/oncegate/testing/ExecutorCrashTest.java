package dev.oncegate.testing;

import dev.oncegate.ScopeState;
import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import dev.oncegate.Attempt;
import dev.oncegate.Crossing;
import dev.oncegate.Decision;
import dev.oncegate.KeyHistory;
import dev.oncegate.Outcome;
import dev.oncegate.StopReason;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** SPEC §9 "an executor crashing before arming, after arming" (during arming: {@link ArmingUnderConnectionLossTest}). */
class ExecutorCrashTest {

    @RegisterExtension
    static final ZooKeeperExtension zk = ZooKeeperExtension.standalone();

    @Test
    void crashBeforeArming_waitingContenderTakesOverAndDeliversOnce() throws Exception {
        // Given executor A holds the lease (30 s TTL) and contender B waits for it
        Worker a = zk.newWorker("task-a");
        Attempt attemptA = a.gate().enter(zk.key());
        assertThat(attemptA.decision().proceeds()).isTrue();
        SimpleMeterRegistry registryB = new SimpleMeterRegistry();
        Worker b = zk.newWorker("task-b", builder -> builder.meterRegistry(registryB));
        ExecutorService pool = zk.newPool(1);
        Future<Attempt> enteredB = Scenarios.enterAsync(pool, b.gate(), zk.key(), Timing.WAIT);
        // (outside the election while A's lease is live: B watches scope 0 and A's election node)
        Scenarios.eventually("B waits, watching scope 0", () -> Scenarios.watched(zk, zk.keyPath() + "/0"));

        // When A's process dies before arming (its client closes; the attempt is never closed)
        long crashed = System.nanoTime();
        a.crash();

        // Then B takes the abandoned lease over well before the TTL and delivers exactly once
        Attempt attemptB = zk.track(enteredB.get(Timing.WAIT.toMillis(), TimeUnit.MILLISECONDS));
        assertThat(Duration.ofNanos(System.nanoTime() - crashed)).isLessThan(Duration.ofSeconds(20));
        assertThat(attemptB.decision()).isInstanceOfSatisfying(Decision.Proceed.class, p -> assertThat(p.scope()).isZero());
        assertThat(registryB.counter("oncegate.lease.takeovers", "zk_namespace", zk.namespace(), "cause", "abandoned").count()).isEqualTo(1.0);
        assertThat(attemptB.cross(zk.provider().verified())).isInstanceOf(Crossing.Crossed.class);
        assertThat(zk.provider().deliveries()).isEqualTo(1);
        assertThat(zk.provider().ledger().get(0).taskId()).isEqualTo("task-b");
        KeyHistory history = b.gate().inspect(zk.key().key());
        assertThat(history.state()).isEqualTo(ScopeState.SENT_VERIFIED);
        assertThat(history.scopes()).hasSize(1);
    }

    @Test
    void armedWithoutOutcome_waiterWhoseWaitPassesThreeTtls_stopsUnknownNotWaitExpired() throws Exception {
        // Given executor A armed scope 0 and crashed inside its action (found by the simulator: seed 1299)
        Worker a = zk.newWorker("task-a");
        Attempt attemptA = a.gate().enter(zk.key());
        CrossingInFlight crossingA = zk.track(CrossingInFlight.cross(attemptA, zk.provider().verified()));
        assertThat(crossingA.awaitInAction(Timing.EVENTUALLY)).isTrue();
        a.crash();

        // When a contender with a short lease TTL waits longer than three of them (the loop's own bound)
        Worker waiter = zk.newWorker("task-waiter", builder -> builder.leaseTtl(Timing.SHORT_LEASE));
        try (Attempt other = waiter.gate().enter(zk.key(), Timing.SHORT_LEASE.multipliedBy(4))) {

            // Then its wait ends with the rules' decision, unknown (armed without outcome), not "wait expired"
            assertThat(other.decision()).isInstanceOfSatisfying(Decision.StopUnknown.class,
                    s -> assertThat(s.reason()).isEqualTo(StopReason.ARMED_WITHOUT_OUTCOME));
        }
        assertThat(zk.provider().deliveries()).isZero();
        crossingA.releaseAndAwait(Timing.EVENTUALLY);
    }

    @Test
    void crashAfterArming_othersStopUnknownAndAtMostOneDelivery() throws Exception {
        // Given executor A armed scope 0 and is inside its (slow) action
        Worker a = zk.newWorker("task-a");
        Attempt attemptA = a.gate().enter(zk.key());
        CrossingInFlight crossingA = zk.track(CrossingInFlight.cross(attemptA, zk.provider().verified()));
        assertThat(crossingA.awaitInAction(Timing.EVENTUALLY)).isTrue();

        // When A's process loses its client (crash) while the action is still running
        a.crash();

        // Then contenders, waiting or not, stop unknown: armed without outcome
        for (Duration wait : new Duration[] {Duration.ZERO, Timing.scaled(1_500)}) {
            try (Attempt other = zk.newWorker("task-" + wait.toMillis()).gate().enter(zk.key(), wait)) {
                assertThat(other.decision()).isInstanceOfSatisfying(Decision.StopUnknown.class, s -> {
                    assertThat(s.reason()).isEqualTo(StopReason.ARMED_WITHOUT_OUTCOME);
                    assertThat(s.evidence().path()).isEqualTo(zk.keyPath() + "/0/armed");
                    assertThat(s.evidence().task()).isEqualTo("task-a");
                });
            }
        }
        assertThat(zk.provider().deliveries()).isZero();

        // and when the zombie action finishes, it delivered once but cannot record its outcome
        Crossing crossed = crossingA.releaseAndAwait(Timing.EVENTUALLY);
        assertThat(crossed).isInstanceOfSatisfying(Crossing.Crossed.class, c -> {
            assertThat(c.outcome()).isEqualTo(Outcome.SENT_VERIFIED);
            assertThat(c.recorded()).isFalse();
        });
        assertThat(zk.provider().deliveries()).isEqualTo(1);
        Worker later = zk.newWorker("task-later");
        KeyHistory history = later.gate().inspect(zk.key().key());
        assertThat(history.state()).isEqualTo(ScopeState.ARMED);
        assertThat(history.scopes().get(0).outcome()).isNull();
        try (Attempt attempt = later.gate().enter(zk.key())) {
            assertThat(attempt.decision()).isInstanceOf(Decision.StopUnknown.class);
        }
        assertThat(zk.provider().deliveries()).isEqualTo(1);
    }
}
