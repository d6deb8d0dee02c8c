package dev.oncegate;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;

import org.apache.zookeeper.CreateMode;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * {@link SimElection} behaves as Curator's LeaderLatch is seen from outside: protected
 * EPHEMERAL_SEQUENTIAL nodes holding the member's id, the earliest live node leads, a node goes
 * with its session, leadership changes are announced through the event queue, leaving deletes the
 * node without a callback, and a member that lost its session joins again at the back.
 */
class SimElectionTest {

    static final String LATCH = "/key/0/latch";

    final SimZooKeeper server = new SimZooKeeper(() -> 0L);
    final List<String> changes = new ArrayList<>();
    SimClient a;
    SimClient b;

    @BeforeEach
    void latch() throws Exception {
        a = new SimClient(server, "a").start();
        b = new SimClient(server, "b").start();
        a.create(LATCH, new byte[0], CreateMode.CONTAINER, null, null, true);
    }

    ZooKeeperOps.ElectionMember join(SimClient c, String id) throws Exception {
        return c.joinElection(LATCH, id, () -> changes.add(id));
    }

    void settle() {
        assertThat(server.runEvents(10_000)).isLessThan(10_000);
    }

    @Test
    void join_createsAProtectedSequentialNodeHoldingTheId_onlyWhenTheQueueRuns() throws Exception {
        // Given a member that joined
        ZooKeeperOps.ElectionMember first = join(a, "worker-1");
        // Then its node is created by a queued step, not inside the call
        assertThat(first.ourPath()).isNull();
        settle();
        // And it is _c_<uuid>-latch-<seq>, ephemeral to a's session, holding the id; the member leads
        assertThat(first.ourPath()).isEqualTo(LATCH + "/_c_00000000-0000-0000-0000-000000000001-latch-0000000000");
        assertThat(server.stat(first.ourPath()).getEphemeralOwner()).isEqualTo(a.sessionId());
        assertThat(new String(server.data(first.ourPath()), UTF_8)).isEqualTo("worker-1");
        assertThat(first.hasLeadership()).isTrue();
        assertThat(changes).containsExactly("worker-1");
    }

    @Test
    void earliestLiveNodeLeads_andTheNextLeadsWhenItsSessionExpires() throws Exception {
        // Given a's member joined before b's
        ZooKeeperOps.ElectionMember first = join(a, "first");
        settle();
        ZooKeeperOps.ElectionMember second = join(b, "second");
        settle();
        assertThat(first.hasLeadership()).isTrue();
        assertThat(second.hasLeadership()).isFalse();
        // When a's session expires
        a.expire();
        settle();
        // Then a's node is gone, a lost leadership (told), and b leads (told)
        assertThat(server.children(LATCH)).containsExactly(second.ourPath().substring(LATCH.length() + 1));
        assertThat(first.hasLeadership()).isFalse();
        assertThat(second.hasLeadership()).isTrue();
        assertThat(changes).containsExactly("first", "first", "second");
    }

    @Test
    void memberWhoseSessionExpired_joinsAgainAtTheBack_onReconnection() throws Exception {
        // Given a leads and b waits
        ZooKeeperOps.ElectionMember first = join(a, "first");
        settle();
        ZooKeeperOps.ElectionMember second = join(b, "second");
        settle();
        String old = first.ourPath();
        // When a's session expires, b takes over, and a reconnects with a new session
        a.expire();
        settle();
        a.reconnect();
        settle();
        // Then a has a new node behind b's, owned by its new session, and b still leads
        assertThat(first.ourPath()).isNotEqualTo(old).endsWith("-latch-0000000002");
        assertThat(server.stat(first.ourPath()).getEphemeralOwner()).isEqualTo(a.sessionId());
        assertThat(second.hasLeadership()).isTrue();
        assertThat(first.hasLeadership()).isFalse();
    }

    @Test
    void suspension_takesLeadershipAway_reconnectionGivesItBack() throws Exception {
        // Given a leads
        ZooKeeperOps.ElectionMember first = join(a, "first");
        settle();
        // When a is disconnected, then reconnected within its session
        a.disconnect();
        settle();
        assertThat(first.hasLeadership()).isFalse();
        a.reconnect();
        settle();
        // Then it leads again, with the same node
        assertThat(first.hasLeadership()).isTrue();
        assertThat(server.children(LATCH)).hasSize(1);
        assertThat(changes).containsExactly("first", "first", "first");
    }

    @Test
    void leave_deletesTheNode_withoutACallback_andTheNextLeads() throws Exception {
        // Given a leads and b waits
        ZooKeeperOps.ElectionMember first = join(a, "first");
        settle();
        ZooKeeperOps.ElectionMember second = join(b, "second");
        settle();
        // When a leaves
        first.leave(false);
        settle();
        // Then a's node is gone, a was not told (SILENT close), and b leads
        assertThat(first.hasLeadership()).isFalse();
        assertThat(server.children(LATCH)).hasSize(1);
        assertThat(second.hasLeadership()).isTrue();
        assertThat(changes).containsExactly("first", "second");
    }

    @Test
    void leaveWithEveryone_whileWaiting_keepsTheNodeUntilItsTurn_thenGoesSilently() throws Exception {
        // Given a leads and b waits behind it
        ZooKeeperOps.ElectionMember first = join(a, "first");
        settle();
        ZooKeeperOps.ElectionMember second = join(b, "second");
        settle();
        // When b leaves with everyone (it waits behind a)
        second.leave(true);
        settle();
        // Then b's node stays in the queue until a leaves, and then goes without b being told or leading
        assertThat(server.children(LATCH)).hasSize(2);
        first.leave(true);
        settle();
        assertThat(server.children(LATCH)).isEmpty();
        assertThat(second.hasLeadership()).isFalse();
        assertThat(changes).containsExactly("first");
    }

    @Test
    void closingTheOps_leavesTheMembersWaitingToLeave() throws Exception {
        // Given b waits behind a and left with everyone
        join(a, "first");
        settle();
        ZooKeeperOps.ElectionMember second = join(b, "second");
        settle();
        second.leave(true);
        // When b's ops are closed
        b.close();
        settle();
        // Then b's node is gone while a still leads
        assertThat(server.children(LATCH)).hasSize(1);
        assertThat(changes).containsExactly("first");
    }

    @Test
    void sameJoins_sameNodesAndSameLeader_everyRun() throws Exception {
        // Given two identical worlds
        // When the same members join in the same order
        // Then the nodes (uuids included) are the same
        List<String> firstRun = run();
        List<String> secondRun = run();
        assertThat(firstRun).isEqualTo(secondRun).hasSize(3);
    }

    private static List<String> run() throws Exception {
        SimZooKeeper s = new SimZooKeeper(() -> 0L);
        List<SimClient> clients = List.of(new SimClient(s, "x").start(), new SimClient(s, "y").start(), new SimClient(s, "z").start());
        clients.get(0).create(LATCH, new byte[0], CreateMode.CONTAINER, null, null, true);
        for (SimClient c : clients) {
            c.joinElection(LATCH, c.name(), () -> { });
        }
        s.runEvents(10_000);
        return s.children(LATCH);
    }
}
