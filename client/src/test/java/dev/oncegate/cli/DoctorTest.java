package dev.oncegate.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import com.fasterxml.jackson.databind.JsonNode;
import dev.oncegate.ActionResult;
import dev.oncegate.Attempt;
import dev.oncegate.Crossing;
import dev.oncegate.Gate;
import dev.oncegate.Genesis;
import dev.oncegate.OncegateAcl;
import dev.oncegate.ZxidMarks;
import dev.oncegate.deploy.Tools;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.retry.RetryNTimes;
import org.apache.zookeeper.ZooDefs;
import org.apache.zookeeper.client.FourLetterWordMain;
import org.apache.zookeeper.common.X509Exception;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import dev.oncegate.testing.Timing;

/**
 * {@code oncegate doctor} against a real ZooKeeper 3.9.5 (the fixture's, four-letter words on):
 * what it finds in a healthy namespace without and with access control, for each role and for a
 * stranger, in an uninitialised namespace, with a lease TTL shorter than the session, with an ACL
 * changed by hand, with a world-writable znode planted deep in the namespace, with no server at all,
 * and for bad input; and against Debian's ZooKeeper 3.8
 * server (the {@code zookeeper} package), with its zoo.cfg for the autopurge check. Each line and each JSON field is
 * what an operator acts on; the exit code is 13 exactly when a check failed. Doctor runs in this
 * JVM ({@link Cli#inProcess}): what it checks is ZooKeeper's, not its own process's.
 */
class DoctorTest extends CliFixture {

    static final String WORKER = "worker:w-s3cret";
    static final String OPERATOR = "ops:o-s3cret";
    static final String ADMIN = "admin:a-s3cret";

    @Test
    void initialisedNamespaceWithoutAcls_nothingFails_andEachCheckSaysWhatItSaw() {
        Cli.Result r = doctor();

        assertThat(r.exit()).as(r.toString()).isZero();
        Map<String, String> lines = lines(r);
        assertThat(lines.keySet()).containsExactly("connection", "server", "genesis", "access", "acls", "session",
                "clock", "autopurge");
        assertThat(lines.get("connection")).startsWith("ok ").contains("connected to " + zk.connectString());
        assertThat(lines.get("server")).startsWith("ok ").contains("3.9.5 standalone");
        assertThat(lines.get("genesis")).startsWith("ok ").contains("has genesis");
        assertThat(lines.get("access")).startsWith("warn").contains("access control is off", "fix: ", "oncegate acl");
        assertThat(lines.get("acls")).startsWith("warn").contains("world-writable by design", "fix: ", "oncegate acl");
        // TestingServer ticks every 1000 ms: the 30 s asked for is negotiated down to 20 s, within the 30 s TTL
        assertThat(lines.get("session")).startsWith("ok ").contains("session timeout 20s (asked for 30s", "lease TTL 30s");
        assertThat(lines.get("clock")).startsWith("ok ").contains("ms", "the server's");
        assertThat(lines.get("autopurge")).startsWith("warn").contains("unknown", "--server-config");
    }

    @Test
    void json_isOneObject_withAStatusPerCheck() throws Exception {
        Cli.Result r = doctor("--json", "--lease-ttl", "5s");

        assertThat(r.exit()).as(r.toString()).isZero();
        JsonNode out = r.stdoutJson();
        assertThat(out.get("status").asText()).isEqualTo("warn");
        Map<String, JsonNode> checks = checks(out);
        JsonNode session = checks.get("session");
        assertThat(session.get("status").asText()).as("lease TTL 5 s < session 20 s").isEqualTo("warn");
        assertThat(session.get("detail").asText()).contains("shorter than the session timeout");
        assertThat(session.get("fix").asText()).contains("lease TTL of at least the session timeout");
        assertThat(session.get("data").get("negotiated_ms").asLong()).isEqualTo(20_000);
        assertThat(session.get("data").get("lease_ttl_ms").asLong()).isEqualTo(5_000);
        assertThat(Math.abs(checks.get("clock").get("data").get("skew_ms").asLong())).as("same host").isLessThan(1000);
        assertThat(checks.get("access").get("data").get("acls").asBoolean()).isFalse();
        assertThat(checks.get("connection").get("fix").isNull()).isTrue();
    }

