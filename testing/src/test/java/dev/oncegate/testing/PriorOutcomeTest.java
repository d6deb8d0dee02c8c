package dev.oncegate.testing;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import dev.oncegate.Attempt;
import dev.oncegate.Crossing;
import dev.oncegate.Decision;
import dev.oncegate.Gate;
import dev.oncegate.KeyHistory;
import dev.oncegate.Outcome;
import dev.oncegate.ScopeState;
import dev.oncegate.StopReason;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * SPEC §9 "a prior sent_verified" and "a prior task proven not_sent": a prior outcome decides
 * every later contender. After sent_verified the key is consumed for good; after a proven
 * not_sent it is free again, in a new scope, for one executor.
 */
class PriorOutcomeTest {

    @RegisterExtension
    static final ZooKeeperExtension zk = ZooKeeperExtension.standalone();

    @Test
    void priorNotSent_nextContenderProceedsInScopeOneAndDelivers() throws Exception {
        // Given a prior executor whose provider rejected the delivery with proof
        Worker first = zk.newWorker("task-a");
        try (Attempt a = first.gate().enter(zk.key())) {
            Crossing c = a.cross(zk.provider().rejects("HTTP 413: attachment too large, nothing stored"));
            assertThat(c).isInstanceOfSatisfying(Crossing.Crossed.class,
                    x -> assertThat(x.outcome()).isEqualTo(Outcome.NOT_SENT));
        }
        assertThat(zk.provider().deliveries()).isZero();

        // When the next contender enters
        Worker second = zk.newWorker("task-b");
        Crossing crossing;
        try (Attempt b = second.gate().enter(zk.key())) {
            // Then it proceeds in scope 1 and delivers
            assertThat(b.decision()).isInstanceOfSatisfying(Decision.Proceed.class,
                    p -> assertThat(p.scope()).isEqualTo(1));
            crossing = b.cross(zk.provider().verified());
        }
        assertThat(crossing).isInstanceOf(Crossing.Crossed.class);
        assertThat(zk.provider().deliveries()).isEqualTo(1);
        assertThat(zk.provider().ledger().get(0).scope()).isEqualTo(1);
        KeyHistory history = second.gate().inspect(zk.key().key());
        assertThat(Scenarios.outcomes(history)).containsExactly("not_sent", "sent_verified");
        assertThat(history.scopes().get(1).opened()).isEqualTo("not_sent:0");
        assertThat(history.state()).isEqualTo(ScopeState.SENT_VERIFIED);

        // and anyone after that stops: the key is consumed
        try (Attempt c = zk.newWorker("task-c").gate().enter(zk.key())) {
            assertThat(c.decision()).isInstanceOf(Decision.StopSent.class);
        }
        assertThat(zk.provider().deliveries()).isEqualTo(1);
    }

    @Test
    void waitersBlockedOnScopeZero_moveToScopeOneAndExactlyOneDelivers() throws Exception {
        // Given an executor in scope 0 whose action is still running
        Worker executor = zk.newWorker("executor");
        Attempt a = zk.track(executor.gate().enter(zk.key()));
        assertThat(a.decision().proceeds()).isTrue();
        CrossingInFlight executorCrossing = zk.track(CrossingInFlight.cross(a,
                zk.provider().rejects("provider refused: quota exhausted, nothing stored")));
        assertThat(executorCrossing.awaitInAction(Timing.EVENTUALLY)).isTrue();

        // and four waiters blocked on scope 0 (armed, no outcome yet)
        List<Gate> waiters = new ArrayList<>();
        for (int i = 0; i < 4; i++) {
            waiters.add(zk.newGate("waiter-" + i));
        }
        Race.Started waiting = zk.track(Race.of(waiters).start(zk.key(), Timing.WAIT, zk.provider().verified()));
        // (blocked: all four waiters watch scope 0 (its children: the outcome to come); the executor, which created the
        // key and led its election at once, never needed a watch)
        Scenarios.eventually("four waiters block on scope 0",
                () -> zk.server().watchingSessions(zk.keyPath() + "/0") >= 4);

        // When the executor proves not_sent
        assertThat(executorCrossing.releaseAndAwait(Timing.EVENTUALLY))
                .isInstanceOfSatisfying(Crossing.Crossed.class, c -> assertThat(c.outcome()).isEqualTo(Outcome.NOT_SENT));

        // Then the waiters contend for scope 1: exactly one delivers there, the rest stop_sent
        List<Race.Entry> entries = waiting.entries(Timing.EVENTUALLY.multipliedBy(2));
        assertThat(entries).filteredOn(e -> e.crossed() && e.decision() instanceof Decision.Proceed p && p.scope() == 1)
                .hasSize(1);
        assertThat(entries).filteredOn(e -> e.decision() instanceof Decision.StopSent).hasSize(3);
        assertThat(zk.provider().deliveries()).isEqualTo(1);
        assertThat(zk.provider().ledger().get(0).scope()).isEqualTo(1);
        KeyHistory history = executor.gate().inspect(zk.key().key());
        assertThat(Scenarios.outcomes(history)).containsExactly("not_sent", "sent_verified");
    }

    @Test
    void priorSentVerified_everyLaterContenderStopsSent() throws Exception {
        // Given an effect delivered and verified by task-a
        Worker first = zk.newWorker("task-a");
        try (Attempt a = first.gate().enter(zk.key())) {
            a.cross(zk.provider().verified());
        }
        KeyHistory before = first.gate().inspect(zk.key().key());

        // When ten later contenders (other tasks, other sessions, even the same gate) enter
        for (int i = 0; i < 10; i++) {
            Worker w = i % 2 == 0 ? zk.newWorker("task-" + i) : first;
            try (Attempt attempt = w.gate().enter(zk.key(), i == 9 ? Timing.scaled(2_000) : Duration.ZERO)) {
                // Then each stops with stop_sent, resting on the outcome record of scope 0
                assertThat(attempt.decision()).isInstanceOfSatisfying(Decision.StopSent.class, s -> {
                    assertThat(s.reason()).isEqualTo(StopReason.SENT_VERIFIED);
                    assertThat(s.evidence().path()).isEqualTo(zk.keyPath() + "/0/armed/outcome");
                    assertThat(s.evidence().task()).isEqualTo("task-a");
                    assertThat(s.evidence().scope()).isZero();
                });
            }
        }

        // and still exactly one delivery, and the records did not change
        assertThat(zk.provider().deliveries()).isEqualTo(1);
        KeyHistory after = first.gate().inspect(zk.key().key());
        assertThat(after.scopes()).hasSize(1);
        assertThat(after.scopes().get(0).version()).isEqualTo(before.scopes().get(0).version());
        assertThat(after.scopes().get(0).mzxid()).isEqualTo(before.scopes().get(0).mzxid());
        assertThat(after.scopes().get(0).outcome()).isEqualTo(before.scopes().get(0).outcome());
    }
}
