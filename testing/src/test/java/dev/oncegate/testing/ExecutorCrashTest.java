package dev.oncegate.testing;

import dev.oncegate.ScopeState;
import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.concurrent.CountDownLatch;
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

/** SPEC §9 "an executor crashing before arming, after arming" (during arming: {@link ArmingUnderConnectionLossTest}). */
class ExecutorCrashTest extends ServerScenario {

    @Test
    void crashBeforeArming_waitingContenderTakesOverAndDeliversOnce() throws Exception {
        // Given executor A holds the lease (30 s TTL) and contender B waits for it
        Worker a = worker("task-a");
        Attempt attemptA = a.gate().enter(key);
        assertThat(attemptA.decision().proceeds()).isTrue();
        SimpleMeterRegistry registryB = new SimpleMeterRegistry();
        Worker b = worker("task-b", builder -> builder.meterRegistry(registryB));
        ExecutorService pool = pool(1);
        Future<Attempt> enteredB = Scenarios.enterAsync(pool, b.gate(), key, Timing.WAIT);
        Scenarios.eventually("B joined scope 0's election", () -> Scenarios.latchMembers(a.client(), keyPath(), 0) == 2);

        // When A's process dies before arming (its client closes; the attempt is never closed)
        long crashed = System.nanoTime();
        a.crash();

        // Then B takes the abandoned lease over well before the TTL and delivers exactly once
        Attempt attemptB = track(enteredB.get(Timing.WAIT.toMillis(), TimeUnit.MILLISECONDS));
        assertThat(Duration.ofNanos(System.nanoTime() - crashed)).isLessThan(Duration.ofSeconds(20));
        assertThat(attemptB.decision()).isInstanceOfSatisfying(Decision.Proceed.class, p -> assertThat(p.scope()).isZero());
        assertThat(registryB.counter("oncegate.lease.takeovers", "zk_namespace", ns, "cause", "abandoned").count()).isEqualTo(1.0);
        assertThat(attemptB.cross(provider.verified())).isInstanceOf(Crossing.Crossed.class);
        assertThat(provider.deliveries()).isEqualTo(1);
        assertThat(provider.ledger().get(0).taskId()).isEqualTo("task-b");
        KeyHistory history = b.gate().inspect(key.key());
        assertThat(history.state()).isEqualTo(ScopeState.SENT_VERIFIED);
        assertThat(history.scopes()).hasSize(1);
    }

    @Test
    void crashAfterArming_othersStopUnknownAndAtMostOneDelivery() throws Exception {
        // Given executor A armed scope 0 and is inside its (slow) action
        Worker a = worker("task-a");
        Attempt attemptA = a.gate().enter(key);
        CountDownLatch entered = new CountDownLatch(1);
        CountDownLatch release = new CountDownLatch(1);
        Future<Crossing> crossingA = pool(1).submit(() -> attemptA.cross(provider.blocking(entered, release)));
        assertThat(entered.await(Timing.EVENTUALLY.toMillis(), TimeUnit.MILLISECONDS)).isTrue();

        // When A's process loses its client (crash) while the action is still running
        a.crash();

        // Then contenders, waiting or not, stop unknown: armed without outcome
        for (Duration wait : new Duration[] {Duration.ZERO, Timing.scaled(1_500)}) {
            try (Attempt other = worker("task-" + wait.toMillis()).gate().enter(key, wait)) {
                assertThat(other.decision()).isInstanceOfSatisfying(Decision.StopUnknown.class, s -> {
                    assertThat(s.reason()).isEqualTo(StopReason.ARMED_WITHOUT_OUTCOME);
                    assertThat(s.evidence().path()).startsWith(keyPath() + "/0/armed-");
                    assertThat(s.evidence().task()).isEqualTo("task-a");
                });
            }
        }
        assertThat(provider.deliveries()).isZero();

        // and when the zombie action finishes, it delivered once but cannot record its outcome
        release.countDown();
        Crossing crossed = crossingA.get(Timing.EVENTUALLY.toMillis(), TimeUnit.MILLISECONDS);
        assertThat(crossed).isInstanceOfSatisfying(Crossing.Crossed.class, c -> {
            assertThat(c.outcome()).isEqualTo(Outcome.SENT_VERIFIED);
            assertThat(c.recorded()).isFalse();
        });
        assertThat(provider.deliveries()).isEqualTo(1);
        Worker later = worker("task-later");
        KeyHistory history = later.gate().inspect(key.key());
        assertThat(history.state()).isEqualTo(ScopeState.ARMED);
        assertThat(history.scopes().get(0).outcome()).isNull();
        try (Attempt attempt = later.gate().enter(key)) {
            assertThat(attempt.decision()).isInstanceOf(Decision.StopUnknown.class);
        }
        assertThat(provider.deliveries()).isEqualTo(1);
    }
}
