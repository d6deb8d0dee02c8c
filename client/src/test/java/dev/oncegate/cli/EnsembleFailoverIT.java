package dev.oncegate.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import java.util.stream.Collectors;

import com.fasterxml.jackson.databind.JsonNode;
import dev.oncegate.testing.Timing;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * deploy/ensemble.sh's three ZooKeeper processes (deploy/zookeeper/zoo*.cfg, as shipped but for a
 * port offset), fleets of {@code oncegate run} processes racing over a few effects, and the
 * leader killed with SIGKILL while they cross, then restarted. Every gated command appends to a
 * ledger; afterwards no effect was delivered twice and no key is stuck: one more run per effect
 * decides, and {@code oncegate inspect} shows every key consumed. A run whose arming write had its
 * reply lost in the failover (exit 13, {@code write_result_unknown}) leaves its key armed, as SPEC §9
 * says: that counts as armed and its command never ran, so the key reads unknown for good.
 */
class EnsembleFailoverIT {

    static final String LEDGER_LINE = "echo \"$ONCEGATE_KEY $ONCEGATE_SCOPE $ONCEGATE_FENCING_TOKEN\" >> ledger; sleep 2";

    @TempDir
    Path dir;

    private Map<String, String> ensembleEnv;
    private Path script;

    @AfterEach
    void stopEverything() throws Exception {
        Cli.destroyAll();
        if (script != null) {
            ensemble("stop");
            // Belt and braces: a server the script lost track of must not outlive the test.
            for (int n = 1; n <= 3; n++) {
                Path pid = dir.resolve("ensemble/zk" + n + "/pid");
                if (Files.exists(pid)) {
                    ProcessHandle.of(Long.parseLong(Files.readString(pid).strip())).ifPresent(ProcessHandle::destroyForcibly);
                }
            }
        }
    }

    @Test
    void leaderKilledWhileFleetsCross_noDuplicateDelivery_noStuckKey() throws Exception {
        // Given the shipped three-server ensemble on loopback, with ZooKeeper's own jars
        int offset = freePortOffset();
        ensembleEnv = Map.of("ONCEGATE_ENSEMBLE_DIR", dir.resolve("ensemble").toString(),
                "ONCEGATE_ENSEMBLE_PORT_OFFSET", Integer.toString(offset),
                "ZOOKEEPER_CLASSPATH", Files.readString(Path.of(System.getProperty("oncegate.zookeeper.classpath"))).strip());
        script = Path.of(System.getProperty("user.dir")).getParent().resolve("deploy/ensemble.sh");
        Cli.Result start = ensemble("start");
        assertThat(start.exit()).as(start.toString()).isZero();
        log("ensemble started at port offset " + offset);
        String connect = ensemble("connect").stdout().strip();
        Cli cli = new Cli(dir, Map.of("ONCEGATE_CONNECT", connect));
        assertThat(cli.run("init").exit()).isZero();
        // and the shipped metrics provider serving on its own port
        assertThat(httpGet("http://127.0.0.1:" + (7001 + offset) + "/metrics")).contains("quorum_size");

        // and three effects, each wanted by two sibling runs
        List<Path> files = new ArrayList<>();
        List<String> dests = new ArrayList<>();
        for (int e = 0; e < 3; e++) {
            Path file = dir.resolve("report-" + e + ".txt");
            Files.writeString(file, "report " + e + " " + UUID.randomUUID() + "\n");
            files.add(file);
            dests.add("slack:C" + e + UUID.randomUUID().toString().substring(0, 6).toUpperCase());
        }
        Function<Integer, String[]> runArgs = e -> new String[] {"run", "--dest", dests.get(e), "--file",
                files.get(e).toString(), "--task-id", "task-" + e + "-" + UUID.randomUUID(), "--wait", "60s",
                "--connect-timeout", "30s", "--", "sh", "-c", LEDGER_LINE};
        List<Cli.Running> runs = new ArrayList<>();
        for (int e = 0; e < 3; e++) {
            for (int c = 0; c < 2; c++) {
                runs.add(cli.start(runArgs.apply(e)));
            }
        }

        // When the leader is killed with SIGKILL while an executor is crossing
        Path ledger = dir.resolve("ledger");
        await().atMost(Timing.APPEAR).until(() -> Files.exists(ledger) && !Files.readString(ledger).isBlank());
        String leader = ensemble("leader").stdout().strip();
        String pid = Files.readString(dir.resolve("ensemble/zk" + leader + "/pid")).strip();
        log("first delivery seen; kill -9 leader " + leader + " (pid " + pid + ")");
        assertThat(new ProcessBuilder("kill", "-9", pid).start().waitFor()).isZero();
        await().atMost(Timing.APPEAR).until(() -> {
            Cli.Result now = ensemble("leader");
            return now.exit() == 0 && !now.stdout().strip().equals(leader);
        });
        // and a task resumed for each effect during the failover
        for (int e = 0; e < 3; e++) {
            runs.add(cli.start(runArgs.apply(e)));
        }
        log("new leader elected");
        // and the killed server restarted
        Cli.Result restart = ensemble("start", leader);
        assertThat(restart.exit()).as(restart.toString()).isZero();
        log("server " + leader + " restarted");
        Map<Integer, Integer> exits = new HashMap<>();
        // the keys whose arming write had its reply lost in the failover (SPEC §9): they count as armed, for good
        Set<String> armingReplyLost = new HashSet<>();
        for (Cli.Running run : runs) {
            Cli.Result result = run.await(Timing.PROCESS);
            exits.merge(result.exit(), 1, Integer::sum);
            assertThat(result.exit()).as(result.toString()).isIn(ExitCode.OK, 1, 10, 11, 12, 13);
            if (result.exit() == 13 && result.runJson().path("reason").asText().equals("write_result_unknown")) {
                log("arming reply lost: " + result.runJson());
                armingReplyLost.add(result.runJson().path("key").asText());
            }
        }

        // Then one more run per effect decides at once: the effect is consumed, or delivered now
        log("fleet done, exits " + exits);
        List<Cli.Running> finals = new ArrayList<>();
        for (int e = 0; e < 3; e++) {
            finals.add(cli.start(runArgs.apply(e)));
        }
        List<String> keys = new ArrayList<>();
        for (Cli.Running run : finals) {
            Cli.Result again = run.await(Timing.PROCESS);
            assertThat(again.exit()).as(again.toString()).isIn(ExitCode.OK, 10, 11);
            keys.add(again.runJson().path("key").asText());
        }
        log("final runs done");
        // and no key was delivered twice
        Map<String, Long> deliveries = Files.readAllLines(ledger).stream().filter(l -> !l.isBlank())
                .collect(Collectors.groupingBy(l -> l.split(" ")[0], LinkedHashMap::new, Collectors.counting()));
        assertThat(deliveries).as("deliveries per key; run exits " + exits).allSatisfy((k, n) -> assertThat(n).isEqualTo(1));
        assertThat(deliveries.keySet()).isSubsetOf(Set.copyOf(keys));
        // and inspect shows every key consumed, none leased or open, and none armed without an outcome but
        // where a run's arming write had its reply lost (exit 13, write_result_unknown): that counts as armed
        // and its command never ran (SPEC §9), so the key reads unknown for good, with nothing delivered
        for (String key : keys) {
            JsonNode inspect = cli.run("inspect", "--key", key).stdoutJson();
            boolean replyLost = armingReplyLost.contains(key);
            assertThat(inspect.path("state").asText()).as(inspect.toString())
                    .isIn(replyLost ? List.of("sent_verified", "send_status_unknown", "armed")
                            : List.of("sent_verified", "send_status_unknown"));
            if (inspect.path("state").asText().equals("sent_verified")) {
                assertThat(deliveries).containsEntry(key, 1L);
            }
            if (inspect.path("state").asText().equals("armed")) {
                assertThat(deliveries).as("a key armed by a lost reply: its command never ran").doesNotContainKey(key);
            }
            for (JsonNode scope : inspect.path("scopes")) {
                assertThat(scope.path("state").asText()).as(inspect.toString())
                        .isNotIn(replyLost ? List.of("leased", "open") : List.of("leased", "armed", "open"));
            }
        }
        assertThat(deliveries).isNotEmpty();
        // and the restarted server is back in the ensemble
        assertThat(ensemble("status").stdout()).doesNotContain("down");
    }

