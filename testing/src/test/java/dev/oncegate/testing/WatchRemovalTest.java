package dev.oncegate.testing;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import dev.oncegate.Attempt;
import dev.oncegate.Decision;
import dev.oncegate.EffectKey;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Watches are removed: a contender that waited (and so watched the scope and its outcome) leaves
 * no watch behind on the server once closed, even though its session lives on — counted at the
 * server with its {@code wchp} command.
 */
class WatchRemovalTest {

    @RegisterExtension
    static final ZooKeeperExtension zk = ZooKeeperExtension.standalone();

    static final int WAITERS = 6;

    @Test
    void waitersThatGaveUp_leaveNoWatchOnTheServer() throws Exception {
        EffectKey key = Scenarios.freshKey();
        String scope0 = key.path(zk.namespace()) + "/0";
        // Given an executor holding the lease (and not writing the scope meanwhile)
        Attempt executor = zk.newGate("executor").enter(key);
        assertThat(executor.decision().proceeds()).isTrue();

        // When several contenders on their own long-lived sessions wait for it, then give up busy
        List<Worker> waiters = new ArrayList<>();
        for (int i = 0; i < WAITERS; i++) {
            waiters.add(zk.newWorker("waiter-" + i));
        }
        ExecutorService pool = Executors.newFixedThreadPool(WAITERS);
        try {
            List<Future<Decision>> decisions = new ArrayList<>();
            for (Worker w : waiters) {
                decisions.add(pool.submit(() -> {
                    try (Attempt a = w.gate().enter(key, Timing.scaled(1_500))) {
                        return a.decision();
                    }
                }));
            }
            Scenarios.eventually("every waiter watches the outcome",
                    () -> zk.server().watchingSessions(scope0 + "/outcome") >= WAITERS);
            for (Future<Decision> d : decisions) {
                assertThat(d.get(Timing.EVENTUALLY.toMillis(), TimeUnit.MILLISECONDS)).isInstanceOf(Decision.StopBusy.class);
            }
        } finally {
            pool.shutdownNow();
            pool.awaitTermination(10, TimeUnit.SECONDS);
        }
        // and the executor leaves too
        executor.close();

        // Then no session watches the scope or its outcome any more (removal is asynchronous: Curator
        // sends it in the background), though every session is still open
        assertThat(waiters).allSatisfy(w -> assertThat(w.client().getZookeeperClient().isConnected()).isTrue());
        Scenarios.eventually("no watch left on the outcome", () -> zk.server().watchingSessions(scope0 + "/outcome") == 0);
        Scenarios.eventually("no watch left on the scope", () -> zk.server().watchingSessions(scope0) == 0);
    }
}
