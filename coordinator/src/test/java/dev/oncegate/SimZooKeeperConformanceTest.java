package dev.oncegate;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.retry.RetryOneTime;
import org.apache.curator.test.TestingServer;
import org.apache.curator.test.Timing;
import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.Op;
import org.apache.zookeeper.OpResult;
import org.apache.zookeeper.Watcher;
import org.apache.zookeeper.Watcher.Event.KeeperState;
import org.apache.zookeeper.ZooDefs.Perms;
import org.apache.zookeeper.ZooKeeper;
import org.apache.zookeeper.data.ACL;
import org.apache.zookeeper.data.Id;
import org.apache.zookeeper.data.Stat;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The in-memory ZooKeeper ({@link SimZooKeeper}, {@link SimClient}) answers as a real ZooKeeper
 * 3.9 server does: each script runs once against the model and once against the embedded
 * server (through raw ZooKeeper handles, {@link RawZooKeeperOps}), and the two transcripts —
 * results, error codes, multi results, stats (zxids relative to the script's root, times only
 * as an ordering), ephemeral owners (by client), ACLs and the watch events each watcher received —
 * must be identical; and again through production's {@link CuratorOps} on Curator clients (but
 * for expiry and watch removal, which Curator handles in the background). The model is only as
 * good as this test.
 *
 * <p>A seeded random script generator compares the two as well; its seed is printed, and
 * {@code -Doncegate.sim.conformance.seed=N} replays one; they run for about 3 s, or
 * {@code -Doncegate.sim.conformance.millis=M}. {@code -Doncegate.sim.conformance.print=true} prints
 * the server's transcripts (what ZooKeeper answered).
 */
class SimZooKeeperConformanceTest {

    private static final String SEED_PROPERTY = "oncegate.sim.conformance.seed";
    private static final String PRINT_PROPERTY = "oncegate.sim.conformance.print";
    private static final String BUDGET_PROPERTY = "oncegate.sim.conformance.millis";
    private static final Timing TIMING = new Timing();
    private static final AtomicInteger SCRIPTS = new AtomicInteger();

    static TestServer zk;
    static String previousCheckInterval;

    @TempDir
    static Path serverDir;

    @BeforeAll
    static void startServer() throws Exception {
        // ZooKeeper's ContainerManager would reap emptied containers between two steps of a script
        previousCheckInterval = System.setProperty("znode.container.checkIntervalMs", String.valueOf(Integer.MAX_VALUE));
        zk = TestServer.start(Files.createDirectories(serverDir));
    }

    @AfterAll
    static void stopServer() throws Exception {
        zk.close();
        if (previousCheckInterval == null) {
            System.clearProperty("znode.container.checkIntervalMs");
        } else {
            System.setProperty("znode.container.checkIntervalMs", previousCheckInterval);
        }
    }

    // ---- the scripts ------------------------------------------------------------------------------

    @Test
    void everyCreateMode_sameStatsNamesAndOwners() throws Exception {
        conforms(r -> {
            r.connect("a");
            r.step("root", () -> r.create("a", r.root, CreateMode.PERSISTENT));
            for (CreateMode mode : List.of(CreateMode.PERSISTENT, CreateMode.PERSISTENT_SEQUENTIAL, CreateMode.EPHEMERAL,
                    CreateMode.EPHEMERAL_SEQUENTIAL, CreateMode.CONTAINER, CreateMode.PERSISTENT_SEQUENTIAL)) {
                r.step("create " + mode, () -> r.create("a", r.root + "/" + mode.name().toLowerCase() + "-", mode));
            }
            r.step("children", () -> r.c("a").getChildren(r.root, null));
            r.step("root stat", () -> r.c("a").exists(r.root, null));
            r.step("stat ephemeral", () -> r.c("a").exists(r.root + "/ephemeral-", null));
            r.step("stat container", () -> r.c("a").exists(r.root + "/container-", null));
            r.step("create with parents", () -> r.c("a").create(r.root + "/p/q/r", "x".getBytes(UTF_8), CreateMode.PERSISTENT, null, new Stat(), true));
            r.step("stat p", () -> r.c("a").exists(r.root + "/p", null));
            r.step("stat p/q/r", () -> r.c("a").exists(r.root + "/p/q/r", null));
            r.step("create existing", () -> r.create("a", r.root + "/p", CreateMode.PERSISTENT));
            r.step("create without parent", () -> r.create("a", r.root + "/none/x", CreateMode.PERSISTENT));
            r.step("zxid taken by the two failures", () -> r.create("a", r.root + "/after-failures", CreateMode.PERSISTENT));
        });
    }