    private final long started = System.nanoTime();

    private void log(String what) {
        System.err.printf("EnsembleFailoverIT %5.1f s: %s%n", (System.nanoTime() - started) / 1e9, what);
    }

    private Cli.Result ensemble(String... args) throws IOException, InterruptedException {
        List<String> command = new ArrayList<>(List.of("bash", script.toString()));
        command.addAll(List.of(args));
        Path out = Files.createTempFile(dir, "ensemble-", ".out");
        Path err = Files.createTempFile(dir, "ensemble-", ".err");
        ProcessBuilder builder = new ProcessBuilder(command).redirectOutput(out.toFile()).redirectError(err.toFile());
        builder.environment().putAll(ensembleEnv);
        Process process = builder.start();
        if (!process.waitFor(Timing.PROCESS.toSeconds(), TimeUnit.SECONDS)) {
            process.destroyForcibly();
            throw new AssertionError("ensemble.sh " + String.join(" ", args) + " did not finish");
        }
        Cli.Result result = new Cli.Result(process.exitValue(), Cli.read(out), Cli.read(err), "ensemble.sh " + String.join(" ", args));
        if (args[0].equals("start") && result.exit() != 0) {
            for (int n = 1; n <= 3; n++) {
                Path log = dir.resolve("ensemble/zk" + n + "/server.log");
                if (Files.exists(log)) {
                    System.err.println("---- server " + n + " log ----\n" + Files.readString(log));
                }
            }
        }
        return result;
    }

    /** An offset at which every port of the shipped configs is free on 127.0.0.1. */
    static int freePortOffset() {
        int[] shipped = {2181, 2182, 2183, 2888, 2889, 2890, 3888, 3889, 3890, 7001, 7002, 7003};
        for (int attempt = 0; attempt < 50; attempt++) {
            // ensemble.sh takes multiples of 5000 only: two of them never share a port
            int offset = 20_000 + ThreadLocalRandom.current().nextInt(8) * 5_000;
            boolean free = true;
            for (int port : shipped) {
                try (ServerSocket socket = new ServerSocket(port + offset, 1, InetAddress.getLoopbackAddress())) {
                    socket.setReuseAddress(true);
                } catch (IOException taken) {
                    free = false;
                    break;
                }
            }
            if (free) {
                return offset;
            }
        }
        throw new IllegalStateException("no free port offset for the ensemble");
    }

    static String httpGet(String url) throws IOException, InterruptedException {
        HttpResponse<String> response = HttpClient.newHttpClient().send(
                HttpRequest.newBuilder(URI.create(url)).timeout(Duration.ofSeconds(10)).build(),
                HttpResponse.BodyHandlers.ofString(StandardCharsets.UTF_8));
        return response.body();
    }
}
