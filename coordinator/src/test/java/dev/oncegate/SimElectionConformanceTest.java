package dev.oncegate;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BooleanSupplier;

import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.retry.RetryOneTime;
import org.apache.curator.test.Timing;
import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.Watcher.Event.KeeperState;
import org.apache.zookeeper.ZooKeeper;
import org.apache.zookeeper.data.Stat;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@link SimElection} is seen as production's election (CuratorOps' LeaderLatch on the embedded
 * server) is: at each point of the same story — two members join, the first leaves, the second's
 * session expires and its client reconnects — the latch's nodes (protected names, sequence
 * numbers, data, owners), who leads, and how many leadership changes each member was told of are
 * the same. The real side is waited for (its latch works in Curator's background); the model's
 * event queue is drained.
 */
class SimElectionConformanceTest {

    private static final Timing TIMING = new Timing();
    private static final String LATCH = "/election/0/latch";

    static TestServer zk;

    @TempDir
    static Path serverDir;

    @BeforeAll
    static void startServer() throws Exception {
        zk = TestServer.start(Files.createDirectories(serverDir));
    }

    @AfterAll
    static void stopServer() throws Exception {
        zk.close();
    }

    @Test
    void joinLeaveExpireReconnect_sameNodesLeadersAndChanges() throws Exception {
        // Given the same story told to the model and to production's election on a real server
        // When it is told
        // Then each checkpoint reads the same
        List<String> model = story(new ModelWorld());
        List<String> real = story(new RealWorld());
        assertThat(String.join("\n", model)).isEqualTo(String.join("\n", real));
    }

    private static List<String> story(World w) throws Exception {
        try (w) {
            List<String> out = new ArrayList<>();
            ZooKeeperOps a = w.client("a");
            ZooKeeperOps b = w.client("b");
            a.create(LATCH, new byte[0], CreateMode.CONTAINER, null, null, true);
            Map<String, AtomicInteger> told = new LinkedHashMap<>();
            told.put("first", new AtomicInteger());
            told.put("second", new AtomicInteger());
            ZooKeeperOps.ElectionMember first = a.joinElection(LATCH, "first", told.get("first")::incrementAndGet);
            w.until(first::hasLeadership);
            ZooKeeperOps.ElectionMember second = b.joinElection(LATCH, "second", told.get("second")::incrementAndGet);
            w.until(() -> second.ourPath() != null);
            out.add("both joined: " + w.view(a, Map.of("first", first, "second", second), told));
            first.leave(false);
            w.until(() -> second.hasLeadership() && w.children(a).size() == 1);
            out.add("first left: " + w.view(a, Map.of("first", first, "second", second), told));
            w.expire(b);
            w.until(() -> second.hasLeadership() && told.get("second").get() == 3);
            out.add("second's session expired, it reconnected: " + w.view(a, Map.of("first", first, "second", second), told));
            second.leave(false);
            w.until(() -> w.children(a).isEmpty());
            out.add("second left: " + w.view(a, Map.of("first", first, "second", second), told));
            return out;
        }
    }

    /** One world the story is told in. */
    abstract static class World implements AutoCloseable {

        final Map<Long, String> sessions = new LinkedHashMap<>();

        abstract ZooKeeperOps client(String name) throws Exception;

        /** The client's session expires; its client reconnects with a new one. */
        abstract void expire(ZooKeeperOps client) throws Exception;

        /** Lets the world run until {@code condition} holds. */
        abstract void until(BooleanSupplier condition);

        List<String> children(ZooKeeperOps reader) {
            try {
                List<String> children = new ArrayList<>(reader.getChildren(LATCH, null));
                Collections.sort(children);
                return children;
            } catch (Exception e) {
                throw new IllegalStateException(e);
            }
        }

        /** The latch's nodes (uuids hidden, owners by client), each member's path and leadership, and the changes it was told of. */
        String view(ZooKeeperOps reader, Map<String, ZooKeeperOps.ElectionMember> members, Map<String, AtomicInteger> told) throws Exception {
            List<String> nodes = new ArrayList<>();
            for (String child : children(reader)) {
                Stat stat = new Stat();
                String data = new String(reader.getData(LATCH + "/" + child, stat, null), UTF_8);
                nodes.add("\n  node " + hideUuid(child) + " data=" + data + " owner=" + sessions.getOrDefault(stat.getEphemeralOwner(), "?"));
            }
            Collections.sort(nodes);
            StringBuilder b = new StringBuilder(String.join("", nodes));
            for (String id : List.of("first", "second")) {
                ZooKeeperOps.ElectionMember m = members.get(id);
                b.append("\n  member ").append(id).append(" leads=").append(m.hasLeadership())
                        .append(" told=").append(told.get(id).get());
            }
            return b.toString();
        }

        private static String hideUuid(String child) {
            return child.replaceAll("^_c_[0-9a-f-]{36}-", "_c_<uuid>-");
        }
    }

    static final class ModelWorld extends World {
        private final SimZooKeeper server = new SimZooKeeper(() -> 0L);
        private final List<SimClient> clients = new ArrayList<>();

        @Override
        ZooKeeperOps client(String name) {
            SimClient c = new SimClient(server, name).start();
            clients.add(c);
            sessions.put(c.sessionId(), name);
            return c;
        }

        @Override
        void expire(ZooKeeperOps client) {
            SimClient c = (SimClient) client;
            c.expire();
            c.reconnect();
            sessions.put(c.sessionId(), c.name());
        }

        @Override
        void until(BooleanSupplier condition) {
            server.runEvents(100_000);
            assertThat(condition.getAsBoolean()).as("the model settled in the expected state").isTrue();
        }

        @Override
        public void close() {
            clients.forEach(SimClient::shutdown);
        }
    }

    static final class RealWorld extends World {
        private final Map<ZooKeeperOps, CuratorFramework> clients = new LinkedHashMap<>();

        @Override
        ZooKeeperOps client(String name) throws Exception {
            CuratorFramework c = CuratorFrameworkFactory.newClient(zk.server().getConnectString(), TIMING.session(),
                    TIMING.connection(), new RetryOneTime(100));
            c.start();
            assertThat(c.blockUntilConnected(TIMING.milliseconds(), TimeUnit.MILLISECONDS)).isTrue();
            CuratorOps ops = new CuratorOps(c, name);
            clients.put(ops, c);
            sessions.put(c.getZookeeperClient().getZooKeeper().getSessionId(), name);
            ops.listen(state -> { }, (message, e) -> { });
            return ops;
        }

        @Override
        void expire(ZooKeeperOps client) throws Exception {
            CuratorFramework c = clients.get(client);
            ZooKeeper victim = c.getZookeeperClient().getZooKeeper();
            long old = victim.getSessionId();
            CountDownLatch attached = new CountDownLatch(1);
            ZooKeeper killer = new ZooKeeper(zk.server().getConnectString(), TIMING.session(), e -> {
                if (e.getState() == KeeperState.SyncConnected) {
                    attached.countDown();
                }
            }, old, victim.getSessionPasswd());
            assertThat(attached.await(TIMING.milliseconds(), TimeUnit.MILLISECONDS)).isTrue();
            killer.close();
            String name = sessions.get(old);
            await().atMost(Duration.ofMillis(TIMING.forWaiting().milliseconds()))
                    .until(() -> c.getZookeeperClient().isConnected() && c.getZookeeperClient().getZooKeeper().getSessionId() != old);
            sessions.put(c.getZookeeperClient().getZooKeeper().getSessionId(), name);
        }

        @Override
        void until(BooleanSupplier condition) {
            await().atMost(Duration.ofMillis(TIMING.forWaiting().milliseconds())).until(condition::getAsBoolean);
        }

        @Override
        public void close() {
            clients.keySet().forEach(ZooKeeperOps::close);
            clients.values().forEach(CuratorFramework::close);
        }
    }
}
