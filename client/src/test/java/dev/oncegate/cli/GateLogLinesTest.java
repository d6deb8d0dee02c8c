package dev.oncegate.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.TimeUnit;

import dev.oncegate.testing.EmbeddedZooKeeper;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import dev.oncegate.testing.Timing;

/**
 * What the gate logs, read from a worker process's stderr through the CLI's logging backend
 * ({@link LoggingProbe}: two gates in one process; a delivery whose action logs a line of its
 * own, a stop, an attempt left before crossing): one "ACLs are off" warning per process, the
 * stop and the outcome at INFO with one line each, the per-decision lines at DEBUG, and the key,
 * scope and task as MDC entries on every line — the user's line inside the action included —
 * never in the message text. A process of its own, because the warning is once per JVM.
 */
class GateLogLinesTest {

    static EmbeddedZooKeeper zk;
    static final String NAMESPACE = "/logging";

    @TempDir
    Path dir;

    @BeforeAll
    static void startZooKeeper() {
        zk = EmbeddedZooKeeper.start();
        zk.initNamespace(NAMESPACE);
    }

    @AfterAll
    static void stopZooKeeper() {
        if (zk != null) {
            zk.close();
        }
    }

    @Test
    void aWorkerProcess_logsContextAsMdc_oneLinePerStopAndOutcome_andOneAclWarning() throws Exception {
        // Given a worker process with oncegate's lines at DEBUG
        Path out = dir.resolve("stdout.txt");
        Path err = dir.resolve("stderr.txt");
        Process probe = new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-cp", System.getProperty("java.class.path"),
                "-Dslf4j.provider=" + CliLogging.class.getName(),
                "-Dorg.slf4j.simpleLogger.log.dev.oncegate=debug",
                "-Dorg.slf4j.simpleLogger.log.user=info",
                "-Djava.net.preferIPv4Stack=true",
                LoggingProbe.class.getName(), zk.connectString(), NAMESPACE, UUID.randomUUID().toString())
                .redirectOutput(out.toFile()).redirectError(err.toFile()).start();
        try {
            // When it delivers one effect, is stopped on it, and leaves another before crossing
            assertThat(probe.waitFor(Timing.PROCESS.toMillis(), TimeUnit.MILLISECONDS)).as("the probe finished").isTrue();
        } finally {
            ProcessTree.kill(probe, Duration.ZERO);
        }
        String stderr = Files.readString(err, StandardCharsets.UTF_8);
        assertThat(probe.exitValue()).as(stderr).isZero();
        String[] keys = Files.readString(out, StandardCharsets.UTF_8).strip().split(" ");
        String delivered = "oncegate.key=" + keys[0];
        String left = "oncegate.key=" + keys[1];
        List<String> lines = stderr.lines().toList();

        // Then "ACLs are off" was said once, for three entries through two gates
        assertThat(lines).as(stderr).filteredOn(l -> l.contains("no ACLs")).singleElement()
                .satisfies(l -> assertThat(l).contains(" WARN "));
        // and the user's own line inside the action carries the key, scope and task
        assertThat(lines).filteredOn(l -> l.contains("user line inside the action")).singleElement()
                .satisfies(l -> assertThat(l).contains(delivered, "oncegate.scope=0", "oncegate.task=task-a"));
        // and the outcome and the stop are one INFO line each, with their context; nothing else at INFO
        assertThat(lines).filteredOn(l -> l.contains(" INFO DefaultAttempt ")).as(stderr).satisfiesExactly(
                outcome -> assertThat(outcome).contains("outcome sent_verified (recorded=true): msg-1", delivered,
                        "oncegate.scope=0", "oncegate.task=task-a"),
                stop -> assertThat(stop).contains("stop_sent (sent_verified)", delivered, "oncegate.scope=0",
                        "oncegate.task=task-b"));
        // and the per-decision lines are DEBUG, also with their context
        assertThat(lines).filteredOn(l -> l.contains("proceed with token")).satisfiesExactly(
                first -> assertThat(first).contains(" DEBUG ", delivered, "oncegate.task=task-a"),
                second -> assertThat(second).contains(" DEBUG ", left, "oncegate.scope=0", "oncegate.task=task-a"));
        assertThat(lines).filteredOn(l -> l.contains("armed with token")).singleElement()
                .satisfies(l -> assertThat(l).contains(" DEBUG ", delivered));
        assertThat(lines).filteredOn(l -> l.contains("released the lease without arming")).singleElement()
                .satisfies(l -> assertThat(l).contains(" DEBUG ", left));
        // and no message spells the context out itself
        assertThat(lines).noneMatch(l -> l.contains("[key=") || l.contains("task=task-a]"));
    }
}
