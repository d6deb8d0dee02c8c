package dev.oncegate.cli;

import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;

import com.fasterxml.jackson.databind.JsonNode;
import dev.oncegate.testing.Scratch;
import dev.oncegate.testing.Timing;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * {@code oncegate server} runs a real ZooKeeper whose data survives a restart: a key consumed
 * before the restart is still consumed after it, and the namespace is initialised only once. Its
 * data lives in one fixed place whatever the working directory, an empty data directory is never
 * taken for a fresh start where this host saw the namespace before, and a history rolled back to
 * an older copy stops the runs of a host that saw the later one.
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

    @Test
    void defaultDataDir_isTheStateDirectory_whateverTheWorkingDirectory() throws Exception {
        int port = freePort();
        Path state = dir.resolve("host-state");
        Cli fromA = new Cli(Files.createDirectories(dir.resolve("a")), Map.of("ONCEGATE_STATE_DIR", state.toString()));
        Cli fromB = new Cli(Files.createDirectories(dir.resolve("b")), Map.of("ONCEGATE_STATE_DIR", state.toString()));

        Cli.Running first = fromA.start("server", "--port", Integer.toString(port));
        JsonNode started = startLine(first);
        assertThat(started.get("data_dir").asText()).isEqualTo(state.resolve("zookeeper").toString());
        assertThat(started.get("initialized").asBoolean()).isTrue();
        assertThat(run(fromA, port).exit()).isEqualTo(0);
        first.process().destroy();
        assertThat(first.await(Timing.PROCESS).exit()).isEqualTo(0);

        // started again from another directory: the same data, the same history
        Cli.Running second = fromB.start("server", "--port", Integer.toString(port));
        JsonNode restarted = startLine(second);
        assertThat(restarted.get("data_dir").asText()).isEqualTo(state.resolve("zookeeper").toString());
        assertThat(restarted.get("initialized").asBoolean()).isFalse();
        assertThat(run(fromB, port).exit()).as("delivered before the restart").isEqualTo(10);
        assertThat(dir.resolve("a/oncegate-data")).doesNotExist();
        assertThat(dir.resolve("b/oncegate-data")).doesNotExist();
    }

    @Test
    void emptyDataDirWhereThisHostSawTheNamespace_isNotInitialised_untilAnOperatorSaysSo() throws Exception {
        // Given a server that initialised its namespace, and a delivery through it
        int port = deliveredOnceAndStopped();

        // When a server starts at the same address on an empty data directory (moved, lost, mistyped)
        Cli.Running second = startServer(port, dir.resolve("zk-data-elsewhere"));
        JsonNode started = startLine(second);

        // Then it serves but does not initialise: workers fail closed instead of delivering again
        assertThat(started.get("initialized").asBoolean()).isFalse();
        assertThat(started.get("init_refused").asText()).contains("saw namespace /oncegate", "oncegate init");
        assertThat(second.stderr()).contains("not initialising");
        Cli.Result stopped = run(port);
        assertThat(stopped.exit()).as(stopped.toString()).isEqualTo(13);
        assertThat(stopped.runJson().get("reason").asText()).isEqualTo("namespace_not_initialised");
        assertThat(Files.readAllLines(dir.resolve("ledger"))).hasSize(1);

        // and an explicit `oncegate init` is the operator's acknowledgement of a fresh start
        Cli.Result init = cli.run("init", "--connect", "127.0.0.1:" + port);
        assertThat(init.exit()).as(init.toString()).isEqualTo(0);
        assertThat(run(port).exit()).isEqualTo(0);
    }

    @Test
    void emptyDataDirWhereThisHostSawTheNamespace_atAnotherAddress_isNotInitialised_either() throws Exception {
        // Given a server that initialised its namespace, and a delivery through it
        int port = deliveredOnceAndStopped();

        // When a server starts on an empty data directory at another port (--port 0, a changed --port or --bind)
        int other = freePort();
        while (other == port) {
            other = freePort();
        }
        Cli.Running second = startServer(other, dir.resolve("zk-data-elsewhere"));
        JsonNode started = startLine(second);

        // Then it does not initialise either (SPEC §7: this host has seen that namespace's genesis before), naming
        // where it saw it; the delivery is not made again
        assertThat(started.get("initialized").asBoolean()).isFalse();
        assertThat(started.get("init_refused").asText()).contains("saw namespace /oncegate", "127.0.0.1:" + port,
                "oncegate init");
        Cli.Result stopped = run(other);
        assertThat(stopped.exit()).as(stopped.toString()).isEqualTo(13);
        assertThat(stopped.runJson().get("reason").asText()).isEqualTo("namespace_not_initialised");
        assertThat(Files.readAllLines(dir.resolve("ledger"))).hasSize(1);
    }

    @Test
    void emptyDataDirWhereThisHostsMarksCannotBeRead_isNotInitialised() throws Exception {
        // Given a host whose marks file cannot be read: it cannot tell whether it saw the namespace here
        Path marks = Files.createDirectories(dir.resolve("state")).resolve("zxid-marks.json");
        Files.writeString(marks, "{\"v\":1,\"marks\":");

        // When a server starts on an empty data directory
        Cli.Running server = startServer(freePort(), dir.resolve("zk-data"));
        JsonNode started = startLine(server);

        // Then it does not initialise (that might be a lost history), says why, and leaves the file alone
        assertThat(started.get("initialized").asBoolean()).isFalse();
        assertThat(started.get("init_refused").asText()).contains("marks file unreadable: " + marks, "oncegate init");
        assertThat(marks).hasContent("{\"v\":1,\"marks\":");
    }

    @Test
    void historyRestoredFromAnOlderCopy_stopsTheRunsOfAHostThatSawTheLaterOne() throws Exception {
        // Given a copy of the server's data taken before this host delivered the effect (and others)
        int port = freePort();
        Path data = dir.resolve("zk-data");
        Cli.Running server = startServer(port, data);
        startLine(server);
        server.process().destroy();
        server.await(Timing.PROCESS);
        Path backup = dir.resolve("zk-backup");
        Scratch.copyTree(data, backup);
        server = startServer(port, data);
        startLine(server);
        assertThat(run(port).exit()).isEqualTo(0);
        for (int i = 0; i < 3; i++) {
            Path other = Files.writeString(dir.resolve("other-" + i + ".txt"), "another report " + i);
            assertThat(run(port, other).exit()).isEqualTo(0);
        }
        server.process().destroy();
        server.await(Timing.PROCESS);

        // When the data is restored from that copy (same genesis, the delivery forgotten)
        deleteTree(data);
        Scratch.copyTree(backup, data);
        server = startServer(port, data);
        startLine(server);

        // Then this host's next run stops before arming, and nothing is delivered again
        Cli.Result again = run(port);
        assertThat(again.exit()).as(again.toString()).isEqualTo(13);
        assertThat(again.runJson().get("reason").asText()).isEqualTo("zookeeper_rolled_back");
        assertThat(Files.readAllLines(dir.resolve("ledger"))).hasSize(4);
    }

    /** A server on a free port that initialised its namespace, one delivery through it, the server stopped: its port. */
    private int deliveredOnceAndStopped() throws Exception {
        int port = freePort();
        Cli.Running first = startServer(port, dir.resolve("zk-data"));
        assertThat(startLine(first).get("initialized").asBoolean()).isTrue();
        assertThat(run(port).exit()).isEqualTo(0);
        first.process().destroy();
        first.await(Timing.PROCESS);
        return port;
    }

    private Cli.Running startServer(int port, Path data) {
        return cli.start("server", "--port", Integer.toString(port), "--data-dir", data.toString(), "--bind", "127.0.0.1");
    }

    private static void deleteTree(Path root) throws java.io.IOException {
        try (java.util.stream.Stream<Path> files = Files.walk(root)) {
            for (Path p : (Iterable<Path>) files.sorted(java.util.Comparator.reverseOrder())::iterator) {
                Files.delete(p);
            }
        }
    }

    /** The server's start line, once it printed it (fails when the server exits first). */
    static JsonNode startLine(Cli.Running server) throws Exception {
        await().atMost(Timing.APPEAR).until(() -> server.stdout().contains("\"server\":\"started\"")
                || !server.process().isAlive());
        assertThat(server.process().isAlive()).as("server exited early: " + server.stderr()).isTrue();
        List<String> lines = server.stdout().lines().toList();
        return Cli.JSON.readTree(lines.get(lines.size() - 1));
    }

    private Cli.Result run(int port) {
        return run(cli, port);
    }

    private Cli.Result run(int port, Path file) {
        return run(cli, port, file);
    }

    private Cli.Result run(Cli in, int port) {
        return run(in, port, content);
    }

    private Cli.Result run(Cli in, int port, Path file) {
        return in.run("run", "--connect", "127.0.0.1:" + port, "--dest", "slack:C024BE91L", "--file", file.toString(),
                "--", "sh", "-c", "echo \"$ONCEGATE_KEY $ONCEGATE_SCOPE\" >> " + dir.resolve("ledger"));
    }

    static int freePort() throws Exception {
        try (ServerSocket socket = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            return socket.getLocalPort();
        }
    }
}