    @Test
    void childrenComeAndGo_versionsCversionPzxidAndSequenceNumbers() throws Exception {
        conforms(r -> {
            r.connect("a");
            r.step("root", () -> r.create("a", r.root, CreateMode.PERSISTENT));
            r.step("seq 1", () -> r.create("a", r.root + "/s-", CreateMode.PERSISTENT_SEQUENTIAL));
            r.step("plain", () -> r.create("a", r.root + "/plain", CreateMode.PERSISTENT));
            r.step("seq 2", () -> r.create("a", r.root + "/s-", CreateMode.PERSISTENT_SEQUENTIAL));
            r.step("delete plain", () -> r.delete("a", r.root + "/plain", -1));
            r.step("root after delete", () -> r.c("a").exists(r.root, null));
            r.step("seq 3 after a delete", () -> r.create("a", r.root + "/s-", CreateMode.PERSISTENT_SEQUENTIAL));
            r.step("set v0", () -> r.c("a").setData(r.root + "/s-0000000000", "one".getBytes(UTF_8), 0));
            r.step("set stale v0", () -> r.c("a").setData(r.root + "/s-0000000000", "two".getBytes(UTF_8), 0));
            r.step("set any", () -> r.c("a").setData(r.root + "/s-0000000000", "three!".getBytes(UTF_8), -1));
            r.step("get", () -> r.getData("a", r.root + "/s-0000000000", null));
            r.step("delete stale", () -> r.delete("a", r.root + "/s-0000000000", 1));
            r.step("delete v2", () -> r.delete("a", r.root + "/s-0000000000", 2));
            r.step("delete missing", () -> r.delete("a", r.root + "/s-0000000000", -1));
            r.step("set missing", () -> r.c("a").setData(r.root + "/gone", new byte[0], -1));
            r.step("get missing", () -> r.getData("a", r.root + "/gone", null));
            r.step("children missing", () -> r.c("a").getChildren(r.root + "/gone", null));
            r.step("exists missing", () -> r.c("a").exists(r.root + "/gone", null));
            r.step("root", () -> r.c("a").exists(r.root, null));
            r.step("children", () -> r.c("a").getChildren(r.root, null));
        });
    }

    @Test
    void multiFailingAtEachPosition_firstFailureCodeOthersOkOrRuntimeInconsistency_andNothingApplied() throws Exception {
        conforms(r -> {
            r.connect("a");
            ZooKeeperOps a = r.c("a");
            r.step("root", () -> r.create("a", r.root, CreateMode.PERSISTENT));
            r.step("x", () -> r.create("a", r.root + "/x", CreateMode.PERSISTENT));
            r.step("y", () -> r.create("a", r.root + "/y", CreateMode.PERSISTENT));
            List<Op> good = List.of(a.opCheck(r.root + "/x", 0), a.opCreate(r.root + "/n", "n".getBytes(UTF_8), CreateMode.PERSISTENT, null),
                    a.opSetData(r.root + "/x", "x1".getBytes(UTF_8), 0), a.opDelete(r.root + "/y", 0));
            List<Op> bad = List.of(a.opCheck(r.root + "/x", 7), a.opCreate(r.root + "/x", new byte[0], CreateMode.PERSISTENT, null),
                    a.opSetData(r.root + "/x", new byte[0], 7), a.opDelete(r.root + "/missing", -1));
            for (int at = 0; at < 4; at++) {
                List<Op> ops = new ArrayList<>(good);
                ops.set(at, bad.get(at));
                int position = at;
                r.step("multi failing at " + position, () -> a.multi(ops));
                r.step("multiOnce failing at " + position, () -> a.multiOnce(ops, java.time.Duration.ofSeconds(5)));
                r.step("nothing applied " + position, () -> a.exists(r.root + "/n", null));
            }
            r.step("sequential in a multi", () -> a.multi(List.of(a.opCreate(r.root + "/q-", new byte[0], CreateMode.PERSISTENT_SEQUENTIAL, null),
                    a.opCreate(r.root + "/q-", new byte[0], CreateMode.PERSISTENT_SEQUENTIAL, null))));
            r.step("create then set in one multi", () -> a.multi(List.of(a.opCreate(r.root + "/z", new byte[0], CreateMode.PERSISTENT, null),
                    a.opSetData(r.root + "/z", "z".getBytes(UTF_8), 0), a.opCheck(r.root + "/z", 1))));
            r.step("multi succeeding", () -> a.multi(good));
            r.step("x after", () -> r.getData("a", r.root + "/x", null));
            r.step("n after", () -> a.exists(r.root + "/n", null));
            r.step("root after", () -> a.exists(r.root, null));
            r.step("zxid after a failed multi", () -> a.multi(List.of(a.opCheck(r.root + "/x", 99))));
            r.step("next create", () -> r.create("a", r.root + "/after", CreateMode.PERSISTENT));
            r.step("read-only multi", () -> a.multi(List.of(a.opGetData(r.root + "/x"), a.opGetData(r.root + "/missing"),
                    a.opGetChildren(r.root), a.opGetChildren(r.root + "/missing"))));
            r.step("zxid after reads", () -> r.create("a", r.root + "/after-reads", CreateMode.PERSISTENT));
        });
    }

