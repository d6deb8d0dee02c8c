package dev.oncegate.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.io.IOException;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.stream.Stream;

import com.fasterxml.jackson.databind.JsonNode;
import dev.oncegate.testing.Timing;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code oncegate demo} as a user runs it: its verdict, its JSON, its metrics, its cleanup, its
 * signal. (Its refusals of impossible options are {@link BadInputTest}'s.)
 */
class DemoIT {

    @TempDir
    Path dir;

    @AfterEach
    void killLeftovers() {
        Cli.destroyAll();
    }

    /** A CLI whose JVM puts its temporary files in {@code dir/tmp}, so leftovers can be seen. */
    private Cli cli(Path tmp) {
        return new Cli(dir, Map.of("JAVA_TOOL_OPTIONS", "-Djava.io.tmpdir=" + tmp));
    }

    @Test
    void shortRunUnderFaults_exitsZero_printsTheJsonVerdict_servesMetrics_leavesNothingBehind() throws Exception {
        Path tmp = Files.createDirectories(dir.resolve("tmp"));
        int port = freePort();
        Cli.Running running = cli(tmp).start("demo", "--workers", "3", "--effects", "8", "--contenders", "3",
                "--duration", "8s", "--fault-rate", "1", "--seed", "42", "--metrics-port", Integer.toString(port), "--json",
                "--namespace", "/demo-fleet");

        // Each worker's gate registers its meters as the run starts: wait for a complete set, not the first meter.
        String metrics = await().atMost(Timing.APPEAR).ignoreExceptions().until(() -> scrape(port),
                body -> body.contains("oncegate_decisions_total") && body.contains("oncegate_zookeeper_connection"));
        Cli.Result result = running.await(Timing.PROCESS);

        assertThat(result.exit()).as(result.toString()).isZero();
        JsonNode json = result.stdoutJson();
        assertThat(json.get("seed").asLong()).isEqualTo(42);
        assertThat(json.get("effects").asInt()).isEqualTo(8);
        assertThat(json.get("duplicates").asInt()).isZero();
        assertThat(json.get("undecided").asInt()).isZero();
        assertThat(json.get("deliveries").asInt()).isBetween(1, 8);
        assertThat(json.get("outcomes").fieldNames()).toIterable().isNotEmpty();
        assertThat(json.get("faults").has("session_expiry_server")).isTrue();
        assertThat(json.get("violations")).isEmpty();
        assertThat(json.get("namespace").asText()).as("--namespace is the one the fleet worked in").isEqualTo("/demo-fleet");
        assertThat(metrics).as("the gates' meters are tagged with it").contains("zk_namespace=\"/demo-fleet\"");
        assertThat(metrics).contains("oncegate_zookeeper_connection").doesNotContain(json.get("seed").asText() + "\"");
        assertThat(listing(tmp)).as("temporary files left behind").isEmpty();
    }

    @Test
    void tableOutput_endsWithTheVerdict() {
        Cli.Result result = cli(dir).run("demo", "--workers", "2", "--effects", "3", "--contenders", "2",
                "--duration", "2s", "--fault-rate", "0");

        assertThat(result.exit()).as(result.toString()).isZero();
        assertThat(result.stdout()).contains("deliveries", "duplicates", "outcomes", "faults injected",
                "fenced writes", "fail-closed stops", "lease takeovers", "elapsed", "OK: every effect decided");
    }

    @Test
    void sigtermMidRun_stopsEverything_andRemovesItsData() throws Exception {
        Path tmp = Files.createDirectories(dir.resolve("tmp"));
        Cli.Running running = cli(tmp).start("demo", "--duration", "60s");
        await().atMost(Timing.APPEAR).until(() -> running.stderr().contains("oncegate demo: seed"));
        await().atMost(Timing.APPEAR).until(() -> !listing(tmp).isEmpty()); // the servers are up

        running.process().destroy(); // SIGTERM
        Cli.Result result = running.await(Timing.PROCESS);

        assertThat(result.exit()).as(result.toString()).isNotZero();
        assertThat(running.process().descendants().count()).isZero();
        assertThat(listing(tmp)).as("temporary files left behind").isEmpty();
    }

    private static String scrape(int port) throws IOException, InterruptedException {
        HttpResponse<String> response = HttpClient.newHttpClient().send(
                HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/metrics")).build(),
                HttpResponse.BodyHandlers.ofString());
        return response.statusCode() == 200 ? response.body() : "";
    }

    private static int freePort() throws IOException {
        try (ServerSocket socket = new ServerSocket(0, 1, java.net.InetAddress.getByName("127.0.0.1"))) {
            return socket.getLocalPort();
        }
    }

    private static java.util.List<Path> listing(Path tmp) throws IOException {
        try (Stream<Path> files = Files.list(tmp)) {
            return files.filter(p -> !p.getFileName().toString().startsWith("hsperfdata")).toList();
        }
    }
}
