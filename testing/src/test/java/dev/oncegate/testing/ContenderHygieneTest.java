package dev.oncegate.testing;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import dev.oncegate.Attempt;
import dev.oncegate.Crossing;
import org.apache.zookeeper.data.Stat;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * What contenders leave behind: no election nodes once their attempts end (interrupted ones
 * included), and on a consumed key only the permanent znodes of SPEC §6, compact.
 */
class ContenderHygieneTest {

    @RegisterExtension
    static final ZooKeeperExtension zk = ZooKeeperExtension.standalone();

    @Test
    void interruptedWaiter_leavesNoWatchNorElectionNode_andNeverDelivers() throws Exception {
        // Given A holds the lease and B waits on another thread
        Worker a = zk.newWorker("task-a");
        Worker b = zk.newWorker("task-b");
        Attempt attemptA = zk.track(a.gate().enter(zk.key()));
        ExecutorService pool = zk.newPool(1);
        Future<Attempt> enteredB = Scenarios.enterAsync(pool, b.gate(), zk.key(), Timing.WAIT);
        // (outside the election: A holds the lease, so B only watches scope 0)
        Scenarios.eventually("B waits, watching scope 0", () -> Scenarios.watched(zk, zk.keyPath() + "/0"));

        // When B's thread is interrupted
        pool.shutdownNow();

        // Then B's enter ends with InterruptedException and B's latch node goes away
        assertThatThrownBy(() -> enteredB.get(Timing.EVENTUALLY.toMillis(), TimeUnit.MILLISECONDS))
                .hasCauseInstanceOf(InterruptedException.class);
        Scenarios.eventually("B left: no watch of its on scope 0, only A in the election",
                () -> !Scenarios.watched(zk, zk.keyPath() + "/0") && Scenarios.latchMembers(a.client(), zk.keyPath(), 0) == 1);
        // and A still crosses alone
        assertThat(attemptA.cross(zk.provider().verified())).isInstanceOf(Crossing.Crossed.class);
        assertThat(zk.provider().deliveries()).isEqualTo(1);
    }

    @Test
    void consumedKey_leavesOnlyPermanentCompactZnodesAndNoElectionNodes() throws Exception {
        // Given four contenders on one key: one delivers, three stop
        List<Worker> workers = List.of(zk.newWorker("w0"), zk.newWorker("w1"), zk.newWorker("w2"), zk.newWorker("w3"));
        Race.of(workers.stream().map(Worker::gate).toList()).enter(zk.key(), Timing.WAIT, zk.provider().verified());
        assertThat(zk.provider().deliveries()).isEqualTo(1);

        // Then no election node is left (the latch parent is a container the server reaps)
        var client = workers.get(0).client();
        Scenarios.eventually("no latch nodes left", () -> Scenarios.latchMembers(client, zk.keyPath(), 0) == 0);
        // and the key holds exactly the permanent records, each compact
        assertThat(client.getChildren().forPath(zk.keyPath())).containsExactlyInAnyOrder("0", "authorizations");
        String armed = Scenarios.armedNode(client, zk.keyPath() + "/0");
        assertThat(armed).isNotNull();
        assertThat(client.getChildren().forPath(zk.keyPath() + "/0")).contains("armed").isSubsetOf("armed", "latch");
        assertThat(client.getChildren().forPath(armed)).containsExactly("outcome");
        for (String path : List.of(zk.keyPath(), zk.keyPath() + "/authorizations", zk.keyPath() + "/0",
                armed, armed + "/outcome")) {
            Stat stat = client.checkExists().forPath(path);
            assertThat(stat.getEphemeralOwner()).as(path + " is persistent").isZero();
            assertThat(stat.getDataLength()).as(path + " is compact").isLessThan(1024);
        }
    }
}