    @Test
    void notEmptyAndNoChildrenForEphemerals_whereZooKeeperReturnsThem() throws Exception {
        conforms(r -> {
            r.connect("a");
            r.step("root", () -> r.create("a", r.root, CreateMode.PERSISTENT));
            r.step("parent", () -> r.create("a", r.root + "/p", CreateMode.PERSISTENT));
            r.step("child", () -> r.create("a", r.root + "/p/c", CreateMode.PERSISTENT));
            r.step("delete non-empty", () -> r.delete("a", r.root + "/p", -1));
            r.step("delete non-empty at a wrong version", () -> r.delete("a", r.root + "/p", 5));
            r.step("ephemeral", () -> r.create("a", r.root + "/e", CreateMode.EPHEMERAL));
            r.step("child of ephemeral", () -> r.create("a", r.root + "/e/c", CreateMode.PERSISTENT));
            r.step("existing child of ephemeral name", () -> r.create("a", r.root + "/e", CreateMode.PERSISTENT));
            r.step("container", () -> r.create("a", r.root + "/k", CreateMode.CONTAINER));
            r.step("child of container", () -> r.create("a", r.root + "/k/c", CreateMode.EPHEMERAL));
            r.step("delete container's child", () -> r.delete("a", r.root + "/k/c", -1));
            r.step("container after", () -> r.c("a").exists(r.root + "/k", null));
            r.step("delete the emptied container", () -> r.delete("a", r.root + "/k", -1));
        });
    }

    @Test
    void aclRefusalsPerOperation_digestAndWorld_andGetAclRedaction() throws Exception {
        String admin = SimClient.digest("admin:a-secret");
        String reader = SimClient.digest("reader:r-secret");
        List<ACL> guarded = List.of(new ACL(Perms.ALL, new Id("digest", admin)), new ACL(Perms.READ, new Id("digest", reader)));
        List<ACL> readerOnly = List.of(new ACL(Perms.ALL, new Id("digest", admin)));
        conforms(r -> {
            r.connect("admin", "admin:a-secret");
            r.connect("reader", "reader:r-secret");
            r.connect("anyone");
            r.step("root", () -> r.create("admin", r.root, CreateMode.PERSISTENT));
            r.step("guarded", () -> r.c("admin").create(r.root + "/g", "g".getBytes(UTF_8), CreateMode.PERSISTENT, guarded, new Stat(), false));
            r.step("hidden", () -> r.c("admin").create(r.root + "/g/h", "h".getBytes(UTF_8), CreateMode.PERSISTENT, readerOnly, new Stat(), false));
            for (String who : List.of("reader", "anyone", "admin")) {
                ZooKeeperOps c = r.c(who);
                r.step(who + " getData", () -> r.getData(who, r.root + "/g", null));
                r.step(who + " exists", () -> c.exists(r.root + "/g", null));
                r.step(who + " exists hidden", () -> c.exists(r.root + "/g/h", null));
                r.step(who + " exists missing under guarded", () -> c.exists(r.root + "/g/none", null));
                r.step(who + " getChildren", () -> c.getChildren(r.root + "/g", null));
                r.step(who + " getACL", () -> c.getAcl(r.root + "/g", new Stat()));
                r.step(who + " getACL hidden", () -> c.getAcl(r.root + "/g/h", new Stat()));
                r.step(who + " create under guarded", () -> r.create(who, r.root + "/g/new-" + who, CreateMode.PERSISTENT));
                r.step(who + " setData", () -> c.setData(r.root + "/g", "w".getBytes(UTF_8), -1));
                r.step(who + " setData missing", () -> c.setData(r.root + "/g/none", "w".getBytes(UTF_8), -1));
                r.step(who + " setData at a wrong version", () -> c.setData(r.root + "/g", "w".getBytes(UTF_8), 42));
                r.step(who + " delete missing child", () -> r.delete(who, r.root + "/g/none", -1));
                r.step(who + " check in a multi", () -> c.multi(List.of(c.opCheck(r.root + "/g/h", -1))));
                r.step(who + " read multi", () -> c.multi(List.of(c.opGetData(r.root + "/g/h"), c.opGetChildren(r.root + "/g"))));
                r.step(who + " setACL", () -> c.setAcl(r.root + "/g/h", readerOnly, -1));
            }
            r.step("admin setACL at a wrong version", () -> r.c("admin").setAcl(r.root + "/g/h", guarded, 7));
            r.step("admin delete hidden", () -> r.delete("admin", r.root + "/g/h", -1));
            r.step("auth scheme expands to the creator's identity", () -> r.c("admin").create(r.root + "/mine", new byte[0],
                    CreateMode.PERSISTENT, List.of(new ACL(Perms.ALL, new Id("auth", ""))), new Stat(), false));
            r.step("its ACL", () -> r.c("admin").getAcl(r.root + "/mine", null));
            r.step("auth scheme without identity", () -> r.c("anyone").create(r.root + "/theirs", new byte[0],
                    CreateMode.PERSISTENT, List.of(new ACL(Perms.ALL, new Id("auth", ""))), new Stat(), false));
            r.step("malformed digest id", () -> r.c("admin").create(r.root + "/bad", new byte[0],
                    CreateMode.PERSISTENT, List.of(new ACL(Perms.ALL, new Id("digest", "no-colon"))), new Stat(), false));
            r.step("duplicates dropped", () -> r.c("admin").create(r.root + "/dup", new byte[0], CreateMode.PERSISTENT,
                    List.of(new ACL(Perms.ALL, new Id("digest", admin)), new ACL(Perms.ALL, new Id("digest", admin))), new Stat(), false));
            r.step("dup ACL", () -> r.c("admin").getAcl(r.root + "/dup", null));
        });
    }

