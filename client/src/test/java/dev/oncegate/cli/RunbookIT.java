package dev.oncegate.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import dev.oncegate.Destination;
import dev.oncegate.EffectKey;
import dev.oncegate.IdentityKind;
import dev.oncegate.OncegateAcl;
import dev.oncegate.deploy.RepoFiles;
import dev.oncegate.testing.EmbeddedZooKeeper;
import dev.oncegate.testing.Timing;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.retry.RetryNTimes;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.ZooDefs;
import org.apache.zookeeper.data.ACL;
import org.apache.zookeeper.data.Id;
import org.apache.zookeeper.data.Stat;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Executes {@code deploy/RUNBOOK.md} as written: every {@code sh} block with bash
 * ({@code -eo pipefail}, {@code oncegate} being the built jar) and every {@code zkcli} block with
 * Debian's stock zkCli, section by section in the runbook's order, against a real ZooKeeper with
 * access control on and keys in the states the procedures are about (consumed, armed by a
 * worker killed with {@code kill -9}, {@code send_status_unknown}, a corrupt record). After each
 * section the test checks what the procedure promised: the redelivery delivered once, the key
 * reconciled, nothing removed by a long retention; after rotation, the old credentials refused, the
 * roles epoch moved and every znode carrying its new role ACL (doctor's word, and a walk of its own).
 * A block in any other language, or a section this test does not know, fails the test: a new
 * procedure is only documented once it runs here.
 */
class RunbookIT {

    static final String NS = "/runbook";
    static final String WORKER = "worker:w-s3cret";
    static final String OPERATOR = "ops:o-s3cret";
    static final String ADMIN = "admin:a-s3cret";
    static final String NEW_OPERATOR = "ops2:o-n3w";
    static final String NEW_ADMIN = "admin:a-n3w";

    @TempDir
    Path dir;

    EmbeddedZooKeeper zk;
    CuratorFramework admin;
    Cli cli;
    final Map<String, String> env = new LinkedHashMap<>();

    @AfterEach
    void stop() {
        Cli.destroyAll();
        if (admin != null) {
            admin.close();
        }
        if (zk != null) {
            zk.close();
        }
    }

    /** A {@code ## } section of the runbook's first part and its fenced blocks, in order. */
    record Section(String title, List<Block> blocks) {
    }

    record Block(String language, String text) {
    }

    static List<Section> procedures(String runbook) {
        List<Section> sections = new ArrayList<>();
        String title = null;
        List<Block> blocks = new ArrayList<>();
        String language = null;
        StringBuilder text = new StringBuilder();
        for (String line : runbook.split("\n", -1)) {
            if (language != null) {
                if (line.equals("```")) {
                    blocks.add(new Block(language, text.toString()));
                    language = null;
                    text.setLength(0);
                } else {
                    text.append(line).append('\n');
                }
            } else if (line.startsWith("```")) {
                language = line.substring(3).strip();
                assertThat(language).as("runbook block languages (section " + title + ")").isIn("sh", "zkcli");
            } else if (line.startsWith("## ") || line.startsWith("# ")) {
                if (title != null) {
                    sections.add(new Section(title, List.copyOf(blocks)));
                }
                blocks.clear();
                title = line.startsWith("## ") ? line.substring(3).strip() : null;
                if (line.equals("# Alerts")) {
                    return sections;
                }
            }
        }
        throw new AssertionError("RUNBOOK.md has no \"# Alerts\" part");
    }

    @Test
    void everyProcedureRunsAsWritten_andDoesWhatItSays() throws Exception {
        zk = EmbeddedZooKeeper.start();
        admin = CuratorFrameworkFactory.builder().connectString(zk.connectString()).sessionTimeoutMs(6000)
                .connectionTimeoutMs(3000).retryPolicy(new RetryNTimes(3, 200))
                .authorization("digest", ADMIN.getBytes(StandardCharsets.UTF_8)).build();
        admin.start();
        cli = new Cli(dir, Map.of("ONCEGATE_CONNECT", zk.connectString()));
        Cli.Result init = cli.run("init", "--namespace", NS, "--worker", WORKER, "--operator", OPERATOR, "--admin", ADMIN);
        assertThat(init.exit()).as(init.toString()).isZero();

        Fixture consumed = deliver("consumed", "exit 0", 0);
        Fixture other = deliver("other", "exit 0", 0);
        Fixture unknown = deliver("unknown", "exit 9", 1);
        Fixture corrupt = deliver("corrupt", "exit 0", 0);
        Fixture forged = deliver("forged", "exit 0", 0);
        Fixture armed = armedByAKilledWorker();

        env.put("ONCEGATE_CONNECT", zk.connectString());
        env.put("ONCEGATE_STATE_DIR", dir.resolve("state").toString());
        env.put("NS", NS);
        env.put("OPERATOR_AUTH", secret("operator.auth", OPERATOR));
        env.put("ADMIN_AUTH", secret("admin.auth", ADMIN));
        env.put("OPERATOR", OPERATOR);
        env.put("KEY", consumed.key().key());
        env.put("KEY_PATH", consumed.path());
        env.put("DEST", consumed.dest());
        env.put("FILE", consumed.file().toString());
        env.put("OTHER_KEY", other.key().key());
        env.put("ARMED_KEY", armed.key().key());
        env.put("UNKNOWN_KEY", unknown.key().key());
        env.put("CORRUPT_KEY", corrupt.key().key());
        env.put("CORRUPT_PATH", corrupt.path() + "/0/armed/outcome");
        env.put("FORGED_KEY", forged.key().key());
        env.put("FORGED_SCOPE", forged.path() + "/1");
        env.put("ADMIN", ADMIN);
        env.put("NEW_ROLES", secret("new-roles", "worker=worker:w-n3w\noperator=" + NEW_OPERATOR + "\nadmin=" + NEW_ADMIN + "\n"));
        env.put("NEW_OPERATOR_AUTH", secret("new-operator.auth", NEW_OPERATOR));
        env.put("WORKER_AUTH", secret("worker.auth", WORKER));
        env.put("SIDECAR_TOKEN", dir.resolve("sidecar").resolve("sidecar.token").toString());

        Map<String, Consumer<String>> checks = new LinkedHashMap<>();
        checks.put("Health check", out -> assertThat(out).contains("ok    genesis", "this identity is the operator")
                .contains("ok    acls ", "carry their role ACL (roles epoch 0)")
                .contains("\"check\":\"session\",\"status\":\"warn\"").doesNotContain("fail  "));
        checks.put("Inspect a key", out -> assertThat(out).contains("\"key\":\"" + consumed.key().key() + "\"")
                .contains("\"state\":\"sent_verified\""));
        checks.put("Authorize one redelivery", out -> {
            assertThat(out).containsOnlyOnce("Node already exists");
            assertThat(exists(consumed.path() + "/authorizations/after-0")).isTrue();
            assertThat(exists(other.path() + "/authorizations/after-0")).isTrue();
            assertThat(out).contains("\"created\":true").as("run twice: the second writes nothing").contains("\"created\":false");
            // "The next contender opens the new scope and delivers; everyone after it stops again."
            assertThat(redeliver(consumed).exit()).isZero();
            assertThat(redeliver(consumed).exit()).isEqualTo(10);
            assertThat(ledger(consumed)).hasSize(2);
        });
        checks.put("Investigate send_status_unknown and armed without outcome", out -> assertThat(out)
                .contains(unknown.key().key()).contains(armed.key().key()).contains("\"armed\":{"));
        checks.put("Reconcile", out -> {
            assertThat(out).contains("\"created\":true");
            assertThat(exists(unknown.path() + "/authorizations/reconciled-0")).isTrue();
            Cli.Result again = redeliver(unknown);
            assertThat(again.exit()).as(again.toString()).isEqualTo(10);
            assertThat(again.runJson().get("decision").asText()).as("reconciled: read as sent_verified").isEqualTo("stop_sent");
        });
        checks.put("A corrupt record", out -> assertThat(out).contains("exit 13").contains("\"sent_veri"));
        checks.put("A record forged with the worker credential", out -> {
            assertThat(out).contains("exit 13", "opened neither by a not_sent outcome of scope 0");
            // after the admin removed the forged scope, the key reads as its history says: delivered once
            assertThat(out.substring(out.lastIndexOf("\"key\":"))).contains("\"state\":\"sent_verified\"");
            assertThat(exists(forged.path() + "/1")).isFalse();
            assertThat(redeliver(forged).exit()).as("a worker stops on the delivered key").isEqualTo(10);
            assertThat(ledger(forged)).hasSize(1);
        });
        checks.put("Why deleteall is never the redelivery procedure", out -> {
        });
        checks.put("ZooKeeper data lost, or restored from a backup", out -> assertThat(out).contains("exit 13")
                .contains(NS));
        checks.put("Retention", out -> {
            assertThat(out).doesNotContain("\"removed\":true");
            assertThat(exists(consumed.path())).as("a 90-day retention removes nothing recent").isTrue();
        });
        checks.put("The sidecar", out -> assertThat(out).contains("\"status\":\"ok\"", "\"zookeeper\":\"connected\"")
                .contains("oncegate_zookeeper_connection{").contains("without the token: 401")
                .contains("\"key\":\"" + consumed.key().key() + "\""));
        checks.put("Rotate credentials", out -> {
            assertThat(out).contains("\"key\":\"" + consumed.key().key() + "\"");
            Cli.Result old = cli.run("inspect", "--namespace", NS, "--auth", OPERATOR, "--key", consumed.key().key());
            assertThat(old.exit()).as("the old operator is locked out: " + old).isEqualTo(13);
            assertThat(old.stderr()).contains("permission");
            // "the acls line is ok and names the new roles epoch": the genesis was rewritten once
            assertThat(out).contains("\"check\":\"acls\",\"status\":\"ok\"").contains("\"roles_epoch\":1");
            assertThat(everyZnodeUnder(NS, NEW_ADMIN)).as("znodes whose ACL is not the new admin's, or is world-writable")
                    .isEmpty();
        });

        List<Section> sections = procedures(RepoFiles.read("deploy/RUNBOOK.md"));
        assertThat(sections).extracting(Section::title).as("the procedures this test knows, in order")
                .containsExactlyElementsOf(checks.keySet());
        for (Section section : sections) {
            if (section.title().equals("A record forged with the worker credential")) {
                openedByHandWithTheWorkerCredential(forged.path() + "/1");
            }
            if (section.title().equals("A corrupt record")) {
                // Only from here on: earlier procedures meet it as exit 13 of list, which their own sections do not cover.
                admin.setData().forPath(corrupt.path() + "/0/armed/outcome",
                        "{\"v\":2,\"outcome\":\"sent_veri".getBytes(StandardCharsets.UTF_8));
            }
            Cli.Running sidecar = section.title().equals("The sidecar") ? sidecar() : null;
            StringBuilder out = new StringBuilder();
            for (Block block : section.blocks()) {
                out.append(block.language().equals("sh") ? shell(section, block) : zkcli(section, block));
            }
            checks.get(section.title()).accept(out.toString());
            if (sidecar != null) {
                // "Exit 0: every crossing's outcome was written" (none was open)
                sidecar.process().destroy();
                assertThat(sidecar.process().waitFor(Timing.PROCESS.toMillis(), TimeUnit.MILLISECONDS)).isTrue();
                assertThat(sidecar.process().exitValue()).as(sidecar.stderr()).isZero();
            }
        }
    }

    /** {@code oncegate sidecar} as the worker, as the runbook's sidecar section expects it: its URL in $SIDECAR_URL. */
    Cli.Running sidecar() throws Exception {
        Cli.Running sidecar = cli.start("sidecar", "--namespace", NS, "--auth-file", env.get("WORKER_AUTH"), "--listen",
                "127.0.0.1:0", "--token-file", env.get("SIDECAR_TOKEN"));
        long deadline = System.nanoTime() + Timing.APPEAR.toNanos();
        while (!sidecar.stdout().contains("\"started\"")) {
            assertThat(System.nanoTime()).as("the sidecar did not start: " + sidecar.stderr()).isLessThan(deadline);
            assertThat(sidecar.process().isAlive()).as(sidecar.stderr()).isTrue();
            TimeUnit.MILLISECONDS.sleep(50);
        }
        env.put("SIDECAR_URL", Cli.JSON.readTree(sidecar.stdout().strip()).get("url").asText());
        return sidecar;
    }

    /** A key of this test: what it delivers, where, and its ledger. */
    record Fixture(String dest, Path file, EffectKey key, String path, Path ledger) {
    }

    Fixture deliver(String name, String exit, int expectedExit) throws IOException {
        Path file = Files.writeString(dir.resolve(name + ".txt"), name + " " + UUID.randomUUID());
        String dest = "slack:C" + name.toUpperCase();
        EffectKey key = EffectKey.of(Destination.parse(IdentityKind.STABLE, dest), file);
        Fixture fixture = new Fixture(dest, file, key, key.path(NS), dir.resolve(name + ".ledger"));
        Cli.Result r = redeliver(fixture, exit);
        assertThat(r.exit()).as(r.toString()).isEqualTo(expectedExit);
        return fixture;
    }

    Cli.Result redeliver(Fixture f) {
        return redeliver(f, "exit 0");
    }

    Cli.Result redeliver(Fixture f, String exit) {
        return cli.run("run", "--namespace", NS, "--auth", WORKER, "--dest", f.dest(), "--file", f.file().toString(),
                "--", "sh", "-c", "echo \"$ONCEGATE_SCOPE $ONCEGATE_FENCING_TOKEN\" >> " + f.ledger() + "; " + exit);
    }

    /**
     * What a holder of the worker credential can do: open a scope by hand, here {@code scope}, with
     * the role ACL a worker's client gives what it creates (so that only the forgery is wrong).
     */
    void openedByHandWithTheWorkerCredential(String scope) throws Exception {
        dev.oncegate.Genesis.Roles roles = new dev.oncegate.Genesis.Roles(dev.oncegate.OncegateAcl.digest(WORKER),
                dev.oncegate.OncegateAcl.digest(OPERATOR), dev.oncegate.OncegateAcl.digest(ADMIN));
        try (CuratorFramework worker = CuratorFrameworkFactory.builder().connectString(zk.connectString())
                .sessionTimeoutMs(6000).connectionTimeoutMs(3000).retryPolicy(new RetryNTimes(3, 200))
                .authorization("digest", WORKER.getBytes(StandardCharsets.UTF_8))
                .aclProvider(dev.oncegate.OncegateAcl.provider(NS, () -> roles)).build()) {
            worker.start();
            worker.create().forPath(scope, "{\"v\":4,\"o\":\"not_sent:0\",\"t\":\"2026-01-01T00:00:00Z\",\"h\":null}"
                    .getBytes(StandardCharsets.UTF_8));
        }
    }

    /** A worker that armed, started its command, and was killed with {@code kill -9}: armed without outcome. */
    Fixture armedByAKilledWorker() throws Exception {
        Path file = Files.writeString(dir.resolve("armed.txt"), "armed " + UUID.randomUUID());
        String dest = "slack:CARMED";
        EffectKey key = EffectKey.of(Destination.parse(IdentityKind.STABLE, dest), file);
        Fixture f = new Fixture(dest, file, key, key.path(NS), dir.resolve("armed.ledger"));
        Cli.Running running = cli.start("run", "--namespace", NS, "--auth", WORKER, "--dest", dest, "--file",
                file.toString(), "--", "sh", "-c", "echo started >> " + f.ledger() + "; exec sleep 600");
        long deadline = System.nanoTime() + Timing.PROCESS.toNanos();
        while (!Files.exists(f.ledger())) {
            assertThat(System.nanoTime()).as("the command never started: " + running.stderr()).isLessThan(deadline);
            assertThat(running.process().isAlive()).as(running.stderr()).isTrue();
            TimeUnit.MILLISECONDS.sleep(50);
        }
        ProcessTree.kill(running.process(), Duration.ZERO); // SIGKILL: no outcome is written
        assertThat(running.process().isAlive()).isFalse();
        assertThat(admin.getData().forPath(f.path() + "/0/armed/outcome")).as("no outcome written").isEmpty();
        return f;
    }

    String shell(Section section, Block block) {
        try {
            Path script = Files.createTempFile(dir, "runbook-", ".sh");
            Files.writeString(script, "oncegate() { " + Cli.javaCommandLine() + " \"$@\"; }\n" + block.text(),
                    StandardCharsets.UTF_8);
            Path out = Files.createTempFile(dir, "runbook-", ".out");
            ProcessBuilder builder = new ProcessBuilder("bash", "-eo", "pipefail", script.toString()).directory(dir.toFile())
                    .redirectErrorStream(true).redirectOutput(out.toFile())
                    .redirectInput(ProcessBuilder.Redirect.from(Path.of("/dev/null").toFile()));
            builder.environment().keySet().removeIf(k -> k.startsWith("ONCEGATE_"));
            builder.environment().putAll(env);
            Process p = builder.start();
            boolean finished = p.waitFor(Timing.PROCESS.toMillis() * block.text().lines().count(), TimeUnit.MILLISECONDS);
            if (!finished) {
                ProcessTree.kill(p, Duration.ZERO);
            }
            String output = Files.readString(out, StandardCharsets.UTF_8);
            assertThat(finished).as("section \"" + section.title() + "\" did not finish:\n" + block.text() + output).isTrue();
            assertThat(p.exitValue()).as("section \"" + section.title() + "\" failed:\n" + block.text() + "output:\n" + output)
                    .isZero();
            return output;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError("interrupted", e);
        }
    }

    private static final Pattern VARIABLE = Pattern.compile("\\$([A-Z_]+)");

    String zkcli(Section section, Block block) {
        List<String> commands = block.text().lines().map(line -> {
            Matcher m = VARIABLE.matcher(line);
            StringBuilder s = new StringBuilder();
            while (m.find()) {
                String value = env.get(m.group(1));
                assertThat(value).as("runbook variable $" + m.group(1) + " in section " + section.title()).isNotNull();
                m.appendReplacement(s, Matcher.quoteReplacement(value));
            }
            return m.appendTail(s).toString();
        }).toList();
        String output = new StockZkCli(zk.connectString(), dir).run(commands.toArray(String[]::new));
        assertThat(output).as("zkCli in section \"" + section.title() + "\":\n" + output)
                .doesNotContain("Insufficient permission").doesNotContain("Authentication is not valid")
                .doesNotContain("Exception").doesNotContain("Node does not exist");
        return output;
    }

    /**
     * The persistent znodes under {@code root} whose ACL does not give {@code adminIdentity} everything,
     * or lets anyone at all write, read as that admin.
     */
    List<String> everyZnodeUnder(String root, String adminIdentity) {
        Id admin = new Id("digest", OncegateAcl.digest(adminIdentity));
        List<String> wrong = new ArrayList<>();
        try (CuratorFramework c = CuratorFrameworkFactory.builder().connectString(zk.connectString())
                .sessionTimeoutMs(6000).connectionTimeoutMs(3000).retryPolicy(new RetryNTimes(3, 200))
                .authorization("digest", adminIdentity.getBytes(StandardCharsets.UTF_8)).build()) {
            c.start();
            List<String> toVisit = new ArrayList<>(List.of(root));
            while (!toVisit.isEmpty()) {
                String path = toVisit.remove(toVisit.size() - 1);
                Stat stat = new Stat();
                List<ACL> acl;
                try {
                    acl = c.getACL().storingStatIn(stat).forPath(path);
                    c.getChildren().forPath(path).forEach(child -> toVisit.add(path + "/" + child));
                } catch (KeeperException.NoNodeException gone) {
                    continue;
                }
                boolean open = acl.stream().anyMatch(a -> a.getId().equals(ZooDefs.Ids.ANYONE_ID_UNSAFE)
                        && (a.getPerms() & ~ZooDefs.Perms.READ) != 0);
                if (stat.getEphemeralOwner() == 0 && (open || !acl.contains(new ACL(ZooDefs.Perms.ALL, admin)))) {
                    wrong.add(path + " " + acl);
                }
            }
            return wrong;
        } catch (Exception e) {
            throw new AssertionError("could not walk " + root + " as " + adminIdentity, e);
        }
    }

    String secret(String name, String content) throws IOException {
        Path file = dir.resolve(name);
        Files.writeString(file, content + (content.endsWith("\n") ? "" : "\n"), StandardCharsets.UTF_8);
        return file.toString();
    }

    boolean exists(String path) {
        try {
            return admin.checkExists().forPath(path) != null;
        } catch (Exception e) {
            throw new AssertionError(path, e);
        }
    }

    List<String> ledger(Fixture f) {
        try {
            return Files.exists(f.ledger()) ? Files.readAllLines(f.ledger()) : List.of();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
