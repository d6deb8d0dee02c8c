package dev.oncegate.testing;

import dev.oncegate.ScopeState;
import static org.assertj.core.api.Assertions.assertThat;

import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;

import dev.oncegate.Attempt;
import dev.oncegate.Crossing;
import dev.oncegate.Decision;
import dev.oncegate.KeyHistory;
import dev.oncegate.Outcome;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * An interrupt that arrives while the arming write is in flight cannot turn it into an unknown
 * one: the executor waits for the reply, learns that it armed, never invokes the action, and
 * records {@code not_sent} (the library knows it never called it) — so nothing is consumed.
 */
class ArmingInterruptedInFlightTest {

    @RegisterExtension
    static final ZooKeeperExtension zk = ZooKeeperExtension.standaloneWithAmbiguousWrites();

    @Test
    void interruptWhileTheArmIsInFlight_armedButNeverInvoked_recordsNotSent_andTheKeyStaysFree() throws Exception {
        Worker a = zk.newWorker("task-a", Timing.LONG_SESSION, b -> { }); // the hold must not outlive the connection
        AtomicReference<Thread> executor = new AtomicReference<>();
        AtomicBoolean stillInterrupted = new AtomicBoolean();
        // Given the server holds the next arming request before applying it
        AmbiguousWriteCnxnFactory.Hold hold = AmbiguousWriteCnxnFactory.holdNextArmingRequest();
        Future<Crossing> crossing = zk.newPool(1).submit(() -> {
            executor.set(Thread.currentThread());
            try (Attempt attempt = a.gate().enter(zk.key())) {
                assertThat(attempt.decision().proceeds()).isTrue();
                Crossing c = attempt.cross(zk.provider().verified());
                stillInterrupted.set(Thread.interrupted());
                return c;
            }
        });
        assertThat(hold.awaitHeld(Timing.EVENTUALLY)).as("the arming request reached the server").isTrue();

        // When the executor is interrupted while it waits for the reply, and then the server applies the arm
        executor.get().interrupt();
        hold.release();

        // Then the scope was armed, the action never ran, and not_sent is recorded; the interrupt is kept
        Crossing crossed = crossing.get(Timing.EVENTUALLY.toMillis(), TimeUnit.MILLISECONDS);
        assertThat(a.connectionInterrupted()).as("premise: the connection outlived the hold").isFalse();
        assertThat(crossed)
                .isInstanceOfSatisfying(Crossing.Crossed.class, c -> {
                    assertThat(c.outcome()).isEqualTo(Outcome.NOT_SENT);
                    assertThat(c.recorded()).isTrue();
                });
        assertThat(stillInterrupted).isTrue();
        assertThat(zk.provider().deliveries()).isZero();
        KeyHistory history = a.gate().inspect(zk.key().key());
        assertThat(history.scopes()).extracting(KeyHistory.Scope::state).containsExactly(ScopeState.NOT_SENT, ScopeState.OPEN);
        assertThat(history.scopes().get(0).armed()).isNotNull();
        // and the next contender delivers in scope 1
        try (Attempt b = zk.newGate("task-b").enter(zk.key())) {
            assertThat(b.decision()).isInstanceOfSatisfying(Decision.Proceed.class, p -> assertThat(p.scope()).isEqualTo(1));
            b.cross(zk.provider().verified());
        }
        assertThat(zk.provider().ledger()).singleElement().satisfies(d -> assertThat(d.scope()).isEqualTo(1));
    }
}