    @Test
    void sessionExpiry_removesEphemerals_andFiresWatches() throws Exception {
        // (not through CuratorOps: Curator opens a new session on its own after an expiry)
        conformsToTheServer(r -> {
            r.connect("a");
            r.connect("b");
            ZooKeeperOps a = r.c("a");
            ZooKeeperOps b = r.c("b");
            r.step("root", () -> r.create("a", r.root, CreateMode.PERSISTENT));
            r.step("b ephemeral", () -> r.create("b", r.root + "/e", CreateMode.EPHEMERAL));
            r.step("b ephemeral sequential", () -> r.create("b", r.root + "/es-", CreateMode.EPHEMERAL_SEQUENTIAL));
            r.step("b persistent", () -> r.create("b", r.root + "/p", CreateMode.PERSISTENT));
            r.step("a watches e", () -> a.getData(r.root + "/e", null, r.watcher("a-data-e")));
            r.step("a watches es", () -> a.exists(r.root + "/es-0000000001", r.watcher("a-exists-es")));
            r.step("a watches children", () -> a.getChildren(r.root, r.watcher("a-children-root")));
            r.step("b watches p", () -> b.getData(r.root + "/p", null, r.watcher("b-data-p")));
            r.expire("b");
            r.step("children after expiry", () -> a.getChildren(r.root, null));
            r.step("root after expiry", () -> a.exists(r.root, null));
            r.step("a changes p: b's watch is gone", () -> a.setData(r.root + "/p", "x".getBytes(UTF_8), -1));
            r.connect("c");
            r.step("a new session takes a zxid", () -> r.create("c", r.root + "/c", CreateMode.EPHEMERAL));
        });
    }

    @Test
    void watchesFireOnce_withZooKeeperEventTypes() throws Exception {
        conforms(r -> {
            r.connect("a");
            r.connect("b");
            ZooKeeperOps a = r.c("a");
            ZooKeeperOps b = r.c("b");
            r.step("root", () -> r.create("a", r.root, CreateMode.PERSISTENT));
            r.step("n", () -> r.create("a", r.root + "/n", CreateMode.PERSISTENT));
            Watcher data = r.watcher("data-n");
            r.step("getData watch", () -> b.getData(r.root + "/n", null, data));
            r.step("exists watch, same watcher", () -> b.exists(r.root + "/n", data));
            r.step("set once", () -> a.setData(r.root + "/n", "1".getBytes(UTF_8), -1));
            r.step("set twice", () -> a.setData(r.root + "/n", "2".getBytes(UTF_8), -1));
            r.step("exists watch on missing", () -> b.exists(r.root + "/m", r.watcher("exists-m")));
            r.step("getData watch on missing", () -> r.getData("b", r.root + "/m", r.watcher("getdata-m")));
            r.step("create m", () -> r.create("a", r.root + "/m", CreateMode.PERSISTENT));
            r.step("child watch", () -> b.getChildren(r.root, r.watcher("children-root")));
            r.step("child watch on n", () -> b.getChildren(r.root + "/n", r.watcher("children-n")));
            r.step("data watch on n", () -> b.getData(r.root + "/n", null, r.watcher("data-n-2")));
            r.step("setData on root: no child event", () -> a.setData(r.root, "r".getBytes(UTF_8), -1));
            r.step("delete n: NodeDeleted once per watcher", () -> r.delete("a", r.root + "/n", -1));
            r.step("create k", () -> r.create("a", r.root + "/k", CreateMode.PERSISTENT));
            r.step("own write fires own watch", () -> a.getData(r.root + "/k", null, r.watcher("own-k")));
            r.step("a sets k", () -> a.setData(r.root + "/k", "k".getBytes(UTF_8), -1));
            r.step("failed write fires nothing", () -> a.getData(r.root + "/k", null, r.watcher("k-failed")));
            r.step("stale set", () -> a.setData(r.root + "/k", "k".getBytes(UTF_8), 0));
            r.step("failed multi fires nothing", () -> a.multi(List.of(a.opSetData(r.root + "/k", new byte[0], -1), a.opCheck(r.root + "/k", 0))));
            r.step("setACL fires nothing", () -> a.setAcl(r.root + "/k", List.of(new ACL(Perms.ALL, new Id("world", "anyone"))), -1));
        });
    }

