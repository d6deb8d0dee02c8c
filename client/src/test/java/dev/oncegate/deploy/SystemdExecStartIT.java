package dev.oncegate.deploy;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import dev.oncegate.testing.Timing;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Every deploy/systemd unit's {@code ExecStart} starts, under the configuration shipped beside it,
 * and its service answers. systemd is not PID 1 here: each {@code ExecStart} line is expanded as
 * systemd would ({@code Environment=} values for {@code ${NAME}}) and run as a process of this test.
 *
 * <p>What is substituted, and only that: ports by free ones (a machine running tests has its own
 * 2181), directories the unit owns ({@code StateDirectory}, {@code ReadWritePaths}, /opt/oncegate)
 * by directories of this test, what an {@code EnvironmentFile} would hold (the connect string) by
 * this test's servers, the ZooKeeper heap by 64m (a shared test machine), and the worker's
 * delivery program by a script that records its run. The classpath stays the unit's default:
 * Debian's {@code zookeeper} package, as .ci/run installs it. The units' User= is not applied.
 */
class SystemdExecStartIT {

    private static final Pattern REFERENCE = Pattern.compile("\\$\\{([A-Za-z_][A-Za-z0-9_]*)}");
    private static final Pattern SHIPPED_PORT = Pattern.compile("(?<![0-9])(2181|2182|2183|2888|2889|2890|3888|3889|3890|7001|7002|7003|9464)(?![0-9])");

    @TempDir
    Path dir;

    private final List<Process> started = new ArrayList<>();
    private final Map<String, Process> processes = new LinkedHashMap<>();
    /** The shipped ports of deploy/ → free ones on this machine. */
    private Map<String, Integer> ports;

    @BeforeEach
    void choosePorts() throws IOException {
        ports = freePorts();
    }

