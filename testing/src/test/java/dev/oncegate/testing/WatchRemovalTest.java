package dev.oncegate.testing;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;

import dev.oncegate.Attempt;
import dev.oncegate.Decision;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Watches are removed: a contender that waited (and so watched the scope's data and children) leaves
 * no watch behind on the server once closed, even though its session lives on — counted at the
 * server with its {@code wchp} command.
 */
class WatchRemovalTest {

    @RegisterExtension
    static final ZooKeeperExtension zk = ZooKeeperExtension.standalone();

    static final int WAITERS = 6;

    @Test
    void waitersThatGaveUp_leaveNoWatchOnTheServer() throws Exception {
        String scope0 = zk.keyPath() + "/0";
        // Given an executor holding the lease (and not writing the scope meanwhile)
        Attempt executor = zk.newGate("executor").enter(zk.key());
        assertThat(executor.decision().proceeds()).isTrue();

        // When several contenders on their own long-lived sessions wait for it, then give up busy
        List<Worker> waiters = new ArrayList<>();
        for (int i = 0; i < WAITERS; i++) {
            waiters.add(zk.newWorker("waiter-" + i));
        }
        try (Race.Started waiting = Race.of(waiters.stream().map(Worker::gate).toList()).start(zk.key(), Timing.scaled(1_500))) {
            Scenarios.eventually("every waiter watches the scope",
                    () -> zk.server().watchingSessions(scope0) >= WAITERS);
            assertThat(waiting.entries(Timing.EVENTUALLY))
                    .allSatisfy(e -> assertThat(e.decision()).isInstanceOf(Decision.StopBusy.class));
        }
        // and the executor leaves too
        executor.close();

        // Then no session watches the scope (its data or its children) any more (removal is asynchronous:
        // Curator sends it in the background), though every session is still open
        assertThat(waiters).allSatisfy(w -> assertThat(w.client().getZookeeperClient().isConnected()).isTrue());
        Scenarios.eventually("no watch left on the scope", () -> zk.server().watchingSessions(scope0) == 0);
    }
}