    @Test
    void uninitialisedNamespace_failsGenesis_exit13_andSkipsWhatNeedsIt() {
        Cli.Result r = doctor("--namespace", "/never-initialised");

        assertThat(r.exit()).as(r.toString()).isEqualTo(13);
        Map<String, String> lines = lines(r);
        assertThat(lines.get("genesis")).startsWith("fail").contains("namespace_not_initialised",
                "fix: a new namespace: `oncegate init --namespace /never-initialised`", "do not init");
        assertThat(lines.get("access")).startsWith("skip");
        assertThat(lines.get("acls")).startsWith("skip");
        assertThat(lines.get("clock")).startsWith("skip");
        assertThat(lines.get("connection")).startsWith("ok ");
    }

    @Test
    void marksFileUnreadable_failsGenesis_exit13_namingTheFileAndTheFix() throws Exception {
        Path marks = Files.createDirectories(dir.resolve("state")).resolve("zxid-marks.json");
        Files.writeString(marks, "not json");

        Cli.Result r = doctor();

        assertThat(r.exit()).as(r.toString()).isEqualTo(13);
        assertThat(lines(r).get("genesis")).startsWith("fail").contains("marks_unreadable: marks file unreadable: " + marks,
                "fix: repair this host's marks file or move it aside");
        assertThat(marks).hasContent("not json");
    }

    @Test
    void accessControlOn_eachRoleSeesItsOwn_andAStrangerFails() throws Exception {
        String ns = "/doctor-acl";
        try (CuratorFramework admin = adminClient()) {
            Gate.initialize(admin, ns, roles(), ZxidMarks.inMemory());
        }

        Cli.Result worker = doctor("--namespace", ns, "--auth", WORKER);
        Cli.Result operator = doctor("--namespace", ns, "--auth", OPERATOR);
        Cli.Result stranger = doctor("--namespace", ns, "--auth", "mallory:guess");

        assertThat(worker.exit()).as(worker.toString()).isZero();
        assertThat(lines(worker).get("access")).startsWith("ok ").contains("this identity is the worker");
        assertThat(lines(worker).get("clock")).startsWith("ok ");
        assertThat(lines(worker).get("acls")).startsWith("ok ").contains("carry their role ACL", "roles epoch 0");
        assertThat(operator.exit()).as(operator.toString()).isZero();
        assertThat(lines(operator).get("acls")).as("an operator sees digests as user:x, and compares users")
                .startsWith("ok ");
        assertThat(lines(operator).get("access")).startsWith("ok ").contains("this identity is the operator");
        assertThat(lines(operator).get("clock")).as("an operator may not create the probe").startsWith("warn")
                .contains("unknown", "run doctor as the worker or the admin");
        assertThat(stranger.exit()).as(stranger.toString()).isEqualTo(13);
        assertThat(lines(stranger).get("genesis")).startsWith("fail").contains("permission_denied", "fix: authenticate");
    }

    @Test
    void anAclChangedByHand_failsAcls_namingTheZnodeAndTheFix() throws Exception {
        // Given a namespace under access control whose keys parent someone opened to the world by hand
        String ns = "/doctor-drift";
        try (CuratorFramework admin = adminClient()) {
            Gate.initialize(admin, ns, roles(), ZxidMarks.inMemory());
            admin.setACL().withACL(ZooDefs.Ids.OPEN_ACL_UNSAFE).forPath(ns + "/keys");
        }

        // When the worker's host runs doctor
        Cli.Result r = doctor("--namespace", ns, "--auth", WORKER, "--json");

        // Then the ACL check fails, naming the znode, what its ACL is and should be, and how to re-apply it
        assertThat(r.exit()).as(r.toString()).isEqualTo(13);
        JsonNode acls = checks(r.stdoutJson()).get("acls");
        assertThat(acls.get("status").asText()).isEqualTo("fail");
        assertThat(acls.get("detail").asText()).contains(ns + "/keys [world:anyone:cdrwa] (world-writable; its role ACL:"
                + " [digest:admin:cdrwa,digest:ops:r,digest:worker:cr])");
        assertThat(acls.get("fix").asText()).contains("oncegate acl");
        assertThat(checks(r.stdoutJson()).get("access").get("data").get("role").asText()).isEqualTo("worker");
    }

