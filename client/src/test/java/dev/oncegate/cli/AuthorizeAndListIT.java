package dev.oncegate.cli;

import java.util.List;

import com.fasterxml.jackson.databind.JsonNode;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/** An operator's redelivery authorization opens exactly one new scope; {@code list} shows keys by state. */
class AuthorizeAndListIT extends CliFixture {

    @Test
    void authorizedRedelivery_deliversOnceMore_thenTheKeyIsConsumedAgain() throws Exception {
        assertThat(run(LEDGER_LINE).exit()).isEqualTo(0);

        Cli.Result auth = ops.run("authorize", "--connect", zk.connectString(), "--key", key.key(), "--after", "0",
                "--by", "ops@example", "--reason", "customer lost the file");

        assertThat(auth.exit()).as(auth.toString()).isEqualTo(0);
        String authPath = auth.stdoutJson().get("path").asText();
        assertThat(authPath).isEqualTo(key.path(NAMESPACE) + "/authorizations/after-0");
        assertThat(auth.stdoutJson().get("created").asBoolean()).isTrue();
        assertThat(auth.stdoutJson().get("status").asText()).isEqualTo("unused");
        assertThat(new String(curator.getData().forPath(authPath)))
                .as("the zkCli recipe's fields, and who ran it").startsWith("{\"v\":2,\"by\":\"ops@example\",\"reason\":\"customer lost the file\",\"actor\":{\"task\":\"oncegate\",");

        Cli.Result second = ops.run("authorize", "--connect", zk.connectString(), "--key", key.key(), "--after", "0",
                "--by", "ops@example", "--reason", "again");
        assertThat(second.exit()).as("an unused authorization exists: nothing to add, " + second).isEqualTo(0);
        assertThat(second.stdoutJson().get("created").asBoolean()).isFalse();
        assertThat(second.stdoutJson().get("reason").asText()).isEqualTo("customer lost the file");
        assertThat(curator.getChildren().forPath(key.path(NAMESPACE) + "/authorizations")).containsExactly("after-0");

        Cli.Result redelivered = run(LEDGER_LINE);
        Cli.Result repeat = run(LEDGER_LINE);

        assertThat(redelivered.exit()).as(redelivered.toString()).isEqualTo(0);
        assertThat(redelivered.runJson().get("scope").asInt()).isEqualTo(1);
        assertThat(repeat.exit()).as(repeat.toString()).isEqualTo(10);
        assertThat(ledgerLines()).hasSize(2);
        JsonNode history = ops.run("inspect", "--connect", zk.connectString(), "--key", key.key()).stdoutJson();
        assertThat(history.get("authorizations").get(0).get("used_by").asInt()).isEqualTo(1);
        assertThat(history.get("authorizations").get(0).get("status").asText()).isEqualTo("used");
    }

    @Test
    void authorize_keyNotConsumed_exits2_andWritesNothing() throws Exception {
        Cli.Result absent = ops.run("authorize", "--connect", zk.connectString(), "--key", key.key(), "--after", "0",
                "--by", "ops", "--reason", "why not");

        assertThat(absent.exit()).as(absent.toString()).isEqualTo(2);
        assertThat(curator.checkExists().forPath(key.path(NAMESPACE))).isNull();

        assertThat(run(LEDGER_LINE + "; exit 42", "--not-sent-exit", "42").exit()).isEqualTo(3);
        Cli.Result open = ops.run("authorize", "--connect", zk.connectString(), "--key", key.key(), "--after", "1",
                "--by", "ops", "--reason", "why not");

        assertThat(open.exit()).as(open.toString()).isEqualTo(2);
        assertThat(open.stderr()).contains("not consumed");
        assertThat(curator.getChildren().forPath(key.path(NAMESPACE) + "/authorizations")).isEmpty();
    }

    @Test
    void list_byState_printsOneObjectPerKey() throws Exception {
        assertThat(run(LEDGER_LINE).exit()).isEqualTo(0);

        Cli.Result sent = ops.run("list", "--connect", zk.connectString(), "--state", "sent_verified");
        Cli.Result limited = ops.run("list", "--connect", zk.connectString(), "--limit", "1");
        Cli.Result bad = ops.run("list", "--connect", zk.connectString(), "--state", "delivered");

        assertThat(sent.exit()).as(sent.toString()).isEqualTo(0);
        List<JsonNode> lines = sent.stdout().lines().map(l -> {
            try {
                return Cli.JSON.readTree(l);
            } catch (Exception e) {
                throw new AssertionError(l, e);
            }
        }).toList();
        assertThat(lines).isNotEmpty().allSatisfy(l -> assertThat(l.get("state").asText()).isEqualTo("sent_verified"));
        assertThat(lines).anySatisfy(l -> assertThat(l.get("key").asText()).isEqualTo(key.key()));
        assertThat(limited.stdout().lines()).hasSize(1);
        assertThat(bad.exit()).isEqualTo(2);
    }
}