    @Test
    void removeWatches_specificAndAll_removedWatchersAreTold() throws Exception {
        // (not through CuratorOps: it removes watches in Curator's background, after the step)
        conformsToTheServer(r -> {
            r.connect("a");
            ZooKeeperOps a = r.c("a");
            r.step("root", () -> r.create("a", r.root, CreateMode.PERSISTENT));
            r.step("n", () -> r.create("a", r.root + "/n", CreateMode.PERSISTENT));
            Watcher one = r.watcher("one");
            Watcher two = r.watcher("two");
            r.step("one on data", () -> a.getData(r.root + "/n", null, one));
            r.step("one on children", () -> a.getChildren(r.root + "/n", one));
            r.step("two on data", () -> a.getData(r.root + "/n", null, two));
            r.step("remove one", () -> {
                a.removeWatches(r.root + "/n", one);
                return null;
            });
            r.step("remove one again", () -> {
                a.removeWatches(r.root + "/n", one);
                return null;
            });
            r.step("set n: only two", () -> a.setData(r.root + "/n", "x".getBytes(UTF_8), -1));
            Watcher three = r.watcher("three");
            r.step("three on data", () -> a.getData(r.root + "/n", null, three));
            r.step("three on missing", () -> a.exists(r.root + "/m", three));
            r.step("remove all on n", () -> {
                a.removeWatches(r.root + "/n", null);
                return null;
            });
            r.step("delete n: nothing", () -> r.delete("a", r.root + "/n", -1));
            r.step("create m: three", () -> r.create("a", r.root + "/m", CreateMode.PERSISTENT));
        });
    }

    @Test
    void randomScripts_sameTranscriptOnModelAndServer() throws Exception {
        String given = System.getProperty(SEED_PROPERTY);
        long first = given != null ? Long.parseLong(given) : System.nanoTime();
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(Long.getLong(BUDGET_PROPERTY, 3_000));
        int runs = 0;
        for (long seed = first; runs == 0 || (given == null && System.nanoTime() < deadline); seed++, runs++) {
            System.out.println("SimZooKeeperConformanceTest random script seed " + seed + " (replay: -D" + SEED_PROPERTY + "=" + seed + ")");
            long s = seed;
            conforms(r -> randomScript(r, new Random(s)), "seed " + seed, true);
        }
        System.out.println("SimZooKeeperConformanceTest compared " + runs + " random scripts");
    }

    private static void randomScript(Run r, Random random) throws Exception {
        String aliceId = SimClient.digest("alice:pw");
        List<List<ACL>> acls = List.of(
                List.of(new ACL(Perms.ALL, new Id("world", "anyone"))),
                List.of(new ACL(Perms.ALL, new Id("digest", aliceId))),
                List.of(new ACL(Perms.ALL, new Id("digest", aliceId)), new ACL(Perms.READ | Perms.CREATE, new Id("world", "anyone"))),
                List.of(new ACL(Perms.READ | Perms.WRITE | Perms.DELETE, new Id("world", "anyone"))));
        List<String> names = List.of("alice", "bob");
        r.connect("alice", "alice:pw");
        r.connect("bob");
        r.step("root", () -> r.create("alice", r.root, CreateMode.PERSISTENT));
        List<String> paths = List.of(r.root + "/a", r.root + "/b", r.root + "/a/x", r.root + "/a/y", r.root + "/b/x", r.root + "/a/x/z");
        CreateMode[] modes = {CreateMode.PERSISTENT, CreateMode.PERSISTENT, CreateMode.PERSISTENT_SEQUENTIAL, CreateMode.EPHEMERAL,
            CreateMode.EPHEMERAL_SEQUENTIAL, CreateMode.CONTAINER};
        int steps = 25 + random.nextInt(25);
        int watchers = 0;
        for (int i = 0; i < steps; i++) {
            String who = names.get(random.nextInt(names.size()));
            ZooKeeperOps c = r.c(who);
            String path = paths.get(random.nextInt(paths.size()));
            int version = random.nextInt(4) - 1;
            String label = i + " " + who;
            switch (random.nextInt(12)) {
                case 0, 1 -> {
                    CreateMode mode = modes[random.nextInt(modes.length)];
                    List<ACL> acl = acls.get(random.nextInt(acls.size()));
                    r.step(label + " create " + mode + " " + path, () -> c.create(path, new byte[random.nextInt(3)], mode, acl, new Stat(), false));
                }
                case 2 -> r.step(label + " setData " + path + " v" + version, () -> c.setData(path, new byte[random.nextInt(5)], version));
                case 3 -> r.step(label + " delete " + path + " v" + version, () -> r.delete(who, path, version));
                case 4 -> {
                    String w = "w" + watchers++ + "-" + who;
                    r.step(label + " getData+watch " + path, () -> r.getData(who, path, r.watcher(w)));
                }
                case 5 -> {
                    String w = "w" + watchers++ + "-" + who;
                    r.step(label + " exists+watch " + path, () -> c.exists(path, r.watcher(w)));
                }
                case 6 -> {
                    String w = "w" + watchers++ + "-" + who;
                    r.step(label + " getChildren+watch " + path, () -> c.getChildren(path, r.watcher(w)));
                }
                case 7, 8 -> {
                    List<Op> ops = new ArrayList<>();
                    int n = 1 + random.nextInt(3);
                    for (int k = 0; k < n; k++) {
                        String p = paths.get(random.nextInt(paths.size()));
                        int v = random.nextInt(3) - 1;
                        switch (random.nextInt(4)) {
                            case 0 -> ops.add(c.opCheck(p, v));
                            case 1 -> ops.add(c.opCreate(p, new byte[1], modes[random.nextInt(modes.length)], acls.get(random.nextInt(acls.size()))));
                            case 2 -> ops.add(c.opSetData(p, new byte[2], v));
                            default -> ops.add(c.opDelete(p, v));
                        }
                    }
                    r.step(label + " multi " + ops.size(), () -> c.multi(ops));
                }
                case 9 -> r.step(label + " read multi", () -> c.multi(List.of(c.opGetData(path), c.opGetChildren(SimZooKeeper.parentOf(path)))));
                case 10 -> r.step(label + " getACL " + path, () -> c.getAcl(path, new Stat()));
                default -> {
                    List<ACL> acl = acls.get(random.nextInt(acls.size()));
                    r.step(label + " setACL " + path, () -> c.setAcl(path, acl, version));
                }
            }
        }
        r.step("final tree", () -> r.tree(r.root));
    }

