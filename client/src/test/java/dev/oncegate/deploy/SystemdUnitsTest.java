package dev.oncegate.deploy;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;

/**
 * deploy/systemd: every unit stops its whole control group (a gated command never outlives its
 * gate; a unit that gates a command signals run alone first, KillMode=mixed), runs as a non-root
 * user, and starts what it says; {@code systemd-analyze verify} finds
 * nothing to say about it when it is installed.
 */
class SystemdUnitsTest {

    /** section → key → last value (enough for these units). */
    static Map<String, Map<String, String>> parse(String text) {
        Map<String, Map<String, String>> sections = new LinkedHashMap<>();
        Map<String, String> current = null;
        for (String raw : text.split("\n")) {
            String line = raw.strip();
            if (line.isEmpty() || line.startsWith("#")) {
                continue;
            }
            if (line.startsWith("[")) {
                current = sections.computeIfAbsent(line.substring(1, line.length() - 1), s -> new LinkedHashMap<>());
            } else {
                int eq = line.indexOf('=');
                current.put(line.substring(0, eq), line.substring(eq + 1));
            }
        }
        return sections;
    }

    static List<Path> units() throws Exception {
        try (Stream<Path> files = Files.list(RepoFiles.path("deploy/systemd"))) {
            return files.filter(p -> p.toString().endsWith(".service")).sorted().toList();
        }
    }

    @Test
    void everyUnit_killsItsControlGroup_runsAsNonRoot_andIsInstallable() throws Exception {
        List<Path> units = units();
        assertThat(units).extracting(p -> p.getFileName().toString())
                .contains("zookeeper.service", "oncegate-server.service", "oncegate-exporter.service");
        for (Path unit : units) {
            Map<String, Map<String, String>> u = parse(Files.readString(unit));
            String name = unit.getFileName().toString();
            assertThat(u.get("Unit")).as(name).containsKey("Description");
            // A unit that gates a command signals `run` alone (mixed: a command signalled directly may answer with a
            // code that reads as proof); every other one its whole control group. Both SIGKILL what is left at the end.
            boolean gates = u.get("Service").get("ExecStart").contains(" run ");
            assertThat(u.get("Service")).as(name).containsEntry("KillMode", gates ? "mixed" : "control-group")
                    .containsKey("ExecStart");
            assertThat(u.get("Service").get("User")).as(name).isNotBlank().isNotEqualTo("root");
            assertThat(u.get("Install")).as(name).containsEntry("WantedBy", "multi-user.target");
        }
    }

    @Test
    void eachUnit_startsItsCommand() throws Exception {
        Map<String, String> exec = new LinkedHashMap<>();
        for (Path unit : units()) {
            exec.put(unit.getFileName().toString(), parse(Files.readString(unit)).get("Service").get("ExecStart"));
        }
        assertThat(exec.get("zookeeper.service")).contains("org.apache.zookeeper.server.quorum.QuorumPeerMain");
        assertThat(exec.get("oncegate-server.service")).contains("-jar /opt/oncegate/oncegate.jar server ");
        assertThat(exec.get("oncegate-exporter.service")).contains("-jar /opt/oncegate/oncegate.jar exporter --listen 127.0.0.1:9464");
        assertThat(RepoFiles.read("deploy/prometheus/prometheus.yml")).contains("127.0.0.1:9464");
        assertThat(exec.get("oncegate-worker-example.service")).contains("-jar /opt/oncegate/oncegate.jar run ");
    }

    @Test
    void everyOncegateUnit_keepsItsStateWhereItMayWrite_andTheServersApartFromItsData() throws Exception {
        int checked = 0;
        for (Path unit : units()) {
            Map<String, String> service = parse(Files.readString(unit, StandardCharsets.UTF_8)).get("Service");
            List<String> exec = List.of(service.get("ExecStart").split("\\s+"));
            if (!exec.contains("/opt/oncegate/oncegate.jar")) {
                continue; // Debian's ZooKeeper
            }
            checked++;
            String name = unit.getFileName().toString();
            // Without it the state goes to ~/.local/state, which ProtectHome= and ProtectSystem= shut: every command
            // warns or fails, and the rollback witness (the zxid marks) is off.
            assertThat(exec).as(name + ": --state-dir").contains("--state-dir");
            String state = exec.get(exec.indexOf("--state-dir") + 1);
            List<String> writable = new java.util.ArrayList<>();
            for (String d : service.getOrDefault("StateDirectory", "").split("\\s+")) {
                if (!d.isEmpty()) {
                    writable.add("/var/lib/" + d);
                }
            }
            writable.addAll(List.of(service.getOrDefault("ReadWritePaths", "").split("\\s+")));
            assertThat(writable).as(name + ": the state directory " + state + " is one the unit may write")
                    .anyMatch(w -> !w.isEmpty() && (state.equals(w) || state.startsWith(w + "/")));
            if (exec.contains("--data-dir")) {
                // Apart, so that a lost data directory is refused by the marks that saw it, not lost with them.
                String data = exec.get(exec.indexOf("--data-dir") + 1);
                assertThat(state.equals(data) || state.startsWith(data + "/") || data.startsWith(state + "/"))
                        .as(name + ": the state directory " + state + " is apart from the data directory " + data).isFalse();
            }
        }
        assertThat(checked).isEqualTo(4);
    }

    @Test
    void systemdAnalyze_verifiesEveryUnit_whenInstalled() throws Exception {
        Optional<Path> analyze = Tools.find("systemd-analyze");
        Assumptions.assumeTrue(analyze.isPresent(),
                "systemd-analyze not installed (Debian's systemd package): the units were checked statically only");
        for (Path unit : units()) {
            Path out = Files.createTempFile("systemd-analyze-", ".txt");
            try {
                Process p = new ProcessBuilder(analyze.get().toString(), "verify", "--man=no", unit.toString())
                        .redirectErrorStream(true).redirectOutput(out.toFile()).start();
                try {
                    assertThat(p.waitFor(60, TimeUnit.SECONDS)).isTrue();
                } finally {
                    p.destroyForcibly();
                }
                String output = Files.readString(out, StandardCharsets.UTF_8).strip();
                assertThat(output).as(unit.getFileName() + ": " + output).isEmpty();
                assertThat(p.exitValue()).isZero();
            } finally {
                Files.deleteIfExists(out);
            }
        }
    }
}