    @Test
    void aWorldWritableZnodePlantedDeepInTheNamespace_failsAcls_countingAndNamingIt() throws Exception {
        // Given a namespace under access control with a delivered key, where doctor finds nothing wrong
        String ns = "/doctor-planted";
        try (CuratorFramework admin = adminClient()) {
            Gate.initialize(admin, ns, roles(), ZxidMarks.inMemory());
            try (CuratorFramework workerClient = client(WORKER);
                    Gate gate = Gate.builder(workerClient).namespace(ns).taskId("task-doctor").build();
                    Attempt attempt = gate.enter(key)) {
                assertThat(attempt.cross(context -> ActionResult.verified("delivered"))).isInstanceOf(Crossing.Crossed.class);
            }
            Cli.Result healthy = doctor("--namespace", ns, "--auth", OPERATOR, "--json");
            assertThat(healthy.exit()).as(healthy.toString()).isZero();
            JsonNode fine = checks(healthy.stdoutJson()).get("acls");
            assertThat(fine.get("status").asText()).isEqualTo("ok");
            assertThat(fine.get("data").get("znodes").asLong()).as("NS, genesis, id, keys, 2 buckets, key, its 5 records")
                    .isGreaterThanOrEqualTo(11);
            assertThat(fine.get("data").get("differing").asLong()).isZero();
            // and a znode beneath the key's scope, where no sample reaches, that anyone may write
            String planted = key.path(ns) + "/0/planted";
            admin.create().withACL(ZooDefs.Ids.OPEN_ACL_UNSAFE).forPath(planted);

            // When the operator runs doctor
            Cli.Result r = doctor("--namespace", ns, "--auth", OPERATOR, "--json");
            Cli.Result human = doctor("--namespace", ns, "--auth", OPERATOR);

            // Then the ACL check fails, counting the znode and naming it, in JSON and in its line
            assertThat(r.exit()).as(r.toString()).isEqualTo(13);
            JsonNode acls = checks(r.stdoutJson()).get("acls");
            assertThat(acls.get("status").asText()).isEqualTo("fail");
            assertThat(acls.get("data").get("differing").asLong()).isEqualTo(1);
            assertThat(acls.get("data").get("world_writable").asLong()).isEqualTo(1);
            assertThat(acls.get("data").get("examples").get(0).asText()).startsWith(planted + " [world:anyone:cdrwa]");
            assertThat(acls.get("detail").asText()).contains("1 of", "world-writable", planted);
            assertThat(acls.get("fix").asText()).contains("oncegate acl");
            assertThat(human.exit()).isEqualTo(13);
            assertThat(lines(human).get("acls")).startsWith("fail").contains(planted, "fix: ");
        }
    }

    @Test
    void noServer_failsConnection_exit13() {
        Cli.Result r = ops.run("doctor", "--connect", "127.0.0.1:1", "--connect-timeout", "1s");

        assertThat(r.exit()).as(r.toString()).isEqualTo(13);
        Map<String, String> lines = lines(r);
        assertThat(lines.get("connection")).startsWith("fail").contains("fix: check --connect");
        assertThat(lines.get("server")).startsWith("fail").contains("no server answered");
        assertThat(lines.get("genesis")).startsWith("skip");
    }

    @Test
    void badInput_exit2_beforeAnythingIsChecked() {
        Cli.Result ttl = doctor("--lease-ttl", "10ms");
        Cli.Result config = doctor("--server-config", dir.resolve("missing.cfg").toString());

        assertThat(ttl.exit()).as(ttl.toString()).isEqualTo(2);
        assertThat(ttl.stderr()).contains("--lease-ttl");
        assertThat(config.exit()).as(config.toString()).isEqualTo(2);
        assertThat(config.stderr()).contains("--server-config");
        assertThat(ttl.stdout() + config.stdout()).isEmpty();
    }