    // ---- running a script on both sides -----------------------------------------------------------

    @FunctionalInterface
    interface Script {
        void run(Run r) throws Exception;
    }

    /** The script's transcript on the model equals the server's through raw handles and through production's CuratorOps. */
    private static void conforms(Script script) throws Exception {
        conforms(script, "", true);
    }

    /** The script's transcript on the model equals the server's through raw handles. */
    private static void conformsToTheServer(Script script) throws Exception {
        conforms(script, "", false);
    }

    private static void conforms(Script script, String what, boolean throughCurator) throws Exception {
        String root = "/conformance-" + SCRIPTS.incrementAndGet();
        String model = transcript(root, new ModelSide(), script);
        String real = transcript(root, new ServerSide(zk.server()), script);
        if (Boolean.getBoolean(PRINT_PROPERTY)) {
            System.out.println("SimZooKeeperConformanceTest transcript of the server " + what + "\n" + real);
        }
        assertThat(model).as("model vs server transcript %s", what).isEqualTo(real);
        if (throughCurator) {
            String curator = transcript(root + "-curator", new CuratorSide(zk.server()), script);
            assertThat(transcript(root + "-curator", new ModelSide(), script)).as("model vs CuratorOps transcript %s", what)
                    .isEqualTo(curator);
        }
    }

    private static String transcript(String root, Side side, Script script) throws Exception {
        try (Run r = new Run(root, side)) {
            script.run(r);
            return String.join("\n", r.out);
        }
    }

    /** One world a script runs in: the model, or the real server. */
    interface Side extends AutoCloseable {

        ZooKeeperOps connect(String name, List<String> userPasswords) throws Exception;

        /** The session expires at the server, and its client learns it (watch events included). */
        void expire(ZooKeeperOps client) throws Exception;

        /** Every watch event caused so far has been delivered. */
        void settle() throws Exception;
    }

    static final class ModelSide implements Side {
        private final AtomicLong clock = new AtomicLong(1_700_000_000_000L);
        private final SimZooKeeper server = new SimZooKeeper(() -> clock.addAndGet(3));
        private final List<SimClient> clients = new ArrayList<>();

        @Override
        public ZooKeeperOps connect(String name, List<String> userPasswords) {
            SimClient c = new SimClient(server, name);
            for (String up : userPasswords) {
                c.authorization("digest", up.getBytes(UTF_8));
            }
            clients.add(c.start());
            return c;
        }

        @Override
        public void expire(ZooKeeperOps client) {
            ((SimClient) client).expire();
        }

        @Override
        public void settle() {
            server.runEvents(100_000);
        }

        @Override
        public void close() {
            clients.forEach(SimClient::shutdown);
        }
    }

    static final class ServerSide implements Side {
        private final String connectString;
        private final List<ZooKeeper> handles = new ArrayList<>();
        private final Map<ZooKeeper, CountDownLatch> expired = new LinkedHashMap<>();

        ServerSide(TestingServer server) {
            this.connectString = server.getConnectString();
        }

        @Override
        public ZooKeeperOps connect(String name, List<String> userPasswords) throws Exception {
            CountDownLatch connected = new CountDownLatch(1);
            CountDownLatch gone = new CountDownLatch(1);
            ZooKeeper h = new ZooKeeper(connectString, 10_000, e -> {
                if (e.getState() == KeeperState.SyncConnected) {
                    connected.countDown();
                } else if (e.getState() == KeeperState.Expired) {
                    gone.countDown();
                }
            });
            handles.add(h);
            expired.put(h, gone);
            assertThat(connected.await(TIMING.milliseconds(), TimeUnit.MILLISECONDS)).as("%s connects", name).isTrue();
            for (String up : userPasswords) {
                h.addAuthInfo("digest", up.getBytes(UTF_8));
            }
            return new RawZooKeeperOps(h, connectString);
        }

