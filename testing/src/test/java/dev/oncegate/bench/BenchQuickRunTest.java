package dev.oncegate.bench;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledIfSystemProperty;
import org.junit.jupiter.api.io.TempDir;

/**
 * The benchmark's {@code --quick} run, under {@code mvn -B verify -Plong} so that the harness cannot
 * rot (it guards no safety rule: its no-duplicate check repeats what the chaos runs check). It
 * runs {@link BenchMain} in a JVM of its own (its own logging, its own ZooKeeper metrics, its
 * own server on 127.0.0.1) and checks the report's shape: every arm ran every workload it takes
 * part in, for at least three trials; no effect executed twice; every ratio issue 9 tracks is
 * there. Figures are reported, never asserted against targets.
 */
@EnabledIfSystemProperty(named = "oncegate.long", matches = "true")
class BenchQuickRunTest {

    private static final long SEED = 20_250_901L;
    /** A safety net only: the quick run is bounded by its sizes (about half a minute on 2 cores). */
    private static final long TIMEOUT_SECONDS = 120;

    private static final Map<String, Set<String>> ARMS = Map.of(
            "new_keys_1", Set.of("raw", "raw_async64", "floor", "naive", "oncegate"),
            "new_keys_16", Set.of("raw", "raw_async64", "floor", "naive", "oncegate", "oncegate_shared"),
            "consumed_16", Set.of("raw", "naive", "oncegate"),
            "contended_16", Set.of("naive", "oncegate"),
            "contended_64", Set.of("naive", "oncegate"));

    private static final List<String> RATIOS = List.of(
            "oncegate_vs_naive_new_keys_16", "oncegate_vs_naive_consumed", "oncegate_vs_floor_new_keys_16",
            "oncegate_txns_per_effect", "oncegate_requests_per_effect", "oncegate_requests_per_consumed_stop",
            "oncegate_heap_bytes_per_consumed_key", "oncegate_znodes_per_consumed_key", "oncegate_vs_naive_contended_16",
            "oncegate_shared_vs_oncegate_new_keys_16");

    @TempDir
    Path dir;

    @Test
    void quickRun_everyArmRunsEveryWorkload_andNoEffectRunsTwice() throws Exception {
        Path report = dir.resolve("report.json");
        int exit = runQuick(report);

        assertThat(exit).as("exit status; stderr:%n%s", read(dir.resolve("stderr.txt"))).isZero();
        JsonNode r = new ObjectMapper().readTree(report.toFile());
        assertThat(r.path("seed").asLong()).isEqualTo(SEED);
        assertThat(r.path("passed").asBoolean()).isTrue();
        assertThat(r.path("duplicates").asLong()).isZero();
        assertThat(r.path("environment").path("fsync").asBoolean()).isTrue();

        Set<String> workloads = new TreeSet<>();
        for (JsonNode w : r.path("workloads")) {
            String workload = w.path("workload").asText();
            workloads.add(workload);
            Set<String> arms = new TreeSet<>();
            for (JsonNode a : w.path("arms")) {
                arms.add(a.path("arm").asText());
                assertThat(a.path("trials")).as("%s %s trials", workload, a.path("arm").asText()).hasSizeGreaterThanOrEqualTo(3);
                for (JsonNode t : a.path("trials")) {
                    assertThat(t.path("units").asLong()).as("%s %s units", workload, a.path("arm")).isPositive();
                    assertThat(t.path("verdicts").path("duplicates").asLong()).isZero();
                    JsonNode cost = t.path("per_unit");
                    assertThat(cost.path("operations").asDouble()).as("%s %s: a multi counts its operations", workload,
                            a.path("arm")).isGreaterThanOrEqualTo(cost.path("requests").asDouble());
                    assertThat(cost.path("server_cpu_micros").asDouble()).as("%s %s server CPU", workload, a.path("arm"))
                            .isPositive().isLessThanOrEqualTo(cost.path("process_cpu_micros").asDouble());
                }
                assertThat(a.path("summary").path("duplicates").asLong()).isZero();
            }
            assertThat(arms).as("arms of %s", workload).isEqualTo(ARMS.get(workload));
        }
        assertThat(workloads).isEqualTo(ARMS.keySet());

        List<String> memoryArms = new ArrayList<>();
        for (JsonNode m : r.path("memory")) {
            memoryArms.add(m.path("arm").asText());
            assertThat(m.path("keys").asLong()).isPositive();
            assertThat(m.path("duplicates").asLong()).isZero();
        }
        assertThat(memoryArms).containsExactlyInAnyOrder("oncegate", "naive");

        for (String ratio : RATIOS) {
            assertThat(r.path("ratios").path(ratio).isNumber()).as("ratio %s in %s", ratio, r.path("ratios")).isTrue();
        }
        assertThat(read(dir.resolve("stdout.md"))).contains("| workload | arm |", "oncegate_vs_naive_new_keys_16");
    }

