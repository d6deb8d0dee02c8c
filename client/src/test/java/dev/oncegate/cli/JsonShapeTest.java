package dev.oncegate.cli;

import java.time.Instant;
import java.util.List;
import java.util.Map;

import com.fasterxml.jackson.databind.JsonNode;
import dev.oncegate.Crossing;
import dev.oncegate.Decision;
import dev.oncegate.Evidence;
import dev.oncegate.FencingToken;
import dev.oncegate.KeyHistory;
import dev.oncegate.Outcome;
import dev.oncegate.StopReason;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/** The JSON shapes and exit-code mapping of SPEC §7, checked without ZooKeeper. */
class JsonShapeTest {

    @Test
    void inspect_rendersEveryDocumentedField() throws Exception {
        KeyHistory history = new KeyHistory("k", "/oncegate/keys/k", true, Map.of("provider", "slack"), "sent_verified",
                List.of(new KeyHistory.ScopeHistory(0, "sent_verified", 2, 42L, Map.of("opened", "initial"),
                        Map.of("token", 1), Map.of("outcome", "sent_verified"))),
                List.of(new KeyHistory.AuthorizationRecord("after-0", Map.of("by", "ops", "reason", "resend"), 0, -1, "unused")),
                "create /oncegate/keys/k/authorizations/after-0 '{\"by\":\"<you>\",\"reason\":\"<why>\"}'");

        JsonNode json = Cli.JSON.readTree(Json.line(InspectCommand.render(history)));

        assertThat(json.fieldNames()).toIterable()
                .containsExactly("key", "path", "exists", "record", "state", "authorize_command", "scopes", "authorizations");
        assertThat(json.get("authorize_command").asText()).startsWith("create /oncegate/keys/k/authorizations/after-0 ");
        assertThat(json.get("scopes").get(0).fieldNames()).toIterable()
                .containsExactly("scope", "state", "version", "mzxid", "data", "armed", "outcome");
        assertThat(json.get("scopes").get(0).get("mzxid").asLong()).isEqualTo(42L);
        assertThat(json.get("authorizations").get(0).fieldNames()).toIterable()
                .containsExactly("name", "after", "status", "record", "used_by");
        assertThat(json.get("authorizations").get(0).get("used_by").isNull()).isTrue();
        assertThat(json.get("authorizations").get(0).get("status").asText()).isEqualTo("unused");
    }

    @Test
    void evidence_hasPathScopeTaskHostAtDetail() throws Exception {
        Evidence e = new Evidence("/oncegate/keys/k/0/outcome", 0, "task-1", "host-a", Instant.parse("2026-01-02T03:04:05Z"), "consumed");

        JsonNode json = Cli.JSON.readTree(Json.line(Json.evidence(e)));

        assertThat(json.fieldNames()).toIterable().containsExactly("path", "scope", "task", "host", "at", "detail");
        assertThat(json.get("at").asText()).isEqualTo("2026-01-02T03:04:05Z");
    }

    @Test
    void exitCodes_followTheContract() {
        Evidence e = new Evidence("/p", 0, null, null, null, "d");
        FencingToken token = new FencingToken(1, 7);

        assertThat(ExitCode.of(new Decision.StopSent(StopReason.SENT_VERIFIED, e))).isEqualTo(10);
        assertThat(ExitCode.of(new Decision.StopUnknown(StopReason.ARMED_WITHOUT_OUTCOME, e))).isEqualTo(11);
        assertThat(ExitCode.of(new Decision.StopBusy(StopReason.EXECUTOR_ACTIVE, e))).isEqualTo(12);
        assertThat(ExitCode.of(new Decision.StopUnavailable(StopReason.ZOOKEEPER_UNREACHABLE, e))).isEqualTo(13);
        assertThat(ExitCode.of(new Crossing.Refused(new Decision.StopBusy(StopReason.FENCED, e)))).isEqualTo(12);
        assertThat(ExitCode.of(new Crossing.Refused(new Decision.StopUnavailable(StopReason.WRITE_RESULT_UNKNOWN, e)))).isEqualTo(13);
        assertThat(ExitCode.of(new Crossing.Crossed(Outcome.SENT_VERIFIED, 0, token, "exit 0", true))).isEqualTo(0);
        assertThat(ExitCode.of(new Crossing.Crossed(Outcome.SEND_STATUS_UNKNOWN, 0, token, "exit 7", true))).isEqualTo(1);
        assertThat(ExitCode.of(new Crossing.Crossed(Outcome.NOT_SENT, 0, token, "exit 42", true))).isEqualTo(3);
        assertThat(ExitCode.of(new Crossing.Crossed(Outcome.NOT_SENT, 0, token, "exit 42", false)))
                .as("an unrecorded not_sent leaves the scope armed: consumed, unknown").isEqualTo(1);
        assertThat(ExitCode.of(new Crossing.Crossed(Outcome.SENT_VERIFIED, 0, token, "exit 0", false)))
                .as("an unrecorded sent_verified leaves the scope armed too: the records say unknown").isEqualTo(1);
    }
}
