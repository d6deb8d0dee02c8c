package dev.oncegate.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;

import dev.oncegate.testing.Timing;
import org.junit.jupiter.api.Test;

/**
 * A signal is never proof of {@code not_sent}: a command that delivered and was then killed
 * reports 128+N, which no {@code --not-sent-exit} may name; it is {@code send_status_unknown},
 * and the key stays consumed.
 */
class SignalIsNoProofIT extends CliFixture {

    @Test
    void commandKilledBySigkillAfterDelivering_isUnknown_andNeverDeliveredAgain() throws Exception {
        Cli.Result killed = run(LEDGER_LINE + "; kill -9 $$", "--not-sent-exit", "125");

        assertThat(killed.exit()).as(killed.toString()).isEqualTo(1);
        assertThat(killed.runJson().get("outcome").asText()).isEqualTo("send_status_unknown");
        assertThat(killed.runJson().get("command_exit").asInt()).isEqualTo(137);
        assertThat(outcome(0)).contains("\"send_status_unknown\"");

        Cli.Result next = run(LEDGER_LINE, "--not-sent-exit", "125");
        assertThat(next.exit()).as(next.toString()).isEqualTo(11);
        assertThat(ledgerLines()).hasSize(1);
    }

    @Test
    void notSentExitWithinTheRange_stillProvesNotSent() throws Exception {
        Cli.Result notSent = run("exit 125", "--not-sent-exit", "125");

        assertThat(notSent.exit()).as(notSent.toString()).isEqualTo(3);
        assertThat(outcome(0)).contains("\"not_sent\"");
    }

    @Test
    void aSignalToRunsWholeProcessGroup_reachesOnlyRun_soWhatTheCommandThenExitsWithProvesNothing() throws Exception {
        // Given run as the leader of a process group of its own (a shell's job: Ctrl-C, a hangup and
        // `kill -- -PGID` signal the whole group), and a command that delivers, then answers SIGTERM with the
        // --not-sent-exit code (a tool's "aborted" code)
        Path launcher = Files.writeString(dir.resolve("in-its-own-group.sh"),
                "#!/bin/sh\nexec setsid " + Cli.javaCommandLine() + " \"$@\"\n");
        launcher.toFile().setExecutable(true);
        Cli grouped = new Cli(dir, Map.of(), launcher);
        Cli.Running gate = grouped.start(runArgs(LEDGER_LINE + "; trap 'exit 3' TERM; echo $$ > command.pid; sleep 30 & wait",
                "--not-sent-exit", "3"));
        Path pidFile = dir.resolve("command.pid");
        await().atMost(Timing.APPEAR).until(() -> Files.exists(pidFile) && !Files.readString(pidFile).isBlank());

        // When the whole group gets SIGTERM
        Process kill = new ProcessBuilder("kill", "-TERM", "--", "-" + gate.process().pid()).inheritIO().start();
        assertThat(kill.waitFor()).isZero();
        Cli.Result stopped = gate.await(Timing.PROCESS);

        // Then only run got it: run stopped the command itself, so its exit 3 proves nothing, and the key stays consumed
        assertThat(stopped.runJson().get("outcome").asText()).as(stopped.toString()).isEqualTo("send_status_unknown");
        assertThat(stopped.exit()).isEqualTo(1);
        Cli.Result next = run(LEDGER_LINE, "--not-sent-exit", "3");
        assertThat(next.exit()).as(next.toString()).isEqualTo(11);
        assertThat(ledgerLines()).hasSize(1);
    }
}