    @AfterEach
    void stopEverything() {
        for (Process p : started) {
            p.toHandle().descendants().forEach(ProcessHandle::destroyForcibly);
            p.destroyForcibly();
        }
        for (Process p : started) {
            try {
                p.waitFor(30, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }

    @Test
    void zooKeeperUnit_withEachShippedConfig_formsAnEnsembleThatServes() throws Exception {
        // Given zookeeper.service three times, with zoo1.cfg, zoo2.cfg and zoo3.cfg as /etc/zookeeper/zoo.cfg
        Tools.require("java", "apt-get install -y default-jre-headless");
        assertThat(Path.of("/usr/share/java/zookeeper.jar")).as("Debian's zookeeper package (apt-get install -y zookeeper;"
                + " .ci/run installs it)").exists();
        String unit = RepoFiles.read("deploy/systemd/zookeeper.service");
        assertThat(unit).as("where the unit's comment puts myid").contains("its number in /var/lib/zookeeper/myid");
        List<Integer> clientPorts = new ArrayList<>();
        for (int n = 1; n <= 3; n++) {
            Path state = Files.createDirectories(dir.resolve("zk" + n + "/var/lib/zookeeper"));
            Files.writeString(state.resolve("myid"), n + "\n");
            String config = RepoFiles.read("deploy/zookeeper/zoo" + n + ".cfg").replace("/var/lib/zookeeper", state.toString());
            Path cfg = Files.writeString(dir.resolve("zk" + n + "/zoo.cfg"), withPorts(config, ports));
            Map<String, String> env = environment(unit);
            env.put("ZOOCFG", cfg.toString());
            env.put("ZOOKEEPER_HEAP", "64m");

            // When its ExecStart runs
            start("zookeeper-" + n, execStart(unit, env), env);
            clientPorts.add(ports.get(Integer.toString(2180 + n)));
        }

        // Then each server answers srvr as leader or follower
        for (int n = 0; n < 3; n++) {
            int port = clientPorts.get(n);
            String name = "zookeeper-" + (n + 1);
            await().atMost(Timing.scaled(Duration.ofSeconds(60))).pollInterval(Duration.ofMillis(250)).until(
                    () -> alive(name) && fourLetterWord(port, "srvr").matches("(?s).*Mode: (leader|follower).*"));
        }
        // and deploy/kubernetes/zookeeper.yaml's readiness probe says ready, until the server loses its quorum
        assertThat(readinessProbe(clientPorts.get(0))).isZero();
        processes.get("zookeeper-2").destroyForcibly();
        processes.get("zookeeper-3").destroyForcibly();
        await().atMost(Timing.scaled(Duration.ofSeconds(60))).pollInterval(Duration.ofMillis(250))
                .until(() -> readinessProbe(clientPorts.get(0)) != 0);
    }

    /** The exit status of the StatefulSet's readiness probe command, pointed at {@code port} instead of 2181. */
    private static int readinessProbe(int port) throws Exception {
        KubernetesManifestsTest.parse();
        com.fasterxml.jackson.databind.JsonNode sts = KubernetesManifestsTest.named("StatefulSet", "zookeeper");
        List<String> command = new ArrayList<>();
        KubernetesManifestsTest.containers(sts).get(0).path("readinessProbe").path("exec").path("command")
                .forEach(c -> command.add(c.asText().replace("2181", Integer.toString(port))));
        Process probe = new ProcessBuilder(command).redirectErrorStream(true)
                .redirectOutput(ProcessBuilder.Redirect.DISCARD).start();
        if (!probe.waitFor(10, TimeUnit.SECONDS)) {
            probe.destroyForcibly();
            return -1;
        }
        return probe.exitValue();
    }

    @Test
    void oncegateUnits_serverThenExporterThenWorker_eachStartsAndAnswers() throws Exception {
        // Given oncegate-server.service: ZooKeeper answers srvr, its metrics port answers HTTP
        String server = RepoFiles.read("deploy/systemd/oncegate-server.service");
        start("oncegate-server", execStart(server, environment(server)), Map.of());
        int client = ports.get("2181");
        await().atMost(Timing.scaled(Duration.ofSeconds(60))).pollInterval(Duration.ofMillis(250))
                .until(() -> alive("oncegate-server") && fourLetterWord(client, "srvr").contains("Mode: standalone"));
        assertThat(httpGet(ports.get("7001"))).contains("znode_count");
        String connect = "127.0.0.1:" + client;

        // and oncegate-exporter.service on it: its /metrics reports a completed scan
        String exporterUnit = RepoFiles.read("deploy/systemd/oncegate-exporter.service");
        assertThat(exporterUnit).contains("EnvironmentFile=/etc/oncegate/exporter.env");
        start("oncegate-exporter", execStart(exporterUnit, environment(exporterUnit)), Map.of("ONCEGATE_CONNECT", connect));
        await().atMost(Timing.scaled(Duration.ofSeconds(90))).pollInterval(Duration.ofMillis(500)).ignoreExceptions()
                .until(() -> alive("oncegate-exporter") && httpGet(ports.get("9464"))
                        .matches("(?s).*oncegate_exporter_last_scan_success_timestamp_seconds\\{[^}]*} [1-9].*"));

        // When oncegate-worker-example.service (Type=oneshot) runs against it
        String worker = RepoFiles.read("deploy/systemd/oncegate-worker-example.service");
        Path workerDir = Files.createDirectories(dir.resolve("var/lib/oncegate-worker"));
        Files.writeString(workerDir.resolve("report.pdf"), "the daily report\n");
        Path ledger = dir.resolve("ledger");
        Path deliver = Files.writeString(dir.resolve("deliver-report"), "#!/bin/sh\necho \"delivered $ONCEGATE_KEY\" >> " + ledger + "\n");
        Files.setPosixFilePermissions(deliver, PosixFilePermissions.fromString("rwxr-xr-x"));
        List<String> command = execStart(worker, environment(worker)).stream()
                .map(a -> a.replace("/usr/local/bin/deliver-report", deliver.toString())).toList();
        Process run = start("oncegate-worker-example", command, Map.of("ONCEGATE_CONNECT", connect));

        // Then it delivers once and exits 0
        assertThat(run.waitFor(Timing.PROCESS.toMillis(), TimeUnit.MILLISECONDS)).isTrue();
        assertThat(run.exitValue()).as(log("oncegate-worker-example")).isZero();
        assertThat(Files.readAllLines(ledger)).hasSize(1);
    }

    /** The shipped ports of deploy/ → free ones on this machine. */
    private static Map<String, Integer> freePorts() throws IOException {
        Map<String, Integer> out = new LinkedHashMap<>();
        List<ServerSocket> held = new ArrayList<>();
        try {
            for (String port : List.of("2181", "2182", "2183", "2888", "2889", "2890", "3888", "3889", "3890", "7001", "7002", "7003", "9464")) {
                ServerSocket socket = new ServerSocket(0, 1, InetAddress.getLoopbackAddress());
                held.add(socket);
                out.put(port, socket.getLocalPort());
            }
        } finally {
            for (ServerSocket socket : held) {
                socket.close();
            }
        }
        return out;
    }

    private static String withPorts(String text, Map<String, Integer> ports) {
        Matcher m = SHIPPED_PORT.matcher(text);
        StringBuilder out = new StringBuilder();
        while (m.find()) {
            m.appendReplacement(out, Integer.toString(ports.get(m.group(1))));
        }
        m.appendTail(out);
        return out.toString();
    }

    /** The unit's Environment= assignments, in order. */
    private static Map<String, String> environment(String unit) {
        Map<String, String> env = new LinkedHashMap<>();
        for (String line : unit.split("\n")) {
            if (line.startsWith("Environment=")) {
                String assignment = line.substring("Environment=".length());
                int eq = assignment.indexOf('=');
                env.put(assignment.substring(0, eq), assignment.substring(eq + 1));
            }
        }
        return env;
    }

    /**
     * The unit's ExecStart as systemd runs it: split at white space, each {@code ${NAME}} replaced
     * by the variable's value; then this test's substitutions (see the class comment).
     */
    private List<String> execStart(String unit, Map<String, String> env) {
        String line = unit.lines().filter(l -> l.startsWith("ExecStart=")).findFirst().orElseThrow()
                .substring("ExecStart=".length());
        List<String> out = new ArrayList<>();
        for (String word : line.strip().split("\\s+")) {
            Matcher m = REFERENCE.matcher(word);
            StringBuilder expanded = new StringBuilder();
            while (m.find()) {
                assertThat(env).as("ExecStart refers to ${" + m.group(1) + "}").containsKey(m.group(1));
                m.appendReplacement(expanded, Matcher.quoteReplacement(env.get(m.group(1))));
            }
            m.appendTail(expanded);
            out.add(substitute(expanded.toString()));
        }
        return out;
    }

    private String substitute(String word) {
        String jar = System.getProperty("oncegate.jar");
        assertThat(jar).as("failsafe's oncegate.jar").isNotNull();
        String out = word.replace("/opt/oncegate/oncegate.jar", jar);
        for (String owned : List.of("/var/lib/oncegate-exporter", "/var/lib/oncegate-worker", "/var/lib/oncegate")) {
            if (out.startsWith(owned)) {
                out = dir.resolve(owned.substring(1)).toString() + out.substring(owned.length());
            }
        }
        return withPorts(out, ports);
    }

    private Process start(String name, List<String> command, Map<String, String> env) throws IOException {
        ProcessBuilder builder = new ProcessBuilder(command).directory(dir.toFile())
                .redirectErrorStream(true).redirectOutput(dir.resolve(name + ".log").toFile())
                .redirectInput(ProcessBuilder.Redirect.from(Path.of("/dev/null").toFile()));
        builder.environment().keySet().removeIf(n -> n.startsWith("ONCEGATE_"));
        builder.environment().putAll(env);
        Process process = builder.start();
        started.add(process);
        processes.put(name, process);
        return process;
    }

    private boolean alive(String name) {
        Process p = processes.get(name);
        if (!p.isAlive()) {
            throw new AssertionError(name + " exited " + p.exitValue() + ":\n" + log(name));
        }
        return true;
    }

    private String log(String name) {
        try {
            return Files.readString(dir.resolve(name + ".log"), StandardCharsets.UTF_8);
        } catch (IOException e) {
            return "(no log: " + e + ")";
        }
    }

    /** A four-letter word's answer; empty when nothing answers. */
    static String fourLetterWord(int port, String word) {
        try (Socket socket = new Socket()) {
            socket.connect(new InetSocketAddress(InetAddress.getLoopbackAddress(), port), 1000);
            socket.setSoTimeout(2000);
            OutputStream out = socket.getOutputStream();
            out.write(word.getBytes(StandardCharsets.US_ASCII));
            out.flush();
            InputStream in = socket.getInputStream();
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        } catch (IOException e) {
            return "";
        }
    }

    private static String httpGet(int port) throws IOException, InterruptedException {
        HttpResponse<String> response = HttpClient.newHttpClient().send(
                HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/metrics")).timeout(Duration.ofSeconds(5)).build(),
                HttpResponse.BodyHandlers.ofString());
        assertThat(response.statusCode()).isEqualTo(200);
        return response.body();
    }
}
