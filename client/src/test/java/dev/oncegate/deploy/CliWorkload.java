package dev.oncegate.deploy;

import static org.awaitility.Awaitility.await;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import dev.oncegate.testing.EmbeddedZooKeeper;
import dev.oncegate.testing.Scratch;

/**
 * The metrics of the CLI's own processes, for real: on a real ZooKeeper, one {@code oncegate run
 * --metrics-textfile} delivers a key, then an {@code oncegate exporter} is scraped once its first
 * scan completed, and stopped with SIGTERM. Both run as processes of their own from the test
 * classpath (the CLI's main class: the runnable jar does not exist yet when surefire runs). Kept
 * for the JVM, like {@link GateWorkload}: several test classes compare against them.
 */
final class CliWorkload {

    static final String NAMESPACE = "/oncegate-cli-metrics";
    private static final Duration PROCESS = Duration.ofSeconds(90);
    private static final Pattern METRICS_URL = Pattern.compile("\"metrics\":\"([^\"]+)\"");

    /** What the processes left: the textfile's text and the exporter's scrape. */
    private record Texts(String textfile, String exporter) {
    }

    private static Texts texts;

    private CliWorkload() {
    }

    /** The file {@code oncegate run --metrics-textfile} wrote. */
    static PrometheusText textfile() throws Exception {
        return PrometheusText.parse(texts().textfile());
    }

    /** A scrape of {@code oncegate exporter}'s {@code /metrics}. */
    static PrometheusText exporterScrape() throws Exception {
        return PrometheusText.parse(texts().exporter());
    }

    private static synchronized Texts texts() throws Exception {
        if (texts == null) {
            texts = run();
        }
        return texts;
    }

    private static Texts run() throws Exception {
        Path dir = Scratch.create("oncegate-cli-workload-");
        List<Process> started = new ArrayList<>();
        try (EmbeddedZooKeeper zk = EmbeddedZooKeeper.start()) {
            zk.initNamespace(NAMESPACE);
            Path content = Files.writeString(dir.resolve("report.txt"), "report " + UUID.randomUUID());
            Path textfile = dir.resolve("oncegate.prom");
            Process run = start(dir, started, "run", "--connect", zk.connectString(), "--namespace", NAMESPACE,
                    "--dest", "slack:C-METRICS", "--file", content.toString(), "--metrics-textfile", textfile.toString(),
                    "--", "true");
            if (!run.waitFor(PROCESS.toMillis(), TimeUnit.MILLISECONDS) || run.exitValue() != 0) {
                throw new IllegalStateException("oncegate run did not deliver: " + stderr(dir, "run"));
            }
            Process exporter = start(dir, started, "exporter", "--connect", zk.connectString(), "--namespace", NAMESPACE,
                    "--listen", "127.0.0.1:0", "--interval", "200ms");
            String url = await().atMost(PROCESS).until(() -> metricsUrl(dir, exporter), u -> u != null);
            String scrape = await().atMost(PROCESS).ignoreExceptions().until(() -> get(url),
                    body -> !body.contains("last_scan_success_timestamp_seconds{zk_namespace=\"" + NAMESPACE + "\"} 0.0")
                            && !body.contains("walk_last_success_timestamp_seconds{zk_namespace=\"" + NAMESPACE + "\"} 0.0"));
            exporter.destroy();
            if (!exporter.waitFor(PROCESS.toMillis(), TimeUnit.MILLISECONDS) || exporter.exitValue() != 0) {
                throw new IllegalStateException("oncegate exporter did not stop cleanly on SIGTERM: " + stderr(dir, "exporter"));
            }
            return new Texts(Files.readString(textfile, StandardCharsets.UTF_8), scrape);
        } finally {
            started.forEach(Process::destroyForcibly);
            Scratch.delete(dir);
        }
    }

    /** {@code oncegate ARGS…} as a process of its own, with this test's classpath and host state. */
    private static Process start(Path dir, List<Process> started, String... args) throws IOException {
        String classpath = System.getProperty("surefire.test.class.path", System.getProperty("java.class.path"));
        List<String> command = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC", "-cp", classpath, "dev.oncegate.cli.Main"));
        command.addAll(List.of(args));
        ProcessBuilder builder = new ProcessBuilder(command).directory(dir.toFile())
                .redirectOutput(dir.resolve(args[0] + ".out").toFile()).redirectError(dir.resolve(args[0] + ".err").toFile())
                .redirectInput(ProcessBuilder.Redirect.from(Path.of("/dev/null").toFile()));
        builder.environment().put("ONCEGATE_STATE_DIR", dir.resolve("state").toString());
        builder.environment().remove("ONCEGATE_METRICS_TEXTFILE");
        Process process = builder.start();
        started.add(process);
        return process;
    }

    private static String metricsUrl(Path dir, Process exporter) throws IOException {
        if (!exporter.isAlive()) {
            throw new IllegalStateException("oncegate exporter exited: " + stderr(dir, "exporter"));
        }
        Matcher m = METRICS_URL.matcher(Files.readString(dir.resolve("exporter.out")));
        return m.find() ? m.group(1) : null;
    }

    private static String stderr(Path dir, String command) throws IOException {
        Path err = dir.resolve(command + ".err");
        return Files.exists(err) ? Files.readString(err) : "(no stderr)";
    }

    private static String get(String url) throws IOException, InterruptedException {
        HttpResponse<String> response = HttpClient.newHttpClient().send(HttpRequest.newBuilder(URI.create(url)).build(),
                HttpResponse.BodyHandlers.ofString());
        if (response.statusCode() != 200) {
            throw new IOException(url + " answered " + response.statusCode());
        }
        return response.body();
    }
}
