package dev.oncegate.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.stream.Stream;

import dev.oncegate.deploy.PrometheusText;
import dev.oncegate.deploy.Promtool;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import dev.oncegate.testing.Timing;

/**
 * {@code oncegate run --metrics-textfile}: concurrent runs on one host add up in one
 * node_exporter textfile without losing an increment, under the gate's own series names, in a
 * file promtool accepts; fail-closed runs count too; a bad path is refused before anything
 * happens, and a file that cannot be written never changes what the run says.
 */
class MetricsTextfileIT extends CliFixture {

    static final String DECISIONS = "oncegate_decisions_total";
    static final String OUTCOMES = "oncegate_outcomes_total";

    Path textfile;

    @BeforeEach
    void textfileDirectory() throws Exception {
        textfile = Files.createDirectories(dir.resolve("textfile")).resolve("oncegate.prom");
    }

    PrometheusText file() throws Exception {
        return PrometheusText.parse(Files.readString(textfile, StandardCharsets.UTF_8));
    }

    /** {@code run} on an effect of its own (a fresh content file) that delivers. */
    String[] ownEffect(int i) throws Exception {
        Path own = dir.resolve("own-" + i + ".txt");
        Files.writeString(own, "report " + UUID.randomUUID());
        return new String[] {"run", "--connect", zk.connectString(), "--dest", dest, "--file", own.toString(),
                "--metrics-textfile", textfile.toString(), "--", "true"};
    }

    @Test
    void concurrentRuns_addUpInOneFile_exactly_andPromtoolAcceptsIt() throws Exception {
        // Given three runs racing for one effect (each waits for the executor) and three with effects of their own
        long before = System.currentTimeMillis() / 1000;
        List<Cli.Running> shared = new ArrayList<>();
        List<Cli.Running> own = new ArrayList<>();
        for (int i = 0; i < 3; i++) {
            shared.add(cli.start(runArgs(LEDGER_LINE, "--wait", "60s", "--metrics-textfile", textfile.toString())));
            own.add(cli.start(ownEffect(i)));
        }

        // When all six end
        List<Integer> sharedExits = shared.stream().map(r -> r.await(Timing.PROCESS).exit()).toList();
        List<Integer> ownExits = own.stream().map(r -> r.await(Timing.PROCESS).exit()).toList();

        // Then one delivery of the shared effect, two stops on it, three deliveries of the others...
        assertThat(sharedExits).containsExactlyInAnyOrder(0, 10, 10);
        assertThat(ownExits).containsOnly(0);
        assertThat(ledgerLines()).hasSize(1);
        // ...and the file counts every one of them, under the gate's series and tags
        PrometheusText file = file();
        assertThat(file.sum(DECISIONS)).as("every run's decision, none lost").isEqualTo(6);
        assertThat(file.value(DECISIONS, "kind", "proceed", "reason", "none", "zk_namespace", NAMESPACE)).isEqualTo(4);
        assertThat(file.value(DECISIONS, "kind", "stop_sent", "reason", "sent_verified")).isEqualTo(2);
        assertThat(file.value(OUTCOMES, "outcome", "sent_verified", "recorded", "true")).isEqualTo(4);
        assertThat(file.sum(OUTCOMES)).isEqualTo(4);
        assertThat(file.sum("oncegate_election_wait_seconds_count")).isEqualTo(6);
        assertThat(file.value("oncegate_boundary_duration_seconds_count", "outcome", "sent_verified")).isEqualTo(4);
        assertThat(file.series(DECISIONS)).as("every (kind, reason) pair from the first run on, at zero or more")
                .hasSizeGreaterThan(15).allSatisfy(s -> assertThat(s.labels()).containsOnlyKeys("zk_namespace", "kind", "reason"));
        assertThat(file.types()).containsEntry(DECISIONS, "counter").containsEntry("oncegate_election_wait_seconds", "summary")
                .containsEntry("oncegate_run_last_timestamp_seconds", "gauge");
        assertThat(file.value("oncegate_run_last_timestamp_seconds", "zk_namespace", NAMESPACE))
                .isBetween((double) before, System.currentTimeMillis() / 1000.0);
        try (Stream<Path> siblings = Files.list(textfile.getParent())) {
            assertThat(siblings.map(p -> p.getFileName().toString()))
                    .as("no temporary file left behind; the lock file stays").containsExactlyInAnyOrder("oncegate.prom", "oncegate.prom.lock");
        }
        Promtool.Result check = Promtool.checkMetrics(textfile);
        assertThat(check.exit()).as(check.output()).isZero();
        assertThat(check.output()).as("promtool's lint").isBlank();
    }

