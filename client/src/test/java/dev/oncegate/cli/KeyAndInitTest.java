package dev.oncegate.cli;

import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HexFormat;

import com.fasterxml.jackson.databind.JsonNode;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@code oncegate key} reproduces the shared key vectors without ZooKeeper; {@code init} is
 * idempotent. In this JVM, through {@link Main#run}; {@code AsciiLocaleIT} runs {@code key} as a
 * process under an ASCII locale, which only a process of its own has.
 */
class KeyAndInitTest extends CliFixture {

    @Test
    void key_slackVector_printsKeyAndPath() throws Exception {
        Path hello = dir.resolve("hello.txt");
        Files.writeString(hello, "hello world\n");

        Cli.Result result = ops.run("key", "--dest", "slack:C024BE91L", "--file", hello.toString());

        assertThat(result.exit()).as(result.toString()).isEqualTo(0);
        JsonNode json = result.stdoutJson();
        String expected = "db8c90dd89059f7dd1bfda7322e3ca93b87c6dad345d2c15415b74e2a8e31526";
        assertThat(json.get("key").asText()).isEqualTo(expected);
        assertThat(json.get("path").asText()).isEqualTo("/oncegate/keys/db/8c/" + expected);
        assertThat(json.get("provider").asText()).isEqualTo("slack");
        assertThat(json.get("identity").asText()).isEqualTo("stable");
        assertThat(json.get("destination").asText()).isEqualTo("C024BE91L");
        assertThat(json.get("sha256").asText()).isEqualTo("a948904f2f0f479b8f8197694b30184b0d2ed1c1cd2a1ec0fb85d299a192a447");
        assertThat(json.size()).isEqualTo(6);

        Cli.Result other = ops.run("key", "--namespace", "/other", "--dest", "slack:C024BE91L", "--file", hello.toString());

        assertThat(other.stdoutJson().get("path").asText()).isEqualTo("/other/keys/db/8c/" + expected);
    }

    @Test
    void key_everySharedVector_reproducesExactly() throws Exception {
        JsonNode vectors;
        try (InputStream in = getClass().getResourceAsStream("/key-vectors.json")) {
            vectors = Cli.JSON.readTree(in);
        }
        int n = 0;
        for (JsonNode v : vectors.get("vectors")) {
            Path file = dir.resolve("content-" + n++);
            byte[] bytes = v.get("content_hex").isNull() ? "a".repeat(100_000).getBytes()
                    : HexFormat.of().parseHex(v.get("content_hex").asText());
            Files.write(file, bytes);
            String option = v.get("identity").asText().equals("stable") ? "--dest" : "--dest-name";

            Cli.Result result = ops.run("key", option, v.get("provider").asText() + ":" + v.get("destination").asText(),
                    "--file", file.toString());

            assertThat(result.exit()).as(result.toString()).isEqualTo(0);
            assertThat(result.stdoutJson().get("sha256").asText()).isEqualTo(v.get("content_sha256").asText());
            assertThat(result.stdoutJson().get("key").asText()).as(v.toString()).isEqualTo(v.get("key").asText());
            assertThat(result.stdoutJson().get("destination").asText()).isEqualTo(v.get("destination").asText());
        }
    }

    @Test
    void init_twice_secondChangesNothing() throws Exception {
        String namespace = "/init-" + System.nanoTime();

        Cli.Result first = ops.run("init", "--connect", zk.connectString(), "--namespace", namespace);
        String genesis = new String(curator.getData().forPath(namespace + "/genesis"));
        Cli.Result second = ops.run("init", "--connect", zk.connectString(), "--namespace", namespace);

        assertThat(first.exit()).as(first.toString()).isEqualTo(0);
        assertThat(second.exit()).as(second.toString()).isEqualTo(0);
        assertThat(first.stdoutJson().get("created").asBoolean()).isTrue();
        assertThat(second.stdoutJson().get("created").asBoolean()).isFalse();
        assertThat(second.stdoutJson().get("namespace").asText()).isEqualTo(namespace);
        assertThat(second.stdoutJson().get("genesis").get("id").asText())
                .isEqualTo(first.stdoutJson().get("genesis").get("id").asText());
        assertThat(new String(curator.getData().forPath(namespace + "/genesis"))).isEqualTo(genesis);
    }

    @Test
    void initAcceptRestore_countsOneMoreAcceptedRestore_eachTime_andChangesNothingElse() throws Exception {
        String namespace = "/accept-" + System.nanoTime();
        Cli.Result init = ops.run("init", "--connect", zk.connectString(), "--namespace", namespace);
        assertThat(init.stdoutJson().get("genesis").get("restores_accepted").asInt()).isZero();

        Cli.Result first = ops.run("init", "--connect", zk.connectString(), "--namespace", namespace, "--accept-restore");
        Cli.Result second = ops.run("init", "--connect", zk.connectString(), "--namespace", namespace, "--accept-restore");

        assertThat(first.exit()).as(first.toString()).isEqualTo(0);
        assertThat(first.stdoutJson().get("restore_accepted").asBoolean()).isTrue();
        assertThat(first.stdoutJson().get("created").asBoolean()).isFalse();
        assertThat(first.stdoutJson().get("genesis").get("restores_accepted").asInt()).isEqualTo(1);
        assertThat(second.stdoutJson().get("genesis").get("restores_accepted").asInt()).isEqualTo(2);
        assertThat(second.stdoutJson().get("genesis").get("id").asText())
                .isEqualTo(init.stdoutJson().get("genesis").get("id").asText());
        JsonNode genesis = Cli.JSON.readTree(curator.getData().forPath(namespace + "/genesis"));
        assertThat(genesis.get("restores_accepted").asInt()).isEqualTo(2);
        assertThat(genesis.get("id").asText()).isEqualTo(init.stdoutJson().get("genesis").get("id").asText());
        assertThat(genesis.get("created").asText()).isEqualTo(init.stdoutJson().get("genesis").get("created").asText());
    }

    @Test
    void initAcceptRestore_withoutAGenesis_isRefused_andWithRoleIdentities_isBadInput() throws Exception {
        String namespace = "/accept-none-" + System.nanoTime();

        Cli.Result none = ops.run("init", "--connect", zk.connectString(), "--namespace", namespace, "--accept-restore");
        Cli.Result roles = ops.run("init", "--connect", zk.connectString(), "--namespace", namespace, "--accept-restore",
                "--worker", "w:pw", "--operator", "o:pw", "--admin", "a:pw");

        assertThat(none.exit()).as(none.toString()).isEqualTo(13);
        assertThat(none.stderr()).contains("has no genesis record", "no restore to accept");
        assertThat(curator.checkExists().forPath(namespace + "/genesis")).isNull();
        assertThat(roles.exit()).as(roles.toString()).isEqualTo(2);
        assertThat(roles.stderr()).contains("--accept-restore takes no role identities");
    }

    @Test
    void initAcceptRestore_withAccessControlOn_isTheAdminsAlone() throws Exception {
        String namespace = "/accept-acl-" + System.nanoTime();
        Cli.Result init = ops.run("init", "--connect", zk.connectString(), "--namespace", namespace,
                "--worker", "w:wpw", "--operator", "o:opw", "--admin", "a:apw");
        assertThat(init.exit()).as(init.toString()).isEqualTo(0);

        Cli.Result worker = ops.run("init", "--connect", zk.connectString(), "--namespace", namespace, "--accept-restore",
                "--auth", "w:wpw");
        Cli.Result operator = ops.run("init", "--connect", zk.connectString(), "--namespace", namespace,
                "--accept-restore", "--auth", "o:opw");
        Cli.Result admin = ops.run("init", "--connect", zk.connectString(), "--namespace", namespace, "--accept-restore",
                "--auth", "a:apw");

        assertThat(worker.exit()).as(worker.toString()).isEqualTo(13);
        assertThat(operator.exit()).as(operator.toString()).isEqualTo(13);
        assertThat(admin.exit()).as(admin.toString()).isEqualTo(0);
        assertThat(admin.stdoutJson().get("genesis").get("restores_accepted").asInt()).isEqualTo(1);
    }
}