    @Test
    void debiansZooKeeper38_answersEveryCheck_andItsZooCfgShowsAutopurge() throws Exception {
        Path jar = Tools.requireFile(StockZkCli.JAR, "apt-get install -y zookeeper");
        Tools.requireFile(Path.of("/usr/share/java/slf4j-simple.jar"), "apt-get install -y zookeeper");
        // Given Debian's ZooKeeper 3.8 server, standalone, from a zoo.cfg with autopurge on
        int port;
        try (ServerSocket socket = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            port = socket.getLocalPort();
        }
        Path cfg = dir.resolve("zoo.cfg");
        Files.writeString(cfg, String.join("\n", "tickTime=2000", "dataDir=" + dir.resolve("debian-data"),
                "clientPort=" + port, "clientPortAddress=127.0.0.1", "admin.enableServer=false",
                "4lw.commands.whitelist=srvr,ruok", "autopurge.snapRetainCount=3", "autopurge.purgeInterval=1", ""));
        Files.createDirectories(dir.resolve("debian-data"));
        debian = new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-Djava.net.preferIPv4Stack=true", "-cp", jar + ":/usr/share/java/slf4j-simple.jar",
                "org.apache.zookeeper.server.ZooKeeperServerMain", cfg.toString())
                .redirectErrorStream(true).redirectOutput(dir.resolve("debian.log").toFile()).start();
        int p = port;
        await().atMost(Timing.APPEAR).until(() -> imok(p));
        String connect = "127.0.0.1:" + port;
        assertThat(ops.run("init", "--connect", connect).exit()).isZero();

        // When doctor runs on its host with that zoo.cfg
        Cli.Result r = ops.run("doctor", "--connect", connect, "--server-config", cfg.toString());

        // Then nothing fails: the version is 3.8's, autopurge is on as the file says, the 30 s session stands
        assertThat(r.exit()).as(r.toString()).isZero();
        Map<String, String> lines = lines(r);
        assertThat(lines.get("server")).startsWith("ok ").contains(connect + " 3.8.", "standalone");
        assertThat(lines.get("autopurge")).startsWith("ok ").contains("keeps 3 snapshots, purging every 1 h");
        assertThat(lines.get("session")).startsWith("ok ").contains("session timeout 30s, lease TTL 30s");
        assertThat(lines.get("genesis")).startsWith("ok ");
        assertThat(lines.get("clock")).startsWith("ok ");
    }

    Process debian;

    @AfterEach
    void stopDebiansServer() throws InterruptedException {
        if (debian != null) {
            debian.destroyForcibly();
            debian.waitFor(Timing.PROCESS.toSeconds(), java.util.concurrent.TimeUnit.SECONDS);
        }
    }

    static boolean imok(int port) {
        try {
            return FourLetterWordMain.send4LetterWord("127.0.0.1", port, "ruok", false, 2000).startsWith("imok");
        } catch (IOException | X509Exception.SSLContextException e) {
            return false;
        }
    }

    Cli.Result doctor(String... options) {
        List<String> args = new ArrayList<>(List.of("doctor", "--connect", zk.connectString()));
        args.addAll(List.of(options));
        return ops.run(args.toArray(String[]::new));
    }

    /** check name → its line, in order. */
    static Map<String, String> lines(Cli.Result r) {
        Map<String, String> out = new LinkedHashMap<>();
        for (String line : r.stdout().strip().split("\n")) {
            String[] parts = line.split("\\s+", 3);
            out.put(parts[1], parts[0] + " " + parts[2]);
        }
        return out;
    }

    static Map<String, JsonNode> checks(JsonNode out) {
        Map<String, JsonNode> checks = new LinkedHashMap<>();
        out.get("checks").forEach(c -> checks.put(c.get("check").asText(), c));
        return checks;
    }

    static Genesis.Roles roles() {
        return new Genesis.Roles(OncegateAcl.digest(WORKER), OncegateAcl.digest(OPERATOR), OncegateAcl.digest(ADMIN));
    }

    static CuratorFramework adminClient() throws InterruptedException {
        return client(ADMIN);
    }

    /** A connected client authenticated as {@code auth} (USER:PASSWORD). */
    static CuratorFramework client(String auth) throws InterruptedException {
        CuratorFramework client = CuratorFrameworkFactory.builder().connectString(zk.connectString()).sessionTimeoutMs(6000)
                .connectionTimeoutMs(3000).retryPolicy(new RetryNTimes(3, 200))
                .authorization("digest", auth.getBytes(StandardCharsets.UTF_8)).build();
        client.start();
        assertThat(client.blockUntilConnected((int) Timing.APPEAR.toSeconds(), java.util.concurrent.TimeUnit.SECONDS)).isTrue();
        return client;
    }
}