        @Override
        public void expire(ZooKeeperOps client) throws Exception {
            ZooKeeper victim = ((RawZooKeeperOps) client).zk();
            CountDownLatch attached = new CountDownLatch(1);
            ZooKeeper killer = new ZooKeeper(connectString, 10_000, e -> {
                if (e.getState() == KeeperState.SyncConnected) {
                    attached.countDown();
                }
            }, victim.getSessionId(), victim.getSessionPasswd());
            assertThat(attached.await(TIMING.milliseconds(), TimeUnit.MILLISECONDS)).as("a second handle attaches to the session").isTrue();
            killer.close();
            assertThat(expired.get(victim).await(TIMING.milliseconds(), TimeUnit.MILLISECONDS)).as("the session expires").isTrue();
            handles.remove(victim);
            victim.close();
        }

        @Override
        public void settle() throws Exception {
            for (ZooKeeper h : handles) {
                CountDownLatch barrier = new CountDownLatch(1);
                h.exists("/", false, (rc, path, ctx, stat) -> barrier.countDown(), null);
                assertThat(barrier.await(TIMING.milliseconds(), TimeUnit.MILLISECONDS)).as("events delivered").isTrue();
            }
        }

        @Override
        public void close() throws Exception {
            for (ZooKeeper h : handles) {
                h.close();
            }
        }
    }

    /** Production's {@link CuratorOps} on Curator clients (RetryOneTime, default ACL provider, no namespace). */
    static final class CuratorSide implements Side {
        private final String connectString;
        private final List<CuratorFramework> clients = new ArrayList<>();
        private final List<ZooKeeperOps> ops = new ArrayList<>();

        CuratorSide(TestingServer server) {
            this.connectString = server.getConnectString();
        }

        @Override
        public ZooKeeperOps connect(String name, List<String> userPasswords) throws Exception {
            CuratorFrameworkFactory.Builder builder = CuratorFrameworkFactory.builder().connectString(connectString)
                    .sessionTimeoutMs(10_000).connectionTimeoutMs(TIMING.connection()).retryPolicy(new RetryOneTime(100));
            for (String up : userPasswords) {
                builder.authorization("digest", up.getBytes(UTF_8));
            }
            CuratorFramework client = builder.build();
            client.start();
            clients.add(client);
            assertThat(client.blockUntilConnected(TIMING.milliseconds(), TimeUnit.MILLISECONDS)).as("%s connects", name).isTrue();
            CuratorOps c = new CuratorOps(client, name);
            ops.add(c);
            return c;
        }

        @Override
        public void expire(ZooKeeperOps client) {
            throw new UnsupportedOperationException("Curator opens a new session on its own after an expiry: compared through raw handles");
        }

        @Override
        public void settle() throws Exception {
            for (CuratorFramework c : clients) {
                CountDownLatch barrier = new CountDownLatch(1);
                c.getZookeeperClient().getZooKeeper().exists("/", false, (rc, path, ctx, stat) -> barrier.countDown(), null);
                assertThat(barrier.await(TIMING.milliseconds(), TimeUnit.MILLISECONDS)).as("events delivered").isTrue();
            }
        }

        @Override
        public void close() {
            ops.forEach(ZooKeeperOps::close);
            clients.forEach(CuratorFramework::close);
        }
    }

    /** A script's run on one side: its clients, its watchers, and the transcript it writes. */
    static final class Run implements AutoCloseable {
        final String root;
        final Side side;
        final List<String> out = new ArrayList<>();
        private final Map<String, ZooKeeperOps> clients = new LinkedHashMap<>();
        private final Map<Long, String> sessions = new LinkedHashMap<>();
        private final Map<String, List<String>> events = new TreeMap<>();
        private long base = -1;

        Run(String root, Side side) {
            this.root = root;
            this.side = side;
        }

        void connect(String name, String... userPasswords) throws Exception {
            ZooKeeperOps c = side.connect(name, List.of(userPasswords));
            clients.put(name, c);
            sessions.put(c.sessionId(), name);
        }

        ZooKeeperOps c(String name) {
            return clients.get(name);
        }

        void expire(String name) throws Exception {
            side.expire(clients.get(name));
            out.add("expire " + name);
            flushEvents();
        }

        Watcher watcher(String label) {
            List<String> seen = Collections.synchronizedList(new ArrayList<>());
            synchronized (events) {
                events.put(label, seen);
            }
            return e -> seen.add(e.getType() + " " + e.getState() + (e.getPath() == null ? "" : " " + e.getPath()));
        }

