package dev.oncegate.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;

import dev.oncegate.testing.AmbiguousWriteCnxnFactory;
import dev.oncegate.testing.EmbeddedZooKeeper;
import org.apache.curator.framework.CuratorFramework;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The crossing pinned from outside: against a server that applies the arming multi and loses its
 * reply, {@code oncegate run} stops with {@code write_result_unknown} (it counts as armed) and the
 * command never runs — so a {@code run} that started the command before arming returned fails here.
 */
class ArmingReplyLostIT {

    static EmbeddedZooKeeper zk;
    static CuratorFramework curator;

    @TempDir
    Path dir;

    @BeforeAll
    static void start() {
        zk = EmbeddedZooKeeper.startWithAmbiguousWrites();
        zk.initNamespace(CliFixture.NAMESPACE);
        curator = zk.newClient();
    }

    @AfterAll
    static void stop() {
        curator.close();
        zk.close();
    }

    @AfterEach
    void cleanUp() {
        AmbiguousWriteCnxnFactory.reset();
        Cli.destroyAll();
    }

    @Test
    void armingReplyLost_commandNeverRuns_andTheRunStopsWriteResultUnknown() throws Exception {
        Path content = Files.writeString(dir.resolve("report.txt"), "report " + System.nanoTime());
        int dropped = AmbiguousWriteCnxnFactory.dropped();
        AmbiguousWriteCnxnFactory.dropNextArmingReply();

        Cli.Result result = new Cli(dir, Map.of()).run("run", "--connect", zk.connectString(), "--dest", "slack:C42",
                "--file", content.toString(), "--", "sh", "-c", "touch ran");

        assertThat(AmbiguousWriteCnxnFactory.dropped()).isEqualTo(dropped + 1);
        assertThat(result.exit()).as(result.toString()).isEqualTo(13);
        assertThat(result.runJson().get("reason").asText()).isEqualTo("write_result_unknown");
        assertThat(dir.resolve("ran")).as("the command must never start").doesNotExist();
        String key = result.runJson().get("key").asText();
        String scope0 = CliFixture.NAMESPACE + "/keys/" + key.substring(0, 2) + "/" + key.substring(2, 4) + "/" + key + "/0";
        assertThat(curator.getChildren().forPath(scope0)).as("the arm was applied: the key is consumed")
                .contains("armed");
    }
}
