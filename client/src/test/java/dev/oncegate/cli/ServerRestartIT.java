package dev.oncegate.cli;

import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;

import com.fasterxml.jackson.databind.JsonNode;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * {@code oncegate server} runs a real ZooKeeper whose data survives a restart: a key consumed
 * before the restart is still consumed after it, and the namespace is initialised only once.
 */
class ServerRestartIT {

    @TempDir
    Path dir;
    Cli cli;
    Path content;

    @BeforeEach
    void setUp() throws Exception {
        cli = new Cli(dir, Map.of());
        content = dir.resolve("report.txt");
        Files.writeString(content, "server report\n");
    }

    @AfterEach
    void killEverythingStarted() {
        Cli.destroyAll();
    }

    @Test
    void deliveredBeforeRestart_staysDeliveredAfterIt() throws Exception {
        int port = freePort();
        Path data = dir.resolve("zk-data");

        Cli.Running server = startServer(port, data);
        JsonNode started = startLine(server);
        assertThat(started.get("initialized").asBoolean()).isTrue();
        assertThat(started.get("connect").asText()).isEqualTo("127.0.0.1:" + port);
        assertThat(started.get("namespace").asText()).isEqualTo("/oncegate");

        Cli.Result delivered = run(port);
        assertThat(delivered.exit()).as(delivered.toString()).isEqualTo(0);

        server.process().destroy(); // SIGTERM: clean shutdown
        Cli.Result stopped = server.await(Timing.PROCESS);
        assertThat(stopped.exit()).as(stopped.toString()).isEqualTo(0);

        Cli.Running restarted = startServer(port, data);
        assertThat(startLine(restarted).get("initialized").asBoolean()).isFalse();

        Cli.Result repeat = run(port);

        assertThat(repeat.exit()).as(repeat.toString()).isEqualTo(10);
        assertThat(Files.readAllLines(dir.resolve("ledger"))).hasSize(1);
    }

    private Cli.Running startServer(int port, Path data) {
        return cli.start("server", "--port", Integer.toString(port), "--data-dir", data.toString(), "--bind", "127.0.0.1");
    }

    private JsonNode startLine(Cli.Running server) throws Exception {
        await().atMost(Timing.APPEAR).until(() -> server.stdout().contains("\"server\":\"started\"")
                || !server.process().isAlive());
        assertThat(server.process().isAlive()).as("server exited early: " + server.stderr()).isTrue();
        List<String> lines = server.stdout().lines().toList();
        return Cli.JSON.readTree(lines.get(lines.size() - 1));
    }

    private Cli.Result run(int port) {
        return cli.run("run", "--connect", "127.0.0.1:" + port, "--dest", "slack:C024BE91L", "--file", content.toString(),
                "--", "sh", "-c", "echo \"$ONCEGATE_KEY $ONCEGATE_SCOPE\" >> ledger");
    }

    private static int freePort() throws Exception {
        try (ServerSocket socket = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            return socket.getLocalPort();
        }
    }
}
