package dev.oncegate.testing;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.concurrent.TimeUnit;

import dev.oncegate.Attempt;
import dev.oncegate.Crossing;
import dev.oncegate.Decision;
import dev.oncegate.Gate;
import dev.oncegate.KeyHistory;
import dev.oncegate.StopReason;
import org.apache.curator.framework.CuratorFramework;
import org.apache.zookeeper.data.Stat;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Every lease write is bound to the writer's own election node (SPEC §4.6, issue 15's "rules no
 * test pins"): the take-over CAS and each checkpoint's renewal are a {@code multi} whose first op
 * checks that node. A node that is gone — deleted by an admin, or its session replaced — means the
 * writer is no longer a member of this incarnation of the scope, and its write must not land.
 */
class ElectionNodeBindingTest {

    @RegisterExtension
    static final ZooKeeperExtension zk = ZooKeeperExtension.standalone();

    @Test
    void memberWhoseElectionNodeWasDeleted_takesNoLeaseWithIt_andDeliversOnceFromANewNode() throws Exception {
        // Given scope 1 held by one attempt that hangs and the next member waiting behind it; the lease TTL is
        // short enough to lapse during the test, and long enough to delete a node first
        Scenarios.HolderAndMember scope1 = Scenarios.holderAndNextMember(zk, Timing.scaled(Duration.ofSeconds(4)));
        Gate gate = scope1.gate();
        CuratorFramework admin = zk.newClient();
        String latch = zk.keyPath() + "/1/latch";
        String holderNode = gate.inspect(zk.key().key()).scopes().get(1).lease().electionNode();
        String memberNode = admin.getChildren().forPath(latch).stream().map(c -> latch + "/" + c)
                .filter(p -> !p.equals(holderNode)).findFirst().orElseThrow();

        // When an admin deletes the member's election node before the lease lapses
        admin.delete().forPath(memberNode);

        // Then the member's take-over with that node does not land: it proceeds only with a node that exists
        try (Attempt member = scope1.member().get(Timing.WAIT.toMillis(), TimeUnit.MILLISECONDS)) {
            assertThat(member.decision()).isInstanceOfSatisfying(Decision.Proceed.class, p -> assertThat(p.scope()).isEqualTo(1));
            KeyHistory.Lease lease = gate.inspect(zk.key().key()).scopes().get(1).lease();
            assertThat(lease.electionNode()).as("the election node the lease names (not the deleted one)").isNotEqualTo(memberNode);
            assertThat(admin.checkExists().forPath(lease.electionNode())).as(lease.electionNode() + " exists").isNotNull();
            assertThat(lease.takeover().cause()).isIn("lapsed", "unrenewed");
            assertThat(member.cross(zk.provider().verified())).isInstanceOf(Crossing.Crossed.class);
        }
        // and the fenced holder can no longer arm: one delivery, in scope 1
        assertThat(scope1.holder().cross(zk.provider().verified())).isInstanceOf(Crossing.Refused.class);
        assertThat(zk.provider().deliveries()).isEqualTo(1);
        assertThat(zk.provider().ledger().get(0).scope()).isEqualTo(1);
    }

    @Test
    void executorWhoseElectionNodeWasDeleted_isStoppedAtItsCheckpoint_andNeverArms() throws Exception {
        // Given an executor that proceeded in scope 0
        Gate gate = zk.newGate("task-a");
        Attempt executor = zk.track(gate.enter(zk.key()));
        assertThat(executor.decision().proceeds()).isTrue();
        CuratorFramework admin = zk.newClient();
        String scope0 = zk.keyPath() + "/0";
        String node = gate.inspect(zk.key().key()).scopes().get(0).lease().electionNode();
        Stat before = admin.checkExists().forPath(scope0);

        // When an admin deletes its election node, and the executor reaches a checkpoint
        admin.delete().forPath(node);
        Decision checkpoint = executor.checkpoint("picker-open");

        // Then the checkpoint stops it, its lease renewal did not land, and it can never arm: nothing delivered
        assertThat(checkpoint).isInstanceOfSatisfying(Decision.StopUnavailable.class, stop -> {
            assertThat(stop.reason()).isEqualTo(StopReason.CONNECTION_LOST);
            assertThat(stop.evidence().detail()).contains("election node is gone");
        });
        assertThat(admin.checkExists().forPath(scope0).getVersion()).as("scope 0's version").isEqualTo(before.getVersion());
        assertThatThrownBy(() -> executor.cross(zk.provider().verified())).isInstanceOf(IllegalStateException.class);
        assertThat(Scenarios.armedNode(admin, scope0)).isNull();
        assertThat(zk.provider().deliveries()).isZero();
    }
}