        String create(String who, String path, CreateMode mode) throws Exception {
            Stat stat = new Stat();
            String created = c(who).create(path, new byte[0], mode, null, stat, false);
            if (path.equals(root)) {
                base = stat.getCzxid();
            }
            return created + " " + stat(stat);
        }

        String getData(String who, String path, Watcher watcher) throws Exception {
            Stat stat = new Stat();
            byte[] data = c(who).getData(path, stat, watcher);
            return new String(data, UTF_8) + " " + stat(stat);
        }

        Void delete(String who, String path, int version) throws Exception {
            c(who).delete(path, version);
            return null;
        }

        /** The tree under {@code path}: each node's stat, data and ACL (as the first client sees them). */
        String tree(String path) throws Exception {
            StringBuilder b = new StringBuilder();
            ZooKeeperOps c = clients.values().iterator().next();
            List<String> todo = new ArrayList<>(List.of(path));
            while (!todo.isEmpty()) {
                String p = todo.remove(0);
                Stat stat = new Stat();
                try {
                    List<ACL> acl = c.getAcl(p, stat);
                    b.append("\n  ").append(p).append(' ').append(stat(stat)).append(' ').append(acl);
                    List<String> children = new ArrayList<>(c.getChildren(p, null));
                    Collections.sort(children);
                    children.forEach(child -> todo.add(p + "/" + child));
                } catch (KeeperException e) {
                    b.append("\n  ").append(p).append(' ').append(e.code());
                }
            }
            return b.toString();
        }

        void step(String label, java.util.concurrent.Callable<Object> action) throws Exception {
            String result;
            try {
                result = render(action.call());
            } catch (KeeperException e) {
                result = "ERR " + e.code() + (e.getResults() == null ? "" : " " + render(e.getResults()));
            }
            out.add(label + " -> " + result);
            flushEvents();
        }

        private void flushEvents() throws Exception {
            side.settle();
            synchronized (events) {
                for (Map.Entry<String, List<String>> e : events.entrySet()) {
                    synchronized (e.getValue()) {
                        // within one step, the order of one watcher's events is the server's hash order
                        // (several ephemerals of an expired session, a removal's data and child events)
                        Collections.sort(e.getValue());
                        for (String event : e.getValue()) {
                            out.add("  event " + e.getKey() + ": " + event);
                        }
                        e.getValue().clear();
                    }
                }
            }
        }

        private String render(Object o) {
            if (o == null) {
                return "null";
            }
            if (o instanceof byte[] data) {
                return "'" + new String(data, UTF_8) + "'";
            }
            if (o instanceof Stat s) {
                return stat(s);
            }
            if (o instanceof ZooKeeperOps.MultiReply m) {
                return "rc " + KeeperException.Code.get(m.rc()) + " " + render(m.results());
            }
            if (o instanceof List<?> list) {
                List<String> items = new ArrayList<>();
                for (Object item : list) {
                    items.add(render(item));
                }
                if (!list.isEmpty() && list.get(0) instanceof String) {
                    Collections.sort(items);
                }
                return items.toString();
            }
            if (o instanceof OpResult result) {
                return opResult(result);
            }
            if (o instanceof ACL acl) {
                return acl.getPerms() + ":" + acl.getId().getScheme() + ":" + acl.getId().getId();
            }
            return o.toString();
        }

        private String opResult(OpResult r) {
            if (r instanceof OpResult.CreateResult c) {
                return "create " + c.getPath() + (c.getStat() == null ? "" : " " + stat(c.getStat()));
            }
            if (r instanceof OpResult.SetDataResult s) {
                return "setData " + stat(s.getStat());
            }
            if (r instanceof OpResult.ErrorResult e) {
                return "error " + KeeperException.Code.get(e.getErr());
            }
            if (r instanceof OpResult.GetDataResult g) {
                return "getData " + new String(g.getData(), UTF_8) + " " + stat(g.getStat());
            }
            if (r instanceof OpResult.GetChildrenResult g) {
                List<String> children = new ArrayList<>(g.getChildren());
                Collections.sort(children);
                return "getChildren " + children;
            }
            return r.getClass().getSimpleName();
        }

        /** A stat with zxids relative to the root's creation, owners by client name, times as an ordering. */
        String stat(Stat s) {
            long owner = s.getEphemeralOwner();
            String ownerName = owner == 0 ? "-" : owner == SimZooKeeper.CONTAINER_OWNER ? "container"
                    : sessions.getOrDefault(owner, "session?");
            return "{c" + rel(s.getCzxid()) + " m" + rel(s.getMzxid()) + " p" + rel(s.getPzxid()) + " v" + s.getVersion()
                    + " cv" + s.getCversion() + " av" + s.getAversion() + " owner " + ownerName + " len" + s.getDataLength()
                    + " n" + s.getNumChildren() + (s.getMtime() >= s.getCtime() ? "" : " mtime<ctime") + "}";
        }

        private String rel(long zxid) {
            return base < 0 ? "?" : String.valueOf(zxid - base);
        }

        @Override
        public void close() throws Exception {
            side.close();
        }
    }
}
