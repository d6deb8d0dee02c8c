package dev.oncegate.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;

import com.fasterxml.jackson.databind.JsonNode;
import dev.oncegate.Destination;
import dev.oncegate.EffectKey;
import dev.oncegate.IdentityKind;
import dev.oncegate.testing.EmbeddedZooKeeper;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.retry.RetryNTimes;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Access control (SPEC §6), tried from outside as people would: {@code oncegate init} with three
 * identities, the gate delivering once under the ACLs, and Debian's stock zkCli as a worker (who
 * cannot delete or rewrite armed, outcome, key or genesis, nor authorize), as a stranger (who
 * cannot read) and as an operator (who authorizes with the runbook's one line, safe to paste twice).
 */
class AccessControlIT {

    static final String NS = "/acl";
    static final String WORKER = "worker:w-s3cret";
    static final String OPERATOR = "ops:o-s3cret";
    static final String ADMIN = "admin:a-s3cret";

    static EmbeddedZooKeeper zk;
    static CuratorFramework admin;

    @TempDir
    Path dir;
    Cli cli;
    Cli ops;
    Path content;
    String dest;
    EffectKey key;
    String keyPath;

    @BeforeAll
    static void startAndInitialise() throws Exception {
        zk = EmbeddedZooKeeper.start();
        admin = clientAs(zk, ADMIN);
    }

    /** A started client of {@code zk} authenticated as {@code identity} ({@code USER:PASSWORD}). */
    static CuratorFramework clientAs(EmbeddedZooKeeper zk, String identity) {
        CuratorFramework client = CuratorFrameworkFactory.builder().connectString(zk.connectString()).sessionTimeoutMs(6000)
                .connectionTimeoutMs(3000).retryPolicy(new RetryNTimes(3, 200))
                .authorization("digest", identity.getBytes(StandardCharsets.UTF_8)).build();
        client.start();
        return client;
    }

    @AfterAll
    static void stop() {
        admin.close();
        zk.close();
    }

    @BeforeEach
    void setUp() throws Exception {
        cli = new Cli(dir, Map.of());
        ops = Cli.inProcess(dir);
        if (admin.checkExists().forPath(NS + "/genesis") == null) {
            Cli.Result init = ops.run("init", "--connect", zk.connectString(), "--namespace", NS,
                    "--worker", WORKER, "--operator", OPERATOR, "--admin", ADMIN);
            assertThat(init.exit()).as(init.toString()).isZero();
            assertThat(init.stdoutJson().get("acls").asBoolean()).isTrue();
            assertThat(init.stdoutJson().get("genesis").get("roles").get("worker").asText())
                    .startsWith("worker:").doesNotContain("w-s3cret");
        }
        content = Files.writeString(dir.resolve("report.txt"), "report " + UUID.randomUUID());
        dest = "slack:C" + UUID.randomUUID().toString().substring(0, 8).toUpperCase();
        key = EffectKey.of(Destination.parse(IdentityKind.STABLE, dest), content);
        keyPath = key.path(NS);
    }

    @AfterEach
    void killEverythingStarted() {
        Cli.destroyAll();
    }

    Cli.Result run(String auth, String script) {
        List<String> args = new ArrayList<>(List.of("run", "--connect", zk.connectString(), "--namespace", NS,
                "--dest", dest, "--file", content.toString()));
        if (auth != null) {
            args.addAll(List.of("--auth", auth));
        }
        args.addAll(List.of("--", "sh", "-c", script));
        return cli.run(args.toArray(String[]::new));
    }

    List<String> ledger() throws Exception {
        Path ledger = dir.resolve("ledger");
        return Files.exists(ledger) ? Files.readAllLines(ledger) : List.of();
    }

    String deliver() {
        return CliFixture.LEDGER_LINE;
    }

    @Test
    void workerDeliversOnce_underTheAcls_andAStrangerCannotEvenRead() throws Exception {
        Cli.Result first = run(WORKER, deliver());
        Cli.Result again = run(WORKER, deliver());
        Cli.Result stranger = run(null, deliver());

        assertThat(first.exit()).as(first.toString()).isZero();
        assertThat(again.exit()).as(again.toString()).isEqualTo(10);
        assertThat(stranger.exit()).as("a gate without credentials fails closed: " + stranger).isEqualTo(13);
        assertThat(stranger.runJson().get("reason").asText()).isEqualTo("permission_denied");
        assertThat(ledger()).hasSize(1);

        String zkcli = new StockZkCli(zk.connectString(), dir).run("get " + keyPath, "ls " + keyPath + "/0",
                "create " + NS + "/keys/zz stranger");
        assertThat(zkcli).contains("Insufficient permission : " + keyPath)
                .contains("Insufficient permission : " + keyPath + "/0")
                .contains("Insufficient permission : " + NS + "/keys/zz");
        assertThat(admin.checkExists().forPath(NS + "/keys/zz")).isNull();
    }

    @Test
    void workerWithStockZkCli_cannotDeleteOrRewriteTheRecords_norAuthorize() throws Exception {
        assertThat(run(WORKER, deliver()).exit()).isZero();
        String scope0 = keyPath + "/0";
        String armed = scope0 + "/armed";
        String outcome = armed + "/outcome";
        String genesis = NS + "/genesis";
        String genesisId = new String(admin.getData().forPath(genesis), StandardCharsets.UTF_8).replaceAll(".*\"id\":\"([^\"]+)\".*", "$1");
        byte[] outcomeBefore = admin.getData().forPath(outcome);

        String out = new StockZkCli(zk.connectString(), dir).run("addauth digest " + WORKER,
                "delete " + armed, "set " + armed + " {}", "delete " + outcome,
                "set " + keyPath + " {}", "deleteall " + keyPath, "delete " + scope0,
                "set " + genesis + " {}", "delete " + genesis + "/" + genesisId, "deleteall " + genesis,
                "create " + keyPath + "/authorizations/after-0 {\"by\":\"worker\",\"reason\":\"self-serve\"}");

        // zkCli says "Insufficient permission" for each refused write ("Failed to delete some node(s)" for a deleteall)
        assertThat(out.lines().filter(l -> l.startsWith("Insufficient permission")).count())
                .as("the writes refused:\n" + out).isGreaterThanOrEqualTo(8);
        assertThat(out).contains("Insufficient permission : " + armed, "Insufficient permission : " + outcome,
                "Insufficient permission : " + genesis, "Insufficient permission : " + keyPath + "/authorizations/after-0");
        assertThat(out).doesNotContain("Created " + keyPath + "/authorizations");
        assertThat(admin.checkExists().forPath(scope0)).isNotNull();
        assertThat(admin.getData().forPath(genesis)).asString(StandardCharsets.UTF_8).contains("\"id\":\"" + genesisId + "\"");
        assertThat(admin.checkExists().forPath(armed)).isNotNull();
        assertThat(admin.getData().forPath(outcome)).isEqualTo(outcomeBefore);
        assertThat(admin.checkExists().forPath(genesis + "/" + genesisId)).isNotNull();
        assertThat(admin.getChildren().forPath(keyPath + "/authorizations")).isEmpty();
        assertThat(run(WORKER, deliver()).exit()).as("still consumed").isEqualTo(10);

        // The outcome's one write is a worker's to make, so the credential may write it again: a rewrite is seen
        // (its version counts the writes) and stops every contender, and never reads not_sent
        String rewrite = new StockZkCli(zk.connectString(), dir).run("addauth digest " + WORKER,
                "set " + outcome + " {\"v\":4,\"o\":\"not_sent\"}");
        assertThat(rewrite).doesNotContain("Insufficient permission");
        Cli.Result after = run(WORKER, deliver());
        assertThat(after.exit()).as(after.toString()).isEqualTo(13);
        assertThat(after.runJson().get("reason").asText()).isEqualTo("unreadable_record");
        assertThat(ledger()).hasSize(1);
    }

    @Test
    void operatorAuthorizesWithTheRunbookLine_pastedTwice_oneRedeliveryFollows() throws Exception {
        assertThat(run(WORKER, deliver()).exit()).isZero();
        JsonNode story = Cli.JSON.readTree(ops.run("inspect", "--connect", zk.connectString(), "--namespace", NS,
                "--auth", OPERATOR, "--key", key.key()).stdout());
        String line = story.get("authorize_command").asText()
                .replace("<you>", "ops").replace("<why>", "customer asked for a resend");

        String out = new StockZkCli(zk.connectString(), dir).run("addauth digest " + OPERATOR, line, line);

        assertThat(out).contains("Created " + keyPath + "/authorizations/after-0").contains("Node already exists");
        Cli.Result redelivered = run(WORKER, deliver());
        Cli.Result repeat = run(WORKER, deliver());
        assertThat(redelivered.exit()).as(redelivered.toString()).isZero();
        assertThat(redelivered.runJson().get("scope").asInt()).isEqualTo(1);
        assertThat(repeat.exit()).isEqualTo(10);
        assertThat(ledger()).hasSize(2);
    }

    @Test
    void reconcileNeedsTheOperator_andAuthorizeRefusesTheWorker() throws Exception {
        assertThat(run(WORKER, deliver() + "; exit 7").exit()).isEqualTo(1); // send_status_unknown

        Cli.Result byWorker = ops.run("reconcile", "--connect", zk.connectString(), "--namespace", NS, "--auth", WORKER,
                "--key", key.key(), "--by", "worker", "--evidence", "trust me");
        Cli.Result authorizeByWorker = ops.run("authorize", "--connect", zk.connectString(), "--namespace", NS,
                "--auth", WORKER, "--key", key.key(), "--after", "0", "--by", "worker", "--reason", "self-serve");
        Cli.Result byOperator = ops.run("reconcile", "--connect", zk.connectString(), "--namespace", NS, "--auth", OPERATOR,
                "--key", key.key(), "--by", "alice", "--evidence", "message 1234 is in the channel");

        assertThat(byWorker.exit()).as(byWorker.toString()).isEqualTo(13);
        assertThat(byWorker.stderr()).contains("permission denied");
        assertThat(authorizeByWorker.exit()).as(authorizeByWorker.toString()).isEqualTo(13);
        assertThat(byOperator.exit()).as(byOperator.toString()).isZero();
        Cli.Result next = run(WORKER, deliver());
        assertThat(next.exit()).as("reconciled: reads sent_verified").isEqualTo(10);
        assertThat(ledger()).hasSize(1);
    }
}
