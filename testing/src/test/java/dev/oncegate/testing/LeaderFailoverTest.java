package dev.oncegate.testing;

import dev.oncegate.ScopeState;
import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import dev.oncegate.Attempt;
import dev.oncegate.Crossing;
import dev.oncegate.Decision;
import dev.oncegate.EffectKey;
import dev.oncegate.KeyHistory;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * SPEC §9 "ZooKeeper leader failover in a 3-server ensemble": the leader dies during an
 * attempt; at most one delivery, and once the ensemble recovers the effect is either decided
 * or delivered exactly once by the next contender. A fresh ensemble per test (a second kill
 * would leave no quorum).
 */
class LeaderFailoverTest {

    static final Duration SESSION = Timing.scaled(10_000);

    Ensemble ensemble;
    String ns;
    EffectKey key;
    RecordingProvider provider;
    final List<Worker> workers = new ArrayList<>();
    ExecutorService pool;

    @BeforeEach
    void start() throws Exception {
        ensemble = Ensemble.start(Timing.EVENTUALLY);
        ns = Scenarios.freshNamespace();
        key = Scenarios.freshKey();
        provider = new RecordingProvider();
        pool = Executors.newSingleThreadExecutor();
        try (var client = ensemble.newClient(SESSION)) {
            dev.oncegate.Gate.initialize(client, ns);
        }
    }

    @AfterEach
    void stop() throws Exception {
        pool.shutdownNow();
        pool.awaitTermination(10, TimeUnit.SECONDS);
        workers.forEach(Worker::close);
        ensemble.close();
    }

    private Worker worker(String task) {
        Worker w = Worker.start(ensemble.connectString(), ns, task, SESSION,
                b -> b.connectTimeout(Timing.scaled(15_000)));
        workers.add(w);
        return w;
    }

    /** After recovery: a new contender either finds the effect decided or delivers it; never a second delivery. */
    private void assertRecoveredAtMostOnce(Worker observer) throws Exception {
        assertThat(ensemble.awaitLeader(Timing.EVENTUALLY)).isTrue();
        Scenarios.eventually("observer reconnected", () -> observer.client().getZookeeperClient().isConnected());
        int before = provider.deliveries();
        assertThat(before).isLessThanOrEqualTo(1);
        try (Attempt next = worker("task-next").gate().enter(key, Timing.WAIT)) {
            Decision d = next.decision();
            if (d instanceof Decision.Proceed) {
                assertThat(before).as("a contender proceeded although a delivery happened").isZero();
                assertThat(next.cross(provider.verified())).isInstanceOf(Crossing.Crossed.class);
                assertThat(provider.deliveries()).isEqualTo(1);
            } else {
                assertThat(d).isInstanceOfAny(Decision.StopSent.class, Decision.StopUnknown.class);
                if (d instanceof Decision.StopSent) {
                    assertThat(before).isEqualTo(1);
                }
            }
        }
        assertThat(provider.deliveries()).isLessThanOrEqualTo(1);
        KeyHistory history = observer.gate().inspect(key.key());
        if (history.state() == ScopeState.SENT_VERIFIED) {
            assertThat(provider.deliveries()).isEqualTo(1);
        }
        assertThat(history.state()).isIn(ScopeState.SENT_VERIFIED, ScopeState.ARMED, ScopeState.SEND_STATUS_UNKNOWN);
        // and a late contender never proceeds again
        try (Attempt late = worker("task-late").gate().enter(key)) {
            assertThat(late.decision().proceeds()).isFalse();
        }
        assertThat(provider.deliveries()).isLessThanOrEqualTo(1);
    }

    @Test
    void leaderKilledAfterProceedBeforeCross_atMostOneDeliveryAndRecoveryDecides() throws Exception {
        // Given executor A proceeded on the ensemble
        Worker a = worker("task-a");
        Attempt attemptA = a.gate().enter(key);
        assertThat(attemptA.decision().proceeds()).isTrue();

        // When the ZooKeeper leader dies and A crosses at once
        ensemble.killLeader();
        Crossing crossing = attemptA.cross(provider.verified());
        attemptA.close();

        // Then A either crossed (one delivery) or was refused with its action never invoked
        if (crossing instanceof Crossing.Refused) {
            assertThat(provider.deliveries()).isZero();
        } else {
            assertThat(provider.deliveries()).isEqualTo(1);
        }
        // and after recovery the effect is decided or delivered exactly once
        assertRecoveredAtMostOnce(a);
    }

    @Test
    void leaderKilledDuringTheAction_exactlyOneDeliveryAndRecoveryStopsOthers() throws Exception {
        // Given executor A armed the scope and is inside its action
        Worker a = worker("task-a");
        Attempt attemptA = a.gate().enter(key);
        CountDownLatch entered = new CountDownLatch(1);
        CountDownLatch release = new CountDownLatch(1);
        Future<Crossing> crossingA = pool.submit(() -> attemptA.cross(provider.blocking(entered, release)));
        assertThat(entered.await(Timing.EVENTUALLY.toMillis(), TimeUnit.MILLISECONDS)).isTrue();

        // When the ZooKeeper leader dies, then the action completes
        ensemble.killLeader();
        release.countDown();
        Crossing crossing = crossingA.get(Timing.EVENTUALLY.toMillis(), TimeUnit.MILLISECONDS);
        attemptA.close();

        // Then exactly one delivery, recorded or left armed (unknown), and nobody delivers again
        assertThat(crossing).isInstanceOf(Crossing.Crossed.class);
        assertThat(provider.deliveries()).isEqualTo(1);
        assertRecoveredAtMostOnce(a);
        assertThat(provider.deliveries()).isEqualTo(1);
    }

    @Test
    void leaderKilledWhileContendersWait_oneDelivery() throws Exception {
        // Given executor A holds the lease and B waits for it
        Worker a = worker("task-a");
        Worker b = worker("task-b");
        Attempt attemptA = a.gate().enter(key);
        assertThat(attemptA.decision().proceeds()).isTrue();
        Future<Attempt> enteredB = Scenarios.enterAsync(pool, b.gate(), key, Timing.WAIT);
        Scenarios.eventually("B waits in the election", () -> Scenarios.latchMembers(a.client(), key.path(ns), 0) == 2);

        // When the leader dies, and A then finishes its crossing once the ensemble is back
        ensemble.killLeader();
        assertThat(ensemble.awaitLeader(Timing.EVENTUALLY)).isTrue();
        Scenarios.eventually("A reconnected", () -> a.client().getZookeeperClient().isConnected());
        Crossing crossing = attemptA.cross(provider.verified());
        attemptA.close();

        // Then B never delivers a second time
        Attempt attemptB = enteredB.get(Timing.WAIT.toMillis() * 2, TimeUnit.MILLISECONDS);
        try (attemptB) {
            if (attemptB.decision().proceeds()) {
                assertThat(crossing).isInstanceOf(Crossing.Refused.class);
                attemptB.cross(provider.verified());
            }
        }
        assertThat(provider.deliveries()).isEqualTo(1);
        assertThat(a.gate().inspect(key.key()).state()).isEqualTo(ScopeState.SENT_VERIFIED);
    }
}
