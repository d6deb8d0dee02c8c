package dev.oncegate;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;

import org.apache.curator.framework.state.ConnectionState;
import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.KeeperException.Code;
import org.apache.zookeeper.Watcher;
import org.apache.zookeeper.ZooDefs.Perms;
import org.apache.zookeeper.data.ACL;
import org.apache.zookeeper.data.Id;
import org.apache.zookeeper.data.Stat;
import org.junit.jupiter.api.Test;

/**
 * What the simulator can do to a {@link SimClient} and what the protocol then sees: calls failed
 * before they reach the server, replies lost after the server applied them (and the retry that
 * meets its own effect), disconnection, reconnection and session expiry with Curator's connection
 * states and ZooKeeper's watch events, all queued rather than run inside the call. The server
 * semantics themselves are held against a real server by {@link SimZooKeeperConformanceTest}.
 */
class SimClientFaultsTest {

    final AtomicLong clock = new AtomicLong(1_000);
    final SimZooKeeper server = new SimZooKeeper(clock::get);
    final List<String> seen = new ArrayList<>();

    /** Faults that answer from a script, one fault per call, NONE when the script is done; every call is noted. */
    SimFaults script(SimFaults.Fault... faults) {
        List<SimFaults.Fault> left = new ArrayList<>(List.of(faults));
        return (client, op, path) -> {
            seen.add(client.name() + " " + op + " " + path);
            return left.isEmpty() ? SimFaults.Fault.NONE : left.remove(0);
        };
    }

    Watcher recording(String label) {
        return e -> seen.add(label + " " + e.getType() + " " + e.getState() + (e.getPath() == null ? "" : " " + e.getPath()));
    }

    @Test
    void lostReplyOfACreate_retried_meetsItsOwnNode() throws Exception {
        // Given a client that retries once, whose first create's reply is lost
        SimClient c = new SimClient(server, "a").retries(1).start();
        c.faults(script(SimFaults.Fault.LOSE_REPLY));
        // When it creates /x
        // Then the retry meets the node its first try created
        assertThatThrownBy(() -> c.create("/x", new byte[0], CreateMode.PERSISTENT, null, null, false))
                .isInstanceOf(KeeperException.NodeExistsException.class);
        assertThat(server.stat("/x")).isNotNull();
        assertThat(seen).containsExactly("a create /x", "a create /x");
    }

    @Test
    void interruptedWait_theCallApplied_throwsInterruptedException_withTheFlagLeftSet() throws Exception {
        // Given a client whose wait for the reply to its next call is interrupted (a SIGTERM to the worker)
        SimClient c = new SimClient(server, "a").retries(3).start();
        c.faults(script(SimFaults.Fault.INTERRUPT_WAIT));
        try {
            // When it creates /x, Then the server created it, the call throws, not retried, and the flag stays set
            assertThatThrownBy(() -> c.create("/x", new byte[0], CreateMode.PERSISTENT, null, null, false))
                    .isInstanceOf(InterruptedException.class);
            assertThat(Thread.currentThread().isInterrupted()).as("as Curator leaves it").isTrue();
        } finally {
            Thread.interrupted();
        }
        assertThat(server.stat("/x")).isNotNull();
        assertThat(seen).containsExactly("a create /x");
    }

    @Test
    void callMadeWithTheFlagSet_isSentAllTheSame_andThrowsInterruptedException() throws Exception {
        // Given a client on a thread already flagged interrupted (ZooKeeper's client queues, then its wait throws)
        SimClient c = new SimClient(server, "a").retries(3).start();
        Thread.currentThread().interrupt();
        try {
            // When it creates /x, Then the server created it, and the call throws with the flag still set
            assertThatThrownBy(() -> c.create("/x", new byte[0], CreateMode.PERSISTENT, null, null, false))
                    .isInstanceOf(InterruptedException.class);
            assertThat(Thread.currentThread().isInterrupted()).isTrue();
        } finally {
            Thread.interrupted();
        }
        assertThat(server.stat("/x")).isNotNull();
    }

    @Test
    void interruptedWaitOfAMultiOnce_getsItsReply_andReportsTheInterrupt() throws Exception {
        // Given a client whose arming-style multi (sent once) has its wait interrupted
        SimClient c = new SimClient(server, "a").start();
        c.faults(script(SimFaults.Fault.INTERRUPT_WAIT));
        ZooKeeperOps.MultiReply reply;
        try {
            // When it sends it, Then the reply came all the same (CuratorOps waits for it), the interrupt reported
            reply = c.multiOnce(List.of(c.opCreate("/m", new byte[0], CreateMode.PERSISTENT, null)), Duration.ofSeconds(10));
            assertThat(Thread.currentThread().isInterrupted()).isTrue();
        } finally {
            Thread.interrupted();
        }
        assertThat(reply.rc()).isEqualTo(Code.OK.intValue());
        assertThat(reply.interrupted()).isTrue();
        assertThat(server.stat("/m")).isNotNull();
    }

