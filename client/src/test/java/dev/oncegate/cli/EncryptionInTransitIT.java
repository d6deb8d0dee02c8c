package dev.oncegate.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.UUID;

import dev.oncegate.Destination;
import dev.oncegate.EffectKey;
import dev.oncegate.IdentityKind;
import dev.oncegate.testing.TlsZooKeeper;
import org.apache.curator.framework.CuratorFramework;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Issue 7, encryption in transit, from the command line: {@code --zk-client-config} (or
 * {@code ONCEGATE_ZK_CLIENT_CONFIG}) names a ZooKeeper client properties file, and with it
 * {@code oncegate init} and {@code oncegate run} work against a real server whose only client port
 * is TLS (in this JVM; the CLI runs as its own processes). Without it the server refuses the
 * connection and {@code run} fails closed; a missing file is bad input.
 * The CA and keys are made by {@code keytool} once for the class.
 */
class EncryptionInTransitIT {

    static final String NAMESPACE = "/oncegate";
    static final String LEDGER_LINE = CliFixture.LEDGER_LINE;

    /** Started when the class's tests begin; JUnit closes it (and its keys) after the last. */
    @AutoClose
    static final TlsZooKeeper zk = TlsZooKeeper.start();

    @TempDir
    Path dir;
    Cli cli;
    Path clientConfig;
    Path content;
    Path ledger;
    String dest;
    EffectKey key;

    @BeforeEach
    void workingDirectory() throws Exception {
        cli = new Cli(dir, Map.of());
        clientConfig = zk.material().writeClientConfig(dir.resolve("client.properties"));
        ledger = dir.resolve("ledger");
        content = dir.resolve("report.txt");
        Files.writeString(content, "quarterly report " + UUID.randomUUID() + "\n");
        dest = "slack:C" + UUID.randomUUID().toString().substring(0, 8).toUpperCase();
        key = EffectKey.of(Destination.parse(IdentityKind.STABLE, dest), content);
    }

    @AfterEach
    void killEverythingStarted() {
        Cli.destroyAll();
    }

    @Test
    void initAndRun_withTheClientConfig_deliverOnce_andWithoutItFailClosed() throws Exception {
        // Given a namespace initialised over TLS
        Cli.Result init = cli.run("init", "--connect", zk.connectString(), "--zk-client-config", clientConfig.toString());
        assertThat(init.exit()).as(init.toString()).isEqualTo(0);
        assertThat(init.stdoutJson().get("created").asBoolean()).isTrue();

        // When a worker runs its command over TLS
        Cli.Result delivered = cli.run(runArgs("--zk-client-config", clientConfig.toString()));

        // Then it delivers once
        assertThat(delivered.exit()).as(delivered.toString()).isEqualTo(0);
        assertThat(delivered.runJson().get("outcome").asText()).isEqualTo("sent_verified");
        assertThat(ledgerLines()).containsExactly(key.key() + " 0 " + delivered.runJson().get("token").asText());

        // When a second worker runs it over TLS (configured through the environment this time)
        Cli.Result repeat = new Cli(dir, Map.of("ONCEGATE_ZK_CLIENT_CONFIG", clientConfig.toString())).run(runArgs());

        // Then it stops: consumed, sent_verified
        assertThat(repeat.exit()).as(repeat.toString()).isEqualTo(10);
        assertThat(repeat.runJson().get("decision").asText()).isEqualTo("stop_sent");

        // When a third runs it without the client configuration: plain text to a TLS-only port
        Cli.Result plain = cli.run(runArgs("--connect-timeout", "2s"));

        // Then the server refuses it, it fails closed and nothing more is delivered
        assertThat(plain.exit()).as(plain.toString()).isEqualTo(13);
        assertThat(plain.runJson().get("decision").asText()).isEqualTo("stop_unavailable");
        assertThat(plain.runJson().get("reason").asText()).isEqualTo("zookeeper_unreachable");
        assertThat(ledgerLines()).hasSize(1);
        // and the records, read over TLS by another subcommand, say it was delivered once, in scope 0
        Cli.Result inspect = cli.run("inspect", "--connect", zk.connectString(), "--zk-client-config",
                clientConfig.toString(), "--key", key.key());
        assertThat(inspect.exit()).as(inspect.toString()).isEqualTo(0);
        assertThat(inspect.stdoutJson().get("state").asText()).isEqualTo("sent_verified");
        assertThat(inspect.stdoutJson().get("scopes")).hasSize(1);
    }

    @Test
    void missingClientConfigFile_exits2NamingTheOption_andNothingIsWritten() throws Exception {
        Path missing = dir.resolve("no-such-client.properties");

        Cli.Result run = cli.run(runArgs("--zk-client-config", missing.toString()));
        Cli.Result init = new Cli(dir, Map.of("ONCEGATE_ZK_CLIENT_CONFIG", missing.toString()))
                .run("init", "--connect", zk.connectString(), "--namespace", "/never-initialised");

        assertThat(run.exit()).as(run.toString()).isEqualTo(2);
        assertThat(run.stderr()).contains("--zk-client-config", missing.toString(), "does not exist");
        assertThat(ledgerLines()).isEmpty();
        assertThat(init.exit()).as(init.toString()).isEqualTo(2);
        assertThat(init.stderr()).contains("--zk-client-config", "ONCEGATE_ZK_CLIENT_CONFIG");
        try (CuratorFramework auditor = zk.newClient()) {
            assertThat(auditor.checkExists().forPath("/never-initialised")).isNull();
            assertThat(auditor.checkExists().forPath(key.path(NAMESPACE))).isNull();
        }
    }

    /** {@code run --connect <the TLS port> --dest … --file … OPTIONS -- sh -c LEDGER_LINE}. */
    private String[] runArgs(String... options) {
        List<String> args = new java.util.ArrayList<>(List.of("run", "--connect", zk.connectString(),
                "--dest", dest, "--file", content.toString()));
        args.addAll(List.of(options));
        args.addAll(List.of("--", "sh", "-c", LEDGER_LINE));
        return args.toArray(String[]::new);
    }

    private List<String> ledgerLines() throws Exception {
        return Files.exists(ledger) ? Files.readAllLines(ledger, StandardCharsets.UTF_8) : List.of();
    }
}
