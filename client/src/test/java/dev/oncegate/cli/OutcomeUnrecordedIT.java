package dev.oncegate.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.nio.file.Files;

import dev.oncegate.testing.Timing;
import org.junit.jupiter.api.Test;

/**
 * {@code run} reports what was recorded: when the outcome cannot be written (ZooKeeper went away
 * during the command), the scope stays armed, which every later run reads as
 * {@code send_status_unknown} — so this run exits 1 and says so, never 0.
 */
class OutcomeUnrecordedIT extends CliFixture {

    @Test
    void serverGoneDuringTheCommand_runExits1_andLaterRunsStopUnknown() throws Exception {
        // Given a run whose command waits for a go-ahead file before it delivers
        Cli.Running running = cli.start(runArgs("while [ ! -f go ]; do sleep 0.1; done; " + LEDGER_LINE,
                "--connect-timeout", "2s"));
        await().atMost(Timing.APPEAR).until(() -> armedNode(0) != null);

        // When ZooKeeper goes away while the command runs, and the command then delivers
        zk.stop();
        Files.createFile(dir.resolve("go"));
        Cli.Result result = running.await(Timing.PROCESS);
        zk.restart();

        // Then the run exits with what the records say: armed without outcome, read as unknown
        assertThat(result.exit()).as(result.toString()).isEqualTo(1);
        assertThat(result.runJson().get("outcome").asText()).isEqualTo("sent_verified");
        assertThat(result.runJson().get("recorded").asBoolean()).isFalse();
        assertThat(result.runJson().get("reads_as").asText()).isEqualTo("send_status_unknown");
        assertThat(ledgerLines()).hasSize(1);
        Cli.Result next = run(LEDGER_LINE);
        assertThat(next.exit()).as(next.toString()).isEqualTo(11);
        assertThat(next.runJson().get("reason").asText()).isEqualTo("armed_without_outcome");
        assertThat(ledgerLines()).hasSize(1);
    }
}
