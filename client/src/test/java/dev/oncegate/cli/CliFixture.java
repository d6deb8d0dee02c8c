package dev.oncegate.cli;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.UUID;

import dev.oncegate.Destination;
import dev.oncegate.EffectKey;
import dev.oncegate.testing.EmbeddedZooKeeper;
import org.apache.curator.framework.CuratorFramework;
import org.apache.zookeeper.KeeperException;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.io.TempDir;

/**
 * Base of the CLI tests that need ZooKeeper: one real server per test class with
 * {@code /oncegate} initialised, a working directory per test with a ledger that the wrapped
 * commands append to, and a unique content file per test (so each test has its own key).
 */
abstract class CliFixture {

    static final String NAMESPACE = "/oncegate";
    /** The wrapped command: one ledger line per delivery, with what the gate told it. */
    static final String LEDGER_LINE = "echo \"$ONCEGATE_KEY $ONCEGATE_SCOPE $ONCEGATE_FENCING_TOKEN\" >> ledger";

    static EmbeddedZooKeeper zk;
    static CuratorFramework curator;

    @TempDir
    Path dir;
    /** {@code java -jar oncegate.jar} processes. */
    Cli cli;
    /** The same command lines in this JVM ({@link Cli#inProcess}): for the operator's commands and bad input. */
    Cli ops;
    Path ledger;
    Path content;
    String dest;
    EffectKey key;

    @BeforeAll
    static void startZooKeeper() {
        zk = EmbeddedZooKeeper.start();
        zk.initNamespace(NAMESPACE);
        curator = zk.newClient();
    }

    @AfterAll
    static void stopZooKeeper() {
        if (curator != null) {
            curator.close();
        }
        if (zk != null) {
            zk.close();
        }
    }

    @BeforeEach
    void workingDirectory() throws Exception {
        cli = new Cli(dir, Map.of());
        ops = Cli.inProcess(dir);
        ledger = dir.resolve("ledger");
        content = dir.resolve("report.txt");
        Files.writeString(content, "quarterly report " + UUID.randomUUID() + "\n");
        dest = "slack:C" + UUID.randomUUID().toString().substring(0, 8).toUpperCase();
        key = EffectKey.of(Destination.parse(dev.oncegate.IdentityKind.STABLE, dest), content);
    }

    @AfterEach
    void killEverythingStarted() {
        Cli.destroyAll();
    }

    /** {@code oncegate run --connect … --dest … --file … [options] -- sh -c SCRIPT}. */
    Cli.Result run(String script, String... options) {
        return cli.run(runArgs(script, options));
    }

    String[] runArgs(String script, String... options) {
        List<String> args = new java.util.ArrayList<>(List.of("run", "--connect", zk.connectString(),
                "--dest", dest, "--file", content.toString()));
        args.addAll(List.of(options));
        args.addAll(List.of("--", "sh", "-c", script));
        return args.toArray(String[]::new);
    }

    List<String> ledgerLines() throws Exception {
        return Files.exists(ledger) ? Files.readAllLines(ledger, StandardCharsets.UTF_8) : List.of();
    }

    /** The armed record of scope {@code n} ({@code n/armed}), or null when it was never armed. */
    String armedNode(int n) throws Exception {
        return curator.checkExists().forPath(key.path(NAMESPACE) + "/" + n + "/armed") != null ? "armed" : null;
    }

    /** The outcome of scope {@code n} ({@code n/armed/outcome}), or null when it was never written. */
    String outcome(int n) throws Exception {
        String written = znode("/" + n + "/armed/outcome");
        return written == null || written.isEmpty() ? null : written;
    }

    /** The data of a znode below the key, or null when it does not exist. */
    String znode(String relative) throws Exception {
        try {
            return new String(curator.getData().forPath(key.path(NAMESPACE) + relative), StandardCharsets.UTF_8);
        } catch (KeeperException.NoNodeException e) {
            return null;
        }
    }
}
