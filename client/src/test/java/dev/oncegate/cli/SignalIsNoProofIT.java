package dev.oncegate.cli;

import static org.assertj.core.api.Assertions.assertThat;

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
}
