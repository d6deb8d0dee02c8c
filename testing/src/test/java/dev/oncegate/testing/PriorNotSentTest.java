package dev.oncegate.testing;

import dev.oncegate.ScopeState;
import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import dev.oncegate.Attempt;
import dev.oncegate.BoundaryAction;
import dev.oncegate.Crossing;
import dev.oncegate.Decision;
import dev.oncegate.KeyHistory;
import dev.oncegate.Outcome;
import dev.oncegate.ProvenNotSentException;
import org.junit.jupiter.api.Test;

/** SPEC §9 "a prior task proven not_sent": the key is free again, in a new scope, for one executor. */
class PriorNotSentTest extends ServerScenario {

    @Test
    void priorNotSent_nextContenderProceedsInScopeOneAndDelivers() throws Exception {
        // Given a prior executor whose provider rejected the delivery with proof
        Worker first = worker("task-a");
        try (Attempt a = first.gate().enter(key)) {
            Crossing c = a.cross(provider.rejects("HTTP 413: attachment too large, nothing stored"));
            assertThat(c).isInstanceOfSatisfying(Crossing.Crossed.class,
                    x -> assertThat(x.outcome()).isEqualTo(Outcome.NOT_SENT));
        }
        assertThat(provider.deliveries()).isZero();

        // When the next contender enters
        Worker second = worker("task-b");
        Crossing crossing;
        try (Attempt b = second.gate().enter(key)) {
            // Then it proceeds in scope 1 and delivers
            assertThat(b.decision()).isInstanceOfSatisfying(Decision.Proceed.class,
                    p -> assertThat(p.scope()).isEqualTo(1));
            crossing = b.cross(provider.verified());
        }
        assertThat(crossing).isInstanceOf(Crossing.Crossed.class);
        assertThat(provider.deliveries()).isEqualTo(1);
        assertThat(provider.ledger().get(0).scope()).isEqualTo(1);
        KeyHistory history = second.gate().inspect(key.key());
        assertThat(history.scopes()).hasSize(2);
        assertThat(Scenarios.outcomeOf(history, 0)).isEqualTo("not_sent");
        assertThat(Scenarios.outcomeOf(history, 1)).isEqualTo("sent_verified");
        assertThat(history.scopes().get(1).opened()).isEqualTo("not_sent:0");
        assertThat(history.state()).isEqualTo(ScopeState.SENT_VERIFIED);

        // and anyone after that stops: the key is consumed
        try (Attempt c = worker("task-c").gate().enter(key)) {
            assertThat(c.decision()).isInstanceOf(Decision.StopSent.class);
        }
        assertThat(provider.deliveries()).isEqualTo(1);
    }

    @Test
    void waitersBlockedOnScopeZero_moveToScopeOneAndExactlyOneDelivers() throws Exception {
        // Given an executor in scope 0 whose action is still running
        Worker executor = worker("executor");
        Attempt a = track(executor.gate().enter(key));
        assertThat(a.decision().proceeds()).isTrue();
        CountDownLatch entered = new CountDownLatch(1);
        CountDownLatch release = new CountDownLatch(1);
        BoundaryAction rejectsLater = ctx -> {
            entered.countDown();
            release.await();
            throw new ProvenNotSentException("provider refused: quota exhausted, nothing stored");
        };
        ExecutorService pool = pool(5);
        Future<Crossing> executorCrossing = pool.submit(() -> a.cross(rejectsLater));
        assertThat(entered.await(Timing.EVENTUALLY.toMillis(), TimeUnit.MILLISECONDS)).isTrue();

        // and four waiters blocked on scope 0 (armed, no outcome yet)
        List<Worker> waiters = new ArrayList<>();
        for (int i = 0; i < 4; i++) {
            waiters.add(worker("waiter-" + i));
        }
        List<Future<String>> results = new ArrayList<>();
        for (Worker w : waiters) {
            results.add(pool.submit(() -> {
                try (Attempt attempt = w.gate().enter(key, Timing.WAIT)) {
                    if (attempt.decision() instanceof Decision.Proceed p) {
                        Crossing c = attempt.cross(provider.verified());
                        return c instanceof Crossing.Crossed ? "crossed@" + p.scope() : "refused";
                    }
                    return attempt.decision().kind();
                }
            }));
        }
        // (blocked: all four waiters watch scope 0's outcome znode; the executor, which created the
        // key and led its election at once, never needed a watch)
        Scenarios.eventually("four waiters block on scope 0",
                () -> zk.watchingSessions(keyPath() + "/0/outcome") >= 4);

        // When the executor proves not_sent
        release.countDown();
        assertThat(executorCrossing.get(Timing.EVENTUALLY.toMillis(), TimeUnit.MILLISECONDS))
                .isInstanceOfSatisfying(Crossing.Crossed.class, c -> assertThat(c.outcome()).isEqualTo(Outcome.NOT_SENT));

        // Then the waiters contend for scope 1: exactly one delivers there, the rest stop_sent
        List<String> kinds = new ArrayList<>();
        for (Future<String> f : results) {
            kinds.add(f.get(Timing.EVENTUALLY.toMillis() * 2, TimeUnit.MILLISECONDS));
        }
        assertThat(kinds).filteredOn(k -> k.equals("crossed@1")).hasSize(1);
        assertThat(kinds).filteredOn(k -> k.equals("stop_sent")).hasSize(3);
        assertThat(provider.deliveries()).isEqualTo(1);
        assertThat(provider.ledger().get(0).scope()).isEqualTo(1);
        KeyHistory history = executor.gate().inspect(key.key());
        assertThat(Scenarios.outcomeOf(history, 0)).isEqualTo("not_sent");
        assertThat(Scenarios.outcomeOf(history, 1)).isEqualTo("sent_verified");
        assertThat(history.scopes()).hasSize(2);
    }
}
