package dev.oncegate.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.io.IOException;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.sun.net.httpserver.HttpServer;
import dev.oncegate.Attempt;
import dev.oncegate.Crossing;
import dev.oncegate.Decision;
import dev.oncegate.Destination;
import dev.oncegate.EffectKey;
import dev.oncegate.OncegateMeters;
import dev.oncegate.deploy.RepoFiles;
import dev.oncegate.deploy.Tools;
import dev.oncegate.testing.CrossingInFlight;
import dev.oncegate.testing.EmbeddedZooKeeper;
import dev.oncegate.testing.RecordingProvider;
import dev.oncegate.testing.Timing;
import dev.oncegate.testing.Worker;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import org.apache.curator.framework.CuratorFramework;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The alert rules and the dashboard against a real Prometheus (Debian's {@code prometheus}) that
 * scrapes a JVM worker (this JVM's gates, on a Prometheus registry set up as the README says),
 * node_exporter's textfile collector (Debian's {@code prometheus-node-exporter}) serving the
 * textfile of {@code oncegate run --metrics-textfile}, and {@code oncegate exporter}s. Each alert's
 * situation is made for real; the rules are test-only copies of deploy/prometheus/oncegate-alerts.yml
 * with every window, {@code offset}, {@code for:} and seconds threshold multiplied by {@link #SCALE}
 * (1 h becomes 30 s), scraped and evaluated every 500 ms. Each alert must reach {@code firing} in
 * {@code /api/v1/rules}, and every dashboard expression must return data: for the JVM fleet each
 * one, for the shell-only fleet each panel but those whose description says they are for JVM
 * workers only (gauges of live processes). Everything binds 127.0.0.1, on free ports.
 */
class PrometheusAlertsIT {

    /** Production durations × SCALE: 1 h → 30 s, 15 m → 7.5 s, 5 m → 2.5 s. */
    static final double SCALE = 1.0 / 120;
    /** The scrape and evaluation interval. */
    static final Duration STEP = Duration.ofMillis(500);
    static final ObjectMapper JSON = new ObjectMapper();
    static final Pattern DURATION = Pattern.compile("(\\d+)([smhd])");
    static final String JVM_ONLY = "JVM workers only";

    /** The JVM fleet's namespaces and the shell fleet's. */
    static final List<String> JVM_FLEET = List.of("/jvm", "/idle", "/lost", "/exported");
    static final List<String> SHELL_FLEET = List.of("/shell", "/fresh", "/lostshell");

    @TempDir
    Path dir;

    private final List<Process> processes = new CopyOnWriteArrayList<>();
    private final List<AutoCloseable> closeables = new CopyOnWriteArrayList<>();
    private final HttpClient http = HttpClient.newHttpClient();

    @AfterEach
    void stopEverything() {
        Cli.destroyAll();
        for (Process p : processes) {
            p.destroyForcibly();
        }
        for (int i = closeables.size() - 1; i >= 0; i--) {
            try {
                closeables.get(i).close();
            } catch (Exception e) {
                System.err.println("closing " + closeables.get(i) + ": " + e);
            }
        }
    }

    @Test
    void everyAlert_firesOnItsSituation_andEveryDashboardExpressionReturnsData() throws Exception {
        Path prometheusBinary = Tools.require("prometheus", "apt-get install -y prometheus");
        Path nodeExporterBinary = Tools.require("prometheus-node-exporter", "apt-get install -y prometheus-node-exporter");

        // Given two ZooKeepers (the second one is lost later), the fleets' namespaces, and /fresh never initialised
        EmbeddedZooKeeper zk = closing(EmbeddedZooKeeper.start());
        EmbeddedZooKeeper zk2 = closing(EmbeddedZooKeeper.start());
        for (String ns : List.of("/jvm", "/idle", "/shell", "/exported")) {
            zk.initNamespace(ns);
        }
        zk2.initNamespace("/lost");
        zk2.initNamespace("/lostshell");
        CuratorFramework curator = closing(zk.newClient());

        // and a JVM worker: gates on a registry set up as the README says, served over HTTP
        PrometheusMeterRegistry registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
        registry.config().meterFilter(OncegateMeters.percentileHistograms());
        closeables.add(registry::close);
        HttpServer worker = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0);
        worker.createContext("/metrics", exchange -> {
            byte[] body = registry.scrape().getBytes(StandardCharsets.UTF_8);
            exchange.getResponseHeaders().set("Content-Type", "text/plain; version=0.0.4; charset=utf-8");
            exchange.sendResponseHeaders(200, body.length);
            try (OutputStream out = exchange.getResponseBody()) {
                out.write(body);
            }
        });
        worker.start();
        closeables.add(() -> worker.stop(0));
        Worker a = closing(Worker.start(zk.connectString(), "/jvm", "jvm-a", Timing.SESSION, b -> b.meterRegistry(registry)));
        Worker b = closing(Worker.start(zk.connectString(), "/jvm", "jvm-b", Timing.SESSION, g -> g.meterRegistry(registry)));
        Worker hung = closing(Worker.start(zk.connectString(), "/jvm", "jvm-hung", Timing.SESSION,
                g -> g.meterRegistry(registry).leaseTtl(Timing.SHORT_LEASE)));
        closing(Worker.start(zk.connectString(), "/idle", "jvm-idle", Timing.SESSION, g -> g.meterRegistry(registry)));
        closing(Worker.start(zk2.connectString(), "/lost", "jvm-lost", Timing.SESSION, g -> g.meterRegistry(registry)));

        // and an exporter per fleet namespace, one on the ZooKeeper that will be lost
        Cli cli = new Cli(dir, Map.of());
        Cli.Running exporterJvmProcess = exporter(cli, zk, "/exported"); // a namespace only an exporter sees
        Cli.Running exporterShellProcess = exporter(cli, zk, "/shell");
        Cli.Running lostExporter = exporter(cli, zk2, "/lost");
        String exporterJvm = metricsUrl(exporterJvmProcess);
        String exporterShell = metricsUrl(exporterShellProcess);
        String exporterLost = metricsUrl(lostExporter);

        // and node_exporter's textfile collector on the shell fleet's textfile
        Path textDir = Files.createDirectories(dir.resolve("textfile"));
        Path textfile = textDir.resolve("oncegate.prom");
        int nodePort = freePort();
        process("node-exporter", List.of(nodeExporterBinary.toString(), "--web.listen-address=127.0.0.1:" + nodePort,
                "--collector.disable-defaults", "--collector.textfile", "--collector.textfile.directory=" + textDir));

        // and Prometheus with the test copies of the rules
        int prometheusPort = freePort();
        Files.writeString(dir.resolve("rules.yml"), shortened(RepoFiles.read("deploy/prometheus/oncegate-alerts.yml")));
        Files.writeString(dir.resolve("prometheus.yml"), String.join("\n",
                "global:", "  scrape_interval: " + step(), "  scrape_timeout: " + step(), "  evaluation_interval: " + step(),
                "rule_files: [rules.yml]",
                "scrape_configs:",
                "  - job_name: oncegate-worker",
                "    static_configs: [{targets: ['127.0.0.1:" + worker.getAddress().getPort() + "']}]",
                "  - job_name: oncegate-exporter",
                "    static_configs: [{targets: ['" + hostPort(exporterJvm) + "', '" + hostPort(exporterShell) + "', '"
                        + hostPort(exporterLost) + "']}]",
                "  - job_name: node",
                "    static_configs: [{targets: ['127.0.0.1:" + nodePort + "']}]", ""));
        String prometheus = "http://127.0.0.1:" + prometheusPort;
        process("prometheus", List.of(prometheusBinary.toString(), "--config.file=" + dir.resolve("prometheus.yml"),
                "--storage.tsdb.path=" + dir.resolve("tsdb"), "--web.listen-address=127.0.0.1:" + prometheusPort));
        await().atMost(Timing.APPEAR).ignoreExceptions().pollInterval(Duration.ofMillis(250))
                .until(() -> query(prometheus, "count(up == 1)").path(0).path("value").path(1).asInt() == 5);
        // every series seen at its starting value (the gates' at zero, the exporters' first scans)
        awaitScrapes(prometheus, 4);

        // (every alert seen firing, polled from now on: an event's alert fires for its window only)
        Map<String, Set<String>> seenFiring = new java.util.concurrent.ConcurrentHashMap<>();
        java.util.concurrent.ScheduledExecutorService poller = java.util.concurrent.Executors.newSingleThreadScheduledExecutor();
        closeables.add(poller::shutdownNow);
        poller.scheduleWithFixedDelay(() -> {
            try {
                firing(prometheus).forEach((alert, namespaces) ->
                        seenFiring.computeIfAbsent(alert, n -> java.util.concurrent.ConcurrentHashMap.newKeySet()).addAll(namespaces));
            } catch (Exception e) {
                System.err.println("PrometheusAlertsIT: /api/v1/rules: " + e);
            }
        }, 0, 100, TimeUnit.MILLISECONDS);

        // When each alert's situation happens for real
        Instant started = Instant.now();
        log("Prometheus scrapes every target; the situations begin");
        RecordingProvider provider = new RecordingProvider();
        // JVM fleet: a delivery, a stop on it, an unconfirmed delivery (send_status_unknown)
        EffectKey delivered = key();
        cross(a, delivered, provider.verified());
        try (Attempt stop = b.gate().enter(delivered, Duration.ZERO)) {
            assertThat(stop.decision()).isInstanceOf(Decision.StopSent.class);
        }
        cross(a, key(), provider.unconfirmed());
        // a hung executor fenced: its lease lapses, another takes over, its crossing is refused
        EffectKey contested = key();
        Attempt hungAttempt = closing(hung.gate().enter(contested, Duration.ZERO));
        assertThat(hungAttempt.decision().proceeds()).isTrue();
        CompletableFuture<Attempt> takeover = CompletableFuture.supplyAsync(() -> {
            try {
                return b.gate().enter(contested, Timing.WAIT);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException(e);
            }
        });
        Attempt taker = closing(takeover.get(Timing.WAIT.toSeconds() * 2, TimeUnit.SECONDS));
        assertThat(taker.decision().proceeds()).as(taker.decision().toString()).isTrue();
        assertThat(hungAttempt.cross(provider.verified())).isInstanceOf(Crossing.Refused.class);
        taker.cross(provider.verified());

        // shell fleet: a run killed with SIGKILL while its command runs (armed, no outcome), a delivery
        // whose record is then corrupted, a send_status_unknown, a fresh namespace never initialised, a
        // fail-closed run
        String[] run = {"run", "--metrics-textfile", textfile.toString(), "--dest", "slack:C-SHELL"};
        Path corrupt = file("corrupt");
        Path armedMarker = dir.resolve("armed-command-started");
        List<String> failClosed = new ArrayList<>(List.of(run));
        failClosed.addAll(List.of("--connect", "127.0.0.1:" + freePort(), "--namespace", "/shell", "--connect-timeout", "1s",
                "--file", file("fail-closed").toString(), "--", "true"));
        Cli.Running killed = cli.start(runArgs(run, zk, "/shell", file("armed"), "touch " + armedMarker + "; exec sleep 300"));
        awaitFile(armedMarker, killed);
        killed.process().destroyForcibly();
        log("a run killed while armed");
        // one run at a time: a CLI JVM starts slowly on a loaded machine, several at once more slowly still
        Map<String[], Integer> shell = new LinkedHashMap<>();
        shell.put(runArgs(run, zk, "/shell", corrupt, "true"), 0);
        shell.put(runArgs(run, zk, "/shell", file("unknown"), "false"), 1);
        shell.put(runArgs(run, zk, "/fresh", file("fresh"), "true"), 13);
        shell.put(failClosed.toArray(String[]::new), 13);
        for (Map.Entry<String[], Integer> r : shell.entrySet()) {
            Cli.Result result = cli.start(r.getKey()).await(Timing.PROCESS);
            assertThat(result.exit()).as(result.toString()).isEqualTo(r.getValue());
            log("oncegate " + result.args() + " → " + result.exit());
        }
        EffectKey corruptKey = EffectKey.of(Destination.parse(dev.oncegate.IdentityKind.STABLE, "slack:C-SHELL"), corrupt);
        curator.setData().forPath(corruptKey.path("/shell") + "/0", "{oops".getBytes(StandardCharsets.UTF_8));
        // the lost ZooKeeper: a run whose outcome cannot be recorded, a gate without connection, a stale scan
        Path go = dir.resolve("go");
        Cli.Running unrecorded = cli.start(runArgs(new String[] {"run", "--metrics-textfile", textfile.toString(),
                "--dest", "slack:C-LOST", "--connect-timeout", "2s"}, zk2, "/lostshell", file("lost"),
                "touch " + dir.resolve("lost-started") + "; while [ ! -e " + go + " ]; do sleep 0.1; done"));
        awaitFile(dir.resolve("lost-started"), unrecorded);
        awaitScrapes(prometheus, 4); // the run's series at zero, before its outcome
        zk2.stop();
        Files.writeString(go, "go");
        Cli.Result lost = unrecorded.await(Timing.PROCESS);
        log("the unrecorded outcome; seen firing so far: " + seenFiring);
        assertThat(lost.runJson().path("recorded").asBoolean(true)).as(lost.toString()).isFalse();

        // Then every alert fires, on its namespace where it has one
        Map<String, Set<String>> expected = new TreeMap<>();
        expected.put("OncegateSendStatusUnknown", Set.of("/jvm", "/shell"));
        expected.put("OncegateOutcomeNotRecorded", Set.of("/lostshell"));
        expected.put("OncegateArmedWithoutOutcomeRising", Set.of("/shell"));
        expected.put("OncegateArmedWithoutOutcomeOld", Set.of("/shell"));
        expected.put("OncegateFailClosed", Set.of("/shell"));
        expected.put("OncegateNamespaceNotInitialised", Set.of("/fresh"));
        expected.put("OncegateUnreadableRecords", Set.of("/shell"));
        expected.put("OncegateZooKeeperConnectionLost", Set.of("/lost"));
        expected.put("OncegateNoDecisions", Set.of("/idle"));
        expected.put("OncegateFencedWrites", Set.of("/jvm"));
        expected.put("OncegateExporterScanStale", Set.of("/lost"));
        assertThat(expected.keySet()).as("every alert of the rules but OncegateExporterDown")
                .isEqualTo(alertNames(RepoFiles.read("deploy/prometheus/oncegate-alerts.yml"), "OncegateExporterDown"));
        await().atMost(Timing.APPEAR).pollInterval(Duration.ofMillis(250)).untilAsserted(() -> expected.forEach((alert, namespaces) ->
                assertThat(seenFiring.getOrDefault(alert, Set.of())).as(alert + " seen firing for; all seen: " + seenFiring)
                        .containsAll(namespaces)));
        // and an exporter that stops answering is down (a loaded machine may have missed scrapes before: forget those)
        lostExporter.process().destroyForcibly();
        seenFiring.remove("OncegateExporterDown");
        await().atMost(Timing.APPEAR).pollInterval(Duration.ofMillis(250))
                .until(() -> seenFiring.getOrDefault("OncegateExporterDown", Set.of()).contains(hostPort(exporterLost)));
        System.out.println("PrometheusAlertsIT: every alert fired " + Duration.between(started, Instant.now()).toMillis()
                + " ms after the situations began");

        // and every dashboard expression returns data, for the JVM fleet and for the shell-only fleet
        JsonNode dashboard = JSON.readTree(RepoFiles.path("deploy/grafana/oncegate-dashboard.json").toFile());
        List<String> emptyForJvm = new ArrayList<>();
        List<String> emptyForShell = new ArrayList<>();
        for (JsonNode panel : panels(dashboard)) {
            String title = panel.path("title").asText();
            boolean shellHasData = false;
            for (JsonNode target : panel.path("targets")) {
                String expr = target.path("expr").asText();
                if (query(prometheus, forFleet(expr, JVM_FLEET)).isEmpty()) {
                    emptyForJvm.add(title + ": " + expr);
                }
                shellHasData |= !query(prometheus, forFleet(expr, SHELL_FLEET)).isEmpty();
            }
            if (!shellHasData && !panel.path("description").asText().contains(JVM_ONLY)) {
                emptyForShell.add(title);
            }
        }
        assertThat(emptyForJvm).as("dashboard expressions without data for the JVM fleet").isEmpty();
        assertThat(emptyForShell).as("panels without data for the shell-only fleet (not marked '" + JVM_ONLY + "')").isEmpty();
        // and the namespace variable lists every namespace, /exported (only an exporter's) too
        assertThat(variableValues(prometheus, dashboard)).containsAll(JVM_FLEET).containsAll(SHELL_FLEET);
    }

    // --- the situations ------------------------------------------------------------------------

    private static void cross(Worker worker, EffectKey key, dev.oncegate.BoundaryAction action) throws Exception {
        try (Attempt attempt = worker.gate().enter(key, Duration.ZERO)) {
            assertThat(attempt.decision().proceeds()).as(attempt.decision().toString()).isTrue();
            attempt.cross(action);
        }
    }

    private static EffectKey key() {
        return EffectKey.of(Destination.stable("slack", "C-" + UUID.randomUUID()),
                ("report " + UUID.randomUUID()).getBytes(StandardCharsets.UTF_8));
    }

    private Path file(String name) throws IOException {
        return Files.writeString(dir.resolve(name + ".txt"), name + " " + UUID.randomUUID());
    }

    private static void log(String what) {
        System.out.println(Instant.now() + " PrometheusAlertsIT: " + what);
    }

    /** Waits until {@code file} exists, which {@code run}'s command creates. */
    private static void awaitFile(Path file, Cli.Running run) {
        await().atMost(Timing.PROCESS).pollInterval(Duration.ofMillis(100)).untilAsserted(() -> assertThat(Files.exists(file))
                .as(file + " from oncegate " + run.args() + "; alive " + run.process().isAlive() + ", stderr:\n" + run.stderr())
                .isTrue());
    }

    private static String[] runArgs(String[] run, EmbeddedZooKeeper zk, String namespace, Path file, String script) {
        List<String> args = new ArrayList<>(List.of(run));
        args.addAll(List.of("--connect", zk.connectString(), "--namespace", namespace, "--file", file.toString(),
                "--", "sh", "-c", script));
        return args.toArray(String[]::new);
    }

    /**
     * Starts {@code oncegate exporter} on {@code namespace}, walking every key as often as it scans: a
     * record damaged by hand is in no backlog index entry until a walk (or a reader) meets it, and the
     * walk's default hour is shortened here like the rules' windows.
     */
    private static Cli.Running exporter(Cli cli, EmbeddedZooKeeper zk, String namespace) {
        return cli.start("exporter", "--connect", zk.connectString(), "--namespace", namespace,
                "--listen", "127.0.0.1:0", "--interval", step(), "--walk-interval", step());
    }

    /** The exporter's metrics URL, once it listens. */
    private static String metricsUrl(Cli.Running exporter) {
        Pattern url = Pattern.compile("\"metrics\":\"([^\"]+)\"");
        return await().atMost(Timing.PROCESS).until(() -> {
            assertThat(exporter.process().isAlive()).as("exporter " + exporter.args() + ": " + exporter.stderr()).isTrue();
            Matcher m = url.matcher(exporter.stdout());
            return m.find() ? m.group(1) : null;
        }, u -> u != null);
    }

    // --- Prometheus ----------------------------------------------------------------------------

    /**
     * The test copy of the rules: every range, offset, {@code for:} and seconds threshold (a
     * comparison in an expression on {@code *_seconds} or {@code time()}) multiplied by {@link #SCALE}.
     */
    static String shortened(String rules) {
        StringBuilder out = new StringBuilder();
        for (String line : rules.split("\n", -1)) {
            String l = line;
            l = replaceAll(l, Pattern.compile("\\[(\\d+[smhd])]"), m -> "[" + scaled(m.group(1)) + "]");
            l = replaceAll(l, Pattern.compile("offset (\\d+[smhd])"), m -> "offset " + scaled(m.group(1)));
            l = replaceAll(l, Pattern.compile("^(\\s*for: )(\\d+[smhd])$"), m -> m.group(1) + scaled(m.group(2)));
            if (l.contains("_seconds") || l.contains("time()")) {
                l = replaceAll(l, Pattern.compile("> (\\d{2,})$"), m -> "> " + Math.round(Long.parseLong(m.group(1)) * SCALE));
            }
            out.append(l).append('\n');
        }
        return out.toString();
    }

    private static String step() {
        return STEP.toMillis() + "ms";
    }

    private static String scaled(String duration) {
        Matcher m = DURATION.matcher(duration);
        assertThat(m.matches()).as(duration).isTrue();
        long seconds = Long.parseLong(m.group(1)) * switch (m.group(2)) {
            case "s" -> 1;
            case "m" -> 60;
            case "h" -> 3600;
            default -> 86400;
        };
        return Math.max(1, Math.round(seconds * 1000 * SCALE)) + "ms";
    }

    private static String replaceAll(String text, Pattern pattern, java.util.function.Function<Matcher, String> replacement) {
        Matcher m = pattern.matcher(text);
        StringBuilder out = new StringBuilder();
        while (m.find()) {
            m.appendReplacement(out, Matcher.quoteReplacement(replacement.apply(m)));
        }
        m.appendTail(out);
        return out.toString();
    }

    private static Set<String> alertNames(String rules, String except) {
        Set<String> out = new TreeSet<>();
        Matcher m = Pattern.compile("- alert: (\\S+)").matcher(rules);
        while (m.find()) {
            if (!m.group(1).equals(except)) {
                out.add(m.group(1));
            }
        }
        return out;
    }

    /** Alert name → the namespaces it fires for (its instance when it has none), from /api/v1/rules. */
    private Map<String, Set<String>> firing(String prometheus) throws Exception {
        JsonNode groups = get(prometheus + "/api/v1/rules?type=alert").path("data").path("groups");
        Map<String, Set<String>> out = new TreeMap<>();
        for (JsonNode group : groups) {
            for (JsonNode rule : group.path("rules")) {
                for (JsonNode alert : rule.path("alerts")) {
                    if (alert.path("state").asText().equals("firing")) {
                        out.computeIfAbsent(rule.path("name").asText(), n -> new TreeSet<>())
                                .add(alert.path("labels").path("zk_namespace").asText(alert.path("labels").path("instance").asText("")));
                    }
                }
            }
        }
        return out;
    }

    /** An instant query's result vector. */
    private JsonNode query(String prometheus, String expr) throws Exception {
        JsonNode answer = get(prometheus + "/api/v1/query?query=" + URLEncoder.encode(expr, StandardCharsets.UTF_8));
        assertThat(answer.path("status").asText()).as(expr + ": " + answer).isEqualTo("success");
        return answer.path("data").path("result");
    }

    /** Waits until Prometheus has scraped every target {@code n} more times. */
    private void awaitScrapes(String prometheus, int n) throws Exception {
        double first = query(prometheus, "max(timestamp(up))").path(0).path("value").path(1).asDouble();
        await().atMost(Timing.APPEAR).pollInterval(Duration.ofMillis(100)).until(() ->
                query(prometheus, "min(timestamp(up))").path(0).path("value").path(1).asDouble()
                        > first + (n - 1) * STEP.toMillis() / 1000.0);
    }

    private JsonNode get(String url) throws Exception {
        HttpResponse<String> response = http.send(HttpRequest.newBuilder(URI.create(url)).timeout(Duration.ofSeconds(10)).build(),
                HttpResponse.BodyHandlers.ofString());
        return JSON.readTree(response.body());
    }

    // --- the dashboard -------------------------------------------------------------------------

    private static List<JsonNode> panels(JsonNode dashboard) {
        List<JsonNode> out = new ArrayList<>();
        for (JsonNode panel : dashboard.path("panels")) {
            if (!panel.path("type").asText().equals("row")) {
                out.add(panel);
            }
            panel.path("panels").forEach(out::add);
        }
        return out;
    }

    /** The expression as Grafana sends it with the fleet's namespaces selected and a rate interval of a few scrapes. */
    private static String forFleet(String expr, List<String> namespaces) {
        return expr.replace("$zk_namespace", String.join("|", namespaces)).replace("$__rate_interval", "5s");
    }

    /** The values of the dashboard's namespace variable, as Grafana would ask Prometheus for them. */
    private List<String> variableValues(String prometheus, JsonNode dashboard) throws Exception {
        for (JsonNode variable : dashboard.path("templating").path("list")) {
            if (!variable.path("name").asText().equals("zk_namespace")) {
                continue;
            }
            Matcher m = Pattern.compile("label_values\\((.*),\\s*zk_namespace\\)").matcher(variable.path("definition").asText());
            assertThat(m.matches()).as(variable.path("definition").asText()).isTrue();
            JsonNode series = get(prometheus + "/api/v1/series?match[]=" + URLEncoder.encode(m.group(1).strip(), StandardCharsets.UTF_8));
            Set<String> out = new TreeSet<>();
            series.path("data").forEach(s -> {
                if (s.has("zk_namespace")) {
                    out.add(s.path("zk_namespace").asText());
                }
            });
            return new ArrayList<>(out);
        }
        throw new AssertionError("no zk_namespace variable");
    }

    // --- processes and ports ------------------------------------------------------------------

    private Process process(String name, List<String> command) throws IOException {
        Process p = new ProcessBuilder(command).directory(dir.toFile()).redirectErrorStream(true)
                .redirectOutput(dir.resolve(name + ".log").toFile()).start();
        processes.add(p);
        return p;
    }

    private static int freePort() throws IOException {
        try (ServerSocket socket = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            return socket.getLocalPort();
        }
    }

    private static String hostPort(String url) {
        URI uri = URI.create(url);
        return uri.getHost() + ":" + uri.getPort();
    }

    private <T extends AutoCloseable> T closing(T closeable) {
        closeables.add(closeable);
        return closeable;
    }
}
