package dev.oncegate.cli;

import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;

import dev.oncegate.testing.Timing;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/** When the state cannot be established, every command stops with 13 and no command runs. */
class FailClosedIT extends CliFixture {

    @Test
    void zooKeeperUnreachable_runExits13Quickly_andTheCommandNeverRuns() throws Exception {
        String closed = "127.0.0.1:" + closedPort();
        Instant start = Instant.now();

        Cli.Result result = cli.run("run", "--connect", closed, "--connect-timeout", "2s", "--dest", dest,
                "--file", content.toString(), "--", "sh", "-c", "touch marker");

        assertThat(result.exit()).as(result.toString()).isEqualTo(13);
        assertThat(Duration.between(start, Instant.now())).isLessThan(Timing.scaled(Duration.ofSeconds(30)));
        assertThat(result.runJson().get("decision").asText()).isEqualTo("stop_unavailable");
        assertThat(result.runJson().get("reason").asText()).isEqualTo("zookeeper_unreachable");
        assertThat(Files.exists(dir.resolve("marker"))).isFalse();
    }

    @Test
    void zooKeeperUnreachable_fromEnvironment_initAndInspectExit13() throws Exception {
        Cli unreachable = new Cli(dir, java.util.Map.of("ONCEGATE_CONNECT", "127.0.0.1:" + closedPort()));

        Cli.Result init = unreachable.run("init", "--connect-timeout", "2s");
        Cli.Result inspect = unreachable.run("inspect", "--connect-timeout", "2s", "--key", key.key());

        assertThat(init.exit()).as(init.toString()).isEqualTo(13);
        assertThat(init.stderr()).contains("could not be reached within 2s");
        assertThat(inspect.exit()).as(inspect.toString()).isEqualTo(13);
    }

    @Test
    void namespaceNotInitialised_exits13_andTheCommandNeverRuns() throws Exception {
        Cli.Result result = cli.run("run", "--connect", zk.connectString(), "--namespace", "/never-initialised",
                "--dest", dest, "--file", content.toString(), "--", "sh", "-c", "touch marker");

        assertThat(result.exit()).as(result.toString()).isEqualTo(13);
        assertThat(result.runJson().get("reason").asText()).isEqualTo("namespace_not_initialised");
        assertThat(Files.exists(dir.resolve("marker"))).isFalse();
        assertThat(curator.checkExists().forPath("/never-initialised/keys")).isNull();
    }

    @Test
    void zooKeeperStoppedAfterDelivery_repeatExits13_notAFreshStart() throws Exception {
        // Separate server: stopping the shared one would disturb the other tests of this class.
        try (var own = dev.oncegate.testing.EmbeddedZooKeeper.start()) {
            own.initNamespace(NAMESPACE);
            Cli.Result delivered = cli.run("run", "--connect", own.connectString(), "--dest", dest,
                    "--file", content.toString(), "--", "sh", "-c", LEDGER_LINE);
            assertThat(delivered.exit()).as(delivered.toString()).isEqualTo(0);

            own.stop();
            Cli.Result repeat = cli.run("run", "--connect", own.connectString(), "--connect-timeout", "2s",
                    "--dest", dest, "--file", content.toString(), "--", "sh", "-c", LEDGER_LINE);

            assertThat(repeat.exit()).as(repeat.toString()).isEqualTo(13);
            assertThat(ledgerLines()).hasSize(1);
        }
    }

    @Test
    void marksFileUnreadable_runExits13_theCommandNeverRuns_andTheFileIsLeftAlone() throws Exception {
        // Given a host whose marks file is cut short
        Path marks = dir.resolve("state").resolve("zxid-marks.json");
        Files.createDirectories(marks.getParent());
        Files.writeString(marks, "{\"v\":1,\"marks\":[{\"namespace\":\"/oncegate\",\"gen");

        // When a run starts there
        Cli.Result result = run("touch marker");

        // Then it fails closed before writing anything, says why and what to do, and leaves the file as it was
        assertThat(result.exit()).as(result.toString()).isEqualTo(13);
        assertThat(result.runJson().get("decision").asText()).isEqualTo("stop_unavailable");
        assertThat(result.runJson().get("reason").asText()).isEqualTo("marks_unreadable");
        assertThat(result.runJson().get("evidence").get("detail").asText()).startsWith("marks file unreadable: " + marks)
                .contains("move it aside");
        assertThat(Files.exists(dir.resolve("marker"))).isFalse();
        assertThat(curator.checkExists().forPath(key.path(NAMESPACE))).as("the key was never created").isNull();
        assertThat(marks).hasContent("{\"v\":1,\"marks\":[{\"namespace\":\"/oncegate\",\"gen");
    }

    private static int closedPort() throws Exception {
        try (ServerSocket socket = new ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
            return socket.getLocalPort();
        }
    }
}
