package dev.oncegate.cli;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

import com.fasterxml.jackson.databind.JsonNode;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/** {@code oncegate run}: each outcome of the wrapped command maps to its exit code, and a consumed key stays consumed. */
class RunExitCodesIT extends CliFixture {

    @Test
    void delivered_thenRepeated_exits0Then10_andDeliversOnce() throws Exception {
        Cli.Result first = run(LEDGER_LINE + "; echo payload-on-stdout");

        assertThat(first.exit()).as(first.toString()).isEqualTo(0);
        assertThat(first.stdout()).as("stdout belongs to the command").isEqualTo("payload-on-stdout\n");
        JsonNode result = first.runJson();
        assertThat(result.get("decision").asText()).isEqualTo("proceed");
        assertThat(result.get("outcome").asText()).isEqualTo("sent_verified");
        assertThat(result.get("recorded").asBoolean()).isTrue();
        assertThat(result.get("command_exit").asInt()).isEqualTo(0);
        assertThat(result.get("key").asText()).isEqualTo(key.key());
        assertThat(result.get("scope").asInt()).isEqualTo(0);
        String token = result.get("token").asText();
        assertThat(ledgerLines()).containsExactly(key.key() + " 0 " + token);
        assertThat(outcome(0)).contains("\"sent_verified\"");

        Cli.Result repeat = run(LEDGER_LINE);

        assertThat(repeat.exit()).as(repeat.toString()).isEqualTo(10);
        assertThat(repeat.runJson().get("decision").asText()).isEqualTo("stop_sent");
        assertThat(repeat.runJson().get("evidence").get("path").asText()).isEqualTo(key.path(NAMESPACE) + "/0/armed/outcome");
        assertThat(ledgerLines()).hasSize(1);
    }

    @Test
    void commandFails_thenRepeated_exits1Then11_andTheCommandRanOnce() throws Exception {
        Cli.Result failed = run(LEDGER_LINE + "; exit 7");

        assertThat(failed.exit()).as(failed.toString()).isEqualTo(1);
        assertThat(failed.runJson().get("outcome").asText()).isEqualTo("send_status_unknown");
        assertThat(failed.runJson().get("command_exit").asInt()).isEqualTo(7);

        Cli.Result repeat = run(LEDGER_LINE);

        assertThat(repeat.exit()).as(repeat.toString()).isEqualTo(11);
        assertThat(repeat.runJson().get("decision").asText()).isEqualTo("stop_unknown");
        assertThat(ledgerLines()).hasSize(1);
        assertThat(outcome(0)).contains("\"send_status_unknown\"");
    }

    @Test
    void provenNotSent_thenSucceeding_exits3Then0_inANewScope() throws Exception {
        Cli.Result notSent = run(LEDGER_LINE + "; exit 42", "--not-sent-exit", "42");

        assertThat(notSent.exit()).as(notSent.toString()).isEqualTo(3);
        assertThat(notSent.runJson().get("outcome").asText()).isEqualTo("not_sent");

        Cli.Result delivered = run(LEDGER_LINE, "--not-sent-exit", "42");

        assertThat(delivered.exit()).as(delivered.toString()).isEqualTo(0);
        assertThat(delivered.runJson().get("scope").asInt()).isEqualTo(1);
        assertThat(ledgerLines()).hasSize(2);
        assertThat(ledgerLines().get(0)).startsWith(key.key() + " 0 ");
        assertThat(ledgerLines().get(1)).startsWith(key.key() + " 1 ");

        Cli.Result inspect = ops.run("inspect", "--connect", zk.connectString(), "--key", key.key());

        assertThat(inspect.exit()).as(inspect.toString()).isEqualTo(0);
        JsonNode history = inspect.stdoutJson();
        assertThat(history.get("exists").asBoolean()).isTrue();
        assertThat(history.get("state").asText()).isEqualTo("sent_verified");
        assertThat(history.get("scopes")).hasSize(2);
        assertThat(history.get("scopes").get(0).get("state").asText()).isEqualTo("not_sent");
        assertThat(history.get("scopes").get(1).get("state").asText()).isEqualTo("sent_verified");
        assertThat(history.get("scopes").get(1).get("outcome").get("outcome").asText()).isEqualTo("sent_verified");
    }

    /**
     * COMMAND's arguments are its own, byte for byte: picocli would read an argument that starts
     * with {@code @} as an argument file and put the file's lines in its place, so that
     * {@code curl -d @body.json} sent what the file holds as words of the command line.
     */
    @Test
    void commandArguments_reachTheCommandVerbatim_anAtSignIncluded() throws Exception {
        Path body = Files.writeString(dir.resolve("body.json"), "not-these-words\n");
        List<String> args = new ArrayList<>(List.of(runArgs("printf '%s\\n' \"$@\" > argv; " + LEDGER_LINE)));
        args.addAll(List.of("sh", "@" + body, "-d", "@body.json", "@", "@@x"));

        Cli.Result result = cli.run(args.toArray(String[]::new));

        assertThat(result.exit()).as(result.toString()).isEqualTo(0);
        assertThat(Files.readAllLines(dir.resolve("argv"), StandardCharsets.UTF_8))
                .containsExactly("@" + body, "-d", "@body.json", "@", "@@x");
        assertThat(ledgerLines()).hasSize(1);
    }

    @Test
    void commandCannotStart_exits3_andTheKeyStaysFree() throws Exception {
        Cli.Result missing = cli.run("run", "--connect", zk.connectString(), "--dest", dest, "--file", content.toString(),
                "--", dir.resolve("no-such-command").toString());

        assertThat(missing.exit()).as(missing.toString()).isEqualTo(3);
        assertThat(missing.runJson().get("outcome").asText()).isEqualTo("not_sent");
        assertThat(missing.runJson().get("command_exit").isNull()).isTrue();

        Cli.Result delivered = run(LEDGER_LINE);

        assertThat(delivered.exit()).as(delivered.toString()).isEqualTo(0);
        assertThat(ledgerLines()).containsExactly(key.key() + " 1 " + delivered.runJson().get("token").asText());
    }

    @Test
    void commandEnvironment_carriesKeyScopeAndFencingToken() throws Exception {
        Cli.Result result = run("echo \"$ONCEGATE_KEY|$ONCEGATE_SCOPE|$ONCEGATE_FENCING_TOKEN|$ONCEGATE_FENCING_ZXID\"");

        assertThat(result.exit()).as(result.toString()).isEqualTo(0);
        JsonNode json = result.runJson();
        assertThat(result.stdout().strip()).isEqualTo(key.key() + "|0|" + json.get("token").asInt() + "|"
                + json.get("zxid").asLong());
        assertThat(json.get("zxid").asLong()).isPositive();
    }

    @Test
    void inspect_unknownKey_exits0WithExistsFalse() {
        Cli.Result inspect = ops.run("inspect", "--connect", zk.connectString(), "--dest", dest, "--file", content.toString());

        assertThat(inspect.exit()).as(inspect.toString()).isEqualTo(0);
        assertThat(inspect.stdoutJson().get("exists").asBoolean()).isFalse();
        assertThat(inspect.stdoutJson().get("path").asText()).isEqualTo(key.path(NAMESPACE));
    }
}