    @Test
    void lostReplyOfAVersionedSetData_retried_meetsBadVersion() throws Exception {
        // Given /x at version 0, and a client retrying once whose first setData reply is lost
        SimClient c = new SimClient(server, "a").retries(1).start();
        c.create("/x", new byte[0], CreateMode.PERSISTENT, null, null, false);
        c.faults(script(SimFaults.Fault.LOSE_REPLY));
        // When it sets /x at version 0
        // Then the first try applied, and the retry finds version 1
        assertThatThrownBy(() -> c.setData("/x", "v1".getBytes(UTF_8), 0)).isInstanceOf(KeeperException.BadVersionException.class);
        assertThat(server.stat("/x").getVersion()).isEqualTo(1);
    }

    @Test
    void lostReplyOfAMulti_withoutRetries_surfacesTheLoss_butTheMultiApplied() throws Exception {
        // Given a client without retries whose multi reply is lost
        SimClient c = new SimClient(server, "a").start();
        c.faults(script(SimFaults.Fault.LOSE_REPLY));
        // When it sends a multi creating /x and /y
        // Then it sees ConnectionLoss, and the server has both nodes
        assertThatThrownBy(() -> c.multi(List.of(c.opCreate("/x", new byte[0], CreateMode.PERSISTENT, null),
                c.opCreate("/y", new byte[0], CreateMode.PERSISTENT, null)))).isInstanceOf(KeeperException.ConnectionLossException.class);
        assertThat(server.children("/")).contains("x", "y");
    }

    @Test
    void multiOnce_lostReply_answersConnectionLoss_failBefore_appliesNothing() {
        // Given a client whose first multiOnce's reply is lost and whose second fails before it is sent
        SimClient c = new SimClient(server, "a").retries(5).start();
        c.faults(script(SimFaults.Fault.LOSE_REPLY, SimFaults.Fault.FAIL_BEFORE));
        // When it sends two multis once
        ZooKeeperOps.MultiReply lost = c.multiOnce(List.of(c.opCreate("/x", new byte[0], CreateMode.PERSISTENT, null)), Duration.ofSeconds(1));
        ZooKeeperOps.MultiReply failed = c.multiOnce(List.of(c.opCreate("/y", new byte[0], CreateMode.PERSISTENT, null)), Duration.ofSeconds(1));
        // Then both answer CONNECTIONLOSS without results (never retried); the first applied, the second did not
        assertThat(List.of(lost.rc(), failed.rc())).containsOnly(Code.CONNECTIONLOSS.intValue());
        assertThat(lost.results()).isNull();
        assertThat(server.stat("/x")).isNotNull();
        assertThat(server.stat("/y")).isNull();
        assertThat(seen).containsExactly("a multiOnce /x", "a multiOnce /y");
    }

    @Test
    void failedBefore_thenRetried_appliesOnce() throws Exception {
        // Given a client retrying twice whose first two tries fail before they are sent
        SimClient c = new SimClient(server, "a").retries(2).start();
        c.faults(script(SimFaults.Fault.FAIL_BEFORE, SimFaults.Fault.FAIL_BEFORE));
        long before = server.zxid();
        // When it creates a sequential node
        String path = c.create("/s-", new byte[0], CreateMode.PERSISTENT_SEQUENTIAL, null, null, false);
        // Then the third try created exactly one node, with one zxid
        assertThat(path).isEqualTo("/s-0000000000");
        assertThat(server.children("/")).containsExactly("s-0000000000", "zookeeper");
        assertThat(server.zxid()).isEqualTo(before + 1);
    }

    @Test
    void watchEvents_areQueued_notRunInsideTheWrite() throws Exception {
        // Given b watching /x
        SimClient a = new SimClient(server, "a").start();
        SimClient b = new SimClient(server, "b").start();
        a.create("/x", new byte[0], CreateMode.PERSISTENT, null, null, false);
        b.getData("/x", null, recording("b"));
        // When a writes /x
        a.setData("/x", "1".getBytes(UTF_8), -1);
        // Then nothing ran yet; the event is b's, and runs when the scheduler takes it
        assertThat(seen).isEmpty();
        assertThat(server.pollEvent(a)).isNull();
        SimZooKeeper.SimEvent event = server.pollEvent(b);
        assertThat(event.client()).isSameAs(b);
        event.run();
        assertThat(seen).containsExactly("b NodeDataChanged SyncConnected /x");
    }