    @Test
    void firstRunOfANamespaceOnAHost_writesEverySeriesAtZero_beforeItsCommandRuns() throws Exception {
        // Given no textfile yet, and a run whose command waits to be released
        Path release = dir.resolve("release");
        Cli.Running running = cli.start(runArgs("echo started >> ledger; while [ ! -e " + release + " ]; do sleep 0.1; done",
                "--metrics-textfile", textfile.toString()));

        // When its command runs (the scope is armed: the run is between its decision and its outcome)
        await().atMost(Timing.APPEAR).until(() -> ledgerLines().contains("started"));

        // Then the file already holds the namespace's series, every one at zero, so the run's own
        // increments are increments for Prometheus (a series born at 1 has no increase())
        assertThat(Files.exists(textfile)).as("the series are written before the first crossing").isTrue();
        PrometheusText before = file();
        assertThat(before.series(DECISIONS)).isNotEmpty().allSatisfy(s -> assertThat(s.value()).isZero());
        assertThat(before.series(OUTCOMES)).isNotEmpty().allSatisfy(s -> assertThat(s.value()).isZero());
        assertThat(before.value(OUTCOMES, "outcome", "send_status_unknown", "recorded", "false", "zk_namespace", NAMESPACE)).isZero();
        assertThat(before.names()).doesNotContain("oncegate_run_last_timestamp_seconds");
        Files.writeString(release, "go");
        assertThat(running.await(Timing.PROCESS).exit()).isZero();
        assertThat(file().value(DECISIONS, "kind", "proceed", "reason", "none", "zk_namespace", NAMESPACE)).isEqualTo(1);
    }

    @Test
    void failClosedRun_isCounted_andAFileThatCannotBeWritten_neverChangesTheExitCode() throws Exception {
        // Given a run that cannot reach ZooKeeper
        Cli.Result unreachable = cli.run("run", "--connect", "127.0.0.1:1", "--connect-timeout", "1s", "--dest", dest,
                "--file", content.toString(), "--metrics-textfile", textfile.toString(), "--", "sh", "-c", LEDGER_LINE);

        // Then it stops unavailable, and the file says so
        assertThat(unreachable.exit()).as(unreachable.toString()).isEqualTo(13);
        assertThat(file().value(DECISIONS, "kind", "stop_unavailable", "reason", "zookeeper_unreachable")).isEqualTo(1);
        assertThat(file().sum(DECISIONS)).isEqualTo(1);

        // Given the lock file cannot be created (a directory stands in its place)
        Files.delete(textfile.resolveSibling("oncegate.prom.lock"));
        Files.createDirectory(textfile.resolveSibling("oncegate.prom.lock"));

        // When a run delivers
        Cli.Result delivered = run(LEDGER_LINE, "--metrics-textfile", textfile.toString());

        // Then it exits with what the records say, says the metrics were lost, and the file is as it was
        assertThat(delivered.exit()).as(delivered.toString()).isZero();
        assertThat(delivered.stderr()).contains("this run's metrics were not added to " + textfile);
        assertThat(ledgerLines()).hasSize(1);
        assertThat(file().sum(DECISIONS)).isEqualTo(1);
    }

    @Test
    void aPathNodeExporterWouldNotRead_isRefused_beforeZooKeeperIsTouched() throws Exception {
        Cli.Result notProm = run(LEDGER_LINE, "--metrics-textfile", dir.resolve("metrics.txt").toString());
        Cli.Result noDirectory = run(LEDGER_LINE, "--metrics-textfile", dir.resolve("absent/oncegate.prom").toString());

        assertThat(notProm.exit()).as(notProm.toString()).isEqualTo(2);
        assertThat(notProm.stderr()).contains("--metrics-textfile", "must end in .prom");
        assertThat(noDirectory.exit()).as(noDirectory.toString()).isEqualTo(2);
        assertThat(noDirectory.stderr()).contains("does not exist");
        assertThat(curator.checkExists().forPath(key.path(NAMESPACE))).as("nothing written to ZooKeeper").isNull();
        assertThat(ledgerLines()).isEmpty();
    }
}