    @Test
    void quickBacklogPhase_asksTheBacklogQuestionsAtBothSizes_andFindsTheSameBacklog() throws Exception {
        Path report = dir.resolve("report.json");
        int exit = runQuick(report, "--backlog-only");

        assertThat(exit).as("exit status; stderr:%n%s", read(dir.resolve("stderr.txt"))).isZero();
        JsonNode r = new ObjectMapper().readTree(report.toFile());
        JsonNode sizes = r.path("backlog").path("sizes");
        assertThat(sizes).hasSize(2);
        assertThat(sizes.get(0).path("consumed_keys").asInt()).isLessThan(sizes.get(1).path("consumed_keys").asInt());
        for (JsonNode size : sizes) {
            // 3 armed and 3 unknown (and the damaged key, which matches every query); 10 in the whole backlog
            assertThat(size.path("query_listed").asInt()).as("%s", size).isEqualTo(7);
            assertThat(size.path("scan_listed").asInt()).as("%s", size).isEqualTo(10);
            assertThat(size.path("index_missing").asInt()).as("%s", size).isZero();
            assertThat(size.path("walk_keys_per_second").asDouble()).isPositive();
        }
        for (String ratio : List.of("backlog_query_100k_vs_1k", "exporter_scan_100k_vs_1k")) {
            assertThat(r.path("ratios").path(ratio).isNumber()).as("ratio %s in %s", ratio, r.path("ratios")).isTrue();
        }
    }

    /** Runs {@code BenchMain --quick} in its own JVM; never leaves it behind. */
    private int runQuick(Path report, String... more) throws IOException, InterruptedException {
        System.out.println("bench quick run with --seed " + SEED);
        ProcessBuilder pb = new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-cp", System.getProperty("java.class.path"),
                "-Djava.net.preferIPv4Stack=true",
                // the test classpath's simplelogger.properties puts oncegate at INFO: one line per decision
                "-Dorg.slf4j.simpleLogger.log.dev.oncegate=warn",
                BenchMain.class.getName(), "--quick", "--out", report.toString(), "--seed", Long.toString(SEED));
        pb.command().addAll(List.of(more));
        pb.redirectOutput(dir.resolve("stdout.md").toFile());
        pb.redirectError(dir.resolve("stderr.txt").toFile());
        Process process = pb.start();
        try {
            if (!process.waitFor(TIMEOUT_SECONDS, TimeUnit.SECONDS)) {
                throw new AssertionError("the quick run did not end within " + TIMEOUT_SECONDS + " s; stderr:\n"
                        + read(dir.resolve("stderr.txt")));
            }
            return process.exitValue();
        } finally {
            process.descendants().forEach(ProcessHandle::destroyForcibly);
            process.destroyForcibly();
            process.waitFor(10, TimeUnit.SECONDS);
        }
    }

    private static String read(Path file) throws IOException {
        return Files.exists(file) ? Files.readString(file, StandardCharsets.UTF_8) : "(none)";
    }
}
