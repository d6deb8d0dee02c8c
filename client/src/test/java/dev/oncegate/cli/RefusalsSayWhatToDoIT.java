package dev.oncegate.cli;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;

import dev.oncegate.Destination;
import dev.oncegate.EffectKey;
import dev.oncegate.IdentityKind;
import dev.oncegate.testing.EmbeddedZooKeeper;
import org.apache.curator.framework.CuratorFramework;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import static dev.oncegate.cli.AccessControlIT.ADMIN;
import static dev.oncegate.cli.AccessControlIT.OPERATOR;
import static dev.oncegate.cli.AccessControlIT.WORKER;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * Under access control, a command that may not do what it was asked says which role it needs,
 * what this identity is (unauthenticated, another role, or unable to read the genesis, where a
 * wrong password and a missing role look alike), and what to give: one line, no Java exception,
 * exit 13. gc checks the role before it reads anything, dry run or not. The identities are
 * {@link AccessControlIT}'s, in a namespace of its own. The refused commands run in this JVM
 * ({@link Cli#inProcess}: what they say is ZooKeeper's answer, not their process's); the worker's
 * {@code run} that consumes each test's key is a process, as a worker's is.
 */
class RefusalsSayWhatToDoIT {

    static final String NS = "/refusals";

    static EmbeddedZooKeeper zk;
    static CuratorFramework admin;

    @TempDir
    Path dir;
    Cli cli;
    Cli ops;
    EffectKey key;
    String keyText;

    @BeforeAll
    static void startAndInitialise() {
        zk = EmbeddedZooKeeper.start();
        admin = AccessControlIT.clientAs(zk, ADMIN);
    }

    @AfterAll
    static void stop() {
        admin.close();
        zk.close();
    }

    @BeforeEach
    void aConsumedKeyUnderTheRoles() throws Exception {
        cli = new Cli(dir, Map.of());
        ops = Cli.inProcess(dir);
        if (admin.checkExists().forPath(NS + "/genesis") == null) {
            Cli.Result init = command("init", ADMIN, "--worker", WORKER, "--operator", OPERATOR, "--admin", ADMIN);
            assertThat(init.exit()).as(init.toString()).isZero();
        }
        Path content = Files.writeString(dir.resolve("report.txt"), "report " + UUID.randomUUID());
        String dest = "slack:C" + UUID.randomUUID().toString().substring(0, 8).toUpperCase();
        key = EffectKey.of(Destination.parse(IdentityKind.STABLE, dest), content);
        keyText = key.key();
        Cli.Result delivered = command("run", WORKER, "--dest", dest, "--file", content.toString(), "--", "true");
        assertThat(delivered.exit()).as(delivered.toString()).isZero();
    }

    @AfterEach
    void killEverythingStarted() {
        Cli.destroyAll();
    }

    @Test
    void initWithoutIdentity_onANamespaceWithRoles_saysToAuthenticateAsTheAdmin() {
        Cli.Result init = command("init", null);

        assertThat(init.exit()).as(init.toString()).isEqualTo(ExitCode.STOP_UNAVAILABLE);
        assertThat(init.stderr()).contains("permission denied", "no identity was given", "the admin's identity", "--auth");
        assertQuiet(init);
    }

    @Test
    void anotherRole_isNamed_andTheRoleNeeded() {
        Cli.Result reconcile = command("reconcile", WORKER, "--key", keyText, "--by", "worker", "--evidence", "trust me");

        assertThat(reconcile.exit()).as(reconcile.toString()).isEqualTo(ExitCode.STOP_UNAVAILABLE);
        assertThat(reconcile.stderr()).contains("reconcile needs the operator role",
                "worker is the namespace's worker, and this needs the operator");
        assertQuiet(reconcile);
    }

    @Test
    void wrongPassword_saysThatItLooksLikeAMissingRole_andToCheckThePassword() {
        Cli.Result inspect = command("inspect", "ops:not-the-password", "--key", keyText);

        assertThat(inspect.exit()).as(inspect.toString()).isEqualTo(ExitCode.STOP_UNAVAILABLE);
        assertThat(inspect.stderr()).contains("ops (from --auth) cannot even read the namespace's genesis",
                "a wrong password and a user without a role look alike", "check the password");
        assertQuiet(inspect);
    }

    @Test
    void gcAsTheOperator_isRefusedBeforeItReads_dryRunOrNot() throws Exception {
        Cli.Result dryRun = command("gc", OPERATOR, "--older-than", "1s", "--dry-run");
        Cli.Result real = command("gc", OPERATOR, "--older-than", "1s");
        Cli.Result asAdmin = command("gc", ADMIN, "--older-than", "1d", "--dry-run");

        for (Cli.Result refused : List.of(dryRun, real)) {
            assertThat(refused.exit()).as(refused.toString()).isEqualTo(ExitCode.STOP_UNAVAILABLE);
            assertThat(refused.stderr()).contains("gc needs the admin role", "ops is the namespace's operator")
                    .doesNotContain("would remove", "null");
            assertThat(refused.stdout()).isEmpty();
            assertQuiet(refused);
        }
        assertThat(asAdmin.exit()).as(asAdmin.toString()).isZero();
        assertThat(admin.checkExists().forPath(key.path(NS))).isNotNull();
    }

    private Cli.Result command(String name, String auth, String... options) {
        List<String> args = new ArrayList<>(List.of(name, "--connect", zk.connectString(), "--namespace", NS));
        if (auth != null) {
            args.addAll(List.of("--auth", auth));
        }
        args.addAll(List.of(options));
        return (name.equals("run") ? cli : ops).run(args.toArray(String[]::new));
    }

    private static void assertQuiet(Cli.Result result) {
        assertThat(result.stderr()).as(result.toString()).doesNotContain("Exception", "\tat ");
    }
}