    @Test
    void disconnectAndReconnect_suspendedThenReconnected_andWhatChangedMeanwhileFires() throws Exception {
        // Given b watching /x and /y's children, listening to its connection
        SimClient a = new SimClient(server, "a").start();
        SimClient b = new SimClient(server, "b").start();
        a.create("/x", new byte[0], CreateMode.PERSISTENT, null, null, false);
        a.create("/y", new byte[0], CreateMode.PERSISTENT, null, null, false);
        b.onConnectionState(s -> seen.add("b " + s));
        b.getData("/x", null, recording("bx"));
        b.getChildren("/y", recording("by"));
        // When b is disconnected, a writes /x (twice), and b reconnects
        b.disconnect();
        assertThatThrownBy(() -> b.exists("/x", null)).isInstanceOf(KeeperException.ConnectionLossException.class);
        a.setData("/x", "1".getBytes(UTF_8), -1);
        a.setData("/x", "2".getBytes(UTF_8), -1);
        server.runEvents(100);
        assertThat(seen).containsExactly("bx None Disconnected", "by None Disconnected", "b SUSPENDED");
        seen.clear();
        b.reconnect();
        server.runEvents(100);
        // Then b sees SyncConnected, one NodeDataChanged for /x (nothing for /y), and RECONNECTED
        assertThat(seen).containsExactly("bx None SyncConnected", "by None SyncConnected", "bx NodeDataChanged SyncConnected /x",
                "b RECONNECTED");
        assertThat(b.watchCount()).isEqualTo(1);
    }

    @Test
    void expiry_removesEphemerals_lostThenANewSessionWithTheSameIdentities() throws Exception {
        // Given b (alice) owning an ephemeral node under a node only alice may create in
        String alice = SimClient.digest("alice:pw");
        SimClient a = new SimClient(server, "a").start();
        SimClient b = new SimClient(server, "b").authorization("digest", "alice:pw".getBytes(UTF_8)).start();
        a.create("/p", new byte[0], CreateMode.PERSISTENT, List.of(new ACL(Perms.ALL, new Id("digest", alice))), null, false);
        b.create("/p/e", new byte[0], CreateMode.EPHEMERAL, null, null, false);
        long first = b.sessionId();
        b.onConnectionState(s -> seen.add("b " + s));
        // When b's session expires and b reconnects
        b.expire();
        // Then the ephemeral is gone, b saw LOST, then RECONNECTED on a new session that is still alice
        assertThat(server.stat("/p/e")).isNull();
        assertThat(server.sessionAlive(first)).isFalse();
        b.reconnect();
        server.runEvents(100);
        assertThat(seen).containsExactly("b SUSPENDED", "b LOST", "b RECONNECTED");
        assertThat(b.sessionId()).isNotEqualTo(first);
        assertThat(b.create("/p/e", new byte[0], CreateMode.EPHEMERAL, null, null, false)).isEqualTo("/p/e");
    }

    @Test
    void emptiedContainers_areReaped_neverUsedOnesAreNot() throws Exception {
        // Given a container that had a child and lost it, and one that never had a child
        SimClient a = new SimClient(server, "a").start();
        a.create("/used", new byte[0], CreateMode.CONTAINER, null, null, false);
        a.create("/used/c", new byte[0], CreateMode.PERSISTENT, null, null, false);
        a.delete("/used/c", -1);
        a.create("/fresh", new byte[0], CreateMode.CONTAINER, null, null, false);
        long before = server.zxid();
        // When the container manager runs
        // Then only the used one goes, with one transaction
        assertThat(server.reapContainers()).containsExactly("/used");
        assertThat(server.stat("/fresh")).isNotNull();
        assertThat(server.zxid()).isEqualTo(before + 1);
    }

    @Test
    void blockingWaits_goToThePluggedHook_andRefuseWithoutOne() throws Exception {
        // Given a client without a waits hook, and one with
        SimClient bare = new SimClient(server, "bare").start();
        List<Long> waited = new ArrayList<>();
        SimClient hooked = new SimClient(server, "hooked").waits(new SimClient.Waits() {
            @Override
            public void await(SimClient client, Object monitor, long millis) {
                waited.add(millis);
            }

            @Override
            public boolean awaitConnected(SimClient client, Duration timeout) {
                return false;
            }
        }).start();
        Object monitor = new Object();
        // When each waits
        // Then the bare one refuses, the hooked one's hook decides
        synchronized (monitor) {
            assertThatThrownBy(() -> bare.await(monitor, 5)).isInstanceOf(UnsupportedOperationException.class);
            hooked.await(monitor, 7);
        }
        assertThat(waited).containsExactly(7L);
        assertThat(hooked.awaitConnected(Duration.ofSeconds(1))).isFalse();
        assertThat(bare.awaitConnected(Duration.ofSeconds(1))).isTrue();
    }

    @Test
    void statTimes_comeFromTheGivenClock() throws Exception {
        // Given the server clock at 1000
        SimClient a = new SimClient(server, "a").start();
        Stat created = new Stat();
        a.create("/x", new byte[0], CreateMode.PERSISTENT, null, created, false);
        // When the clock moves and /x is written
        clock.set(5_000);
        Stat written = a.setData("/x", new byte[1], -1);
        // Then ctime and mtime are the clock's
        assertThat(created.getCtime()).isEqualTo(1_000);
        assertThat(written.getCtime()).isEqualTo(1_000);
        assertThat(written.getMtime()).isEqualTo(5_000);
    }
}
