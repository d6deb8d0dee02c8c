package dev.oncegate.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;

import com.fasterxml.jackson.databind.JsonNode;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code oncegate server}'s ZooKeeper configuration: autopurge on by default and said so in the
 * start line, ZooKeeper's own Prometheus metrics on loopback, a {@code zoo.cfg} for anything else
 * (its keys in force, as {@code oncegate doctor} sees from outside), and every conflict or bad
 * file refused with exit 2 before anything listens.
 */
class ServerConfigIT {

    @TempDir
    Path dir;
    Cli cli;

    @BeforeEach
    void setUp() {
        cli = new Cli(dir, Map.of());
    }

    @AfterEach
    void killEverythingStarted() {
        Cli.destroyAll();
    }

    @Test
    void defaults_autopurgeOn_metricsOnLoopback_andDoctorFindsNothingFailing() throws Exception {
        int port = ServerRestartIT.freePort();
        int metrics = ServerRestartIT.freePort();

        Cli.Running server = cli.start("server", "--port", Integer.toString(port), "--data-dir",
                dir.resolve("data").toString(), "--metrics-port", Integer.toString(metrics));
        JsonNode started = ServerRestartIT.startLine(server);

        JsonNode autopurge = started.get("autopurge");
        assertThat(autopurge.get("on").asBoolean()).isTrue();
        assertThat(autopurge.get("snap_retain_count").asInt()).isEqualTo(5);
        assertThat(autopurge.get("purge_interval_hours").asInt()).isEqualTo(1);
        assertThat(started.get("metrics").asText()).isEqualTo("http://127.0.0.1:" + metrics + "/metrics");
        assertThat(started.get("config").isNull()).isTrue();
        String scraped = EnsembleFailoverIT.httpGet(started.get("metrics").asText());
        assertThat(scraped).contains("# TYPE znode_count gauge").contains("jvm_threads_current");
        assertThat(server.stderr()).doesNotContain("WARN");

        Cli.Result doctor = cli.run("doctor", "--connect", "127.0.0.1:" + port);
        assertThat(doctor.exit()).as(doctor.toString()).isZero();
        assertThat(doctor.stdout()).contains("ok    server     127.0.0.1:" + port + " 3.9.5 standalone")
                .contains("session timeout 30s, lease TTL 30s").contains("has genesis");
    }

    @Test
    void configFile_setsWhatTheFlagsDoNot_andDoctorSeesItFromOutside() throws Exception {
        // Given a zoo.cfg with its own port, 1 s ticks (sessions up to 20 s) and autopurge off
        int port = ServerRestartIT.freePort();
        Path data = dir.resolve("from-file");
        Path cfg = Files.writeString(dir.resolve("zoo.cfg"), "clientPort=" + port + "\ntickTime=1000\ndataDir=" + data
                + "\nautopurge.purgeInterval=0\n");

        Cli.Running server = cli.start("server", "--config", cfg.toString());
        JsonNode started = ServerRestartIT.startLine(server);

        assertThat(started.get("connect").asText()).isEqualTo("127.0.0.1:" + port);
        assertThat(started.get("data_dir").asText()).isEqualTo(data.toString());
        assertThat(started.get("config").asText()).isEqualTo(cfg.toString());
        assertThat(started.get("autopurge").get("on").asBoolean()).isFalse();
        assertThat(server.stderr()).contains("autopurge is off", "autopurge.purgeInterval=1");
        assertThat(started.get("metrics").isNull()).isTrue();

        Cli.Result doctor = cli.run("doctor", "--connect", "127.0.0.1:" + port, "--server-config", cfg.toString());
        assertThat(doctor.exit()).as("warnings only: " + doctor).isZero();
        assertThat(doctor.stdout()).contains("session timeout 20s (asked for 30s")
                .containsPattern("warn  autopurge  off in .*zoo.cfg \\(autopurge.purgeInterval=0\\)");
    }

    @Test
    void conflictingFlags_badFiles_andEnsembles_areRefused_exit2() throws Exception {
        int port = ServerRestartIT.freePort();
        Path cfg = Files.writeString(dir.resolve("port.cfg"), "clientPort=" + port + "\n");
        Path bad = Files.writeString(dir.resolve("bad.cfg"), "tickTime=often\n");
        Path relative = Files.writeString(dir.resolve("relative.cfg"), "dataDir=zk-data\n");
        Path quorumData = Files.createDirectories(dir.resolve("quorum"));
        Files.writeString(quorumData.resolve("myid"), "1\n");
        Path ensemble = Files.writeString(dir.resolve("ensemble.cfg"), "tickTime=2000\ninitLimit=10\nsyncLimit=5\n"
                + "dataDir=" + quorumData + "\nserver.1=127.0.0.1:2888:3888\nserver.2=127.0.0.1:2889:3889\n");

        Cli.Result conflict = cli.run("server", "--config", cfg.toString(), "--port", "2181");
        Cli.Result badValue = cli.run("server", "--config", bad.toString());
        Cli.Result relativeDir = cli.run("server", "--config", relative.toString());
        Cli.Result quorum = cli.run("server", "--config", ensemble.toString());
        Cli.Result missing = cli.run("server", "--config", dir.resolve("missing.cfg").toString());

        assertThat(conflict.exit()).as(conflict.toString()).isEqualTo(2);
        assertThat(conflict.stderr()).contains("--port conflicts with clientPort=" + port + " in " + cfg);
        assertThat(badValue.exit()).as(badValue.toString()).isEqualTo(2);
        assertThat(badValue.stderr()).contains("--config " + bad, "ZooKeeper refuses");
        assertThat(relativeDir.exit()).as(relativeDir.toString()).isEqualTo(2);
        assertThat(relativeDir.stderr()).contains("dataDir=zk-data", "absolute");
        assertThat(quorum.exit()).as(quorum.toString()).isEqualTo(2);
        assertThat(quorum.stderr()).contains("describes an ensemble");
        assertThat(missing.exit()).as(missing.toString()).isEqualTo(2);
        assertThat(missing.stderr()).contains("--config: cannot read");
        for (Cli.Result r : new Cli.Result[] {conflict, badValue, relativeDir, quorum, missing}) {
            assertThat(r.stdout()).as("no start line: " + r).isEmpty();
        }
    }
}
