package dev.oncegate.cli;

import java.time.Instant;
import java.util.List;
import java.util.Map;

import com.fasterxml.jackson.databind.JsonNode;
import dev.oncegate.Crossing;
import dev.oncegate.ScopeState;
import dev.oncegate.Actor;
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
        Instant at = Instant.parse("2026-01-02T03:04:05Z");
        Actor actor = new Actor("task-1", "host-a", 42, "1f", "0011223344556677");
        FencingToken token = new FencingToken(2, 42L);
        KeyHistory history = new KeyHistory("k", "/oncegate/keys/k", true,
                new KeyHistory.KeyRecord("slack", "stable", "C1", "ab", at),
                List.of(new KeyHistory.Scope(0, "/oncegate/keys/k/0", ScopeState.SENT_VERIFIED, 2, 42L, "initial", at,
                        new KeyHistory.Lease(actor, "/oncegate/keys/k/0/latch/n", at, new KeyHistory.Takeover("lapsed", null)),
                        new KeyHistory.Armed(actor, token, List.of("picker"), at),
                        new KeyHistory.OutcomeRecord(Outcome.SENT_VERIFIED, "exit 0", actor, token, at), null, 43L, at, 1)),
                List.of(new KeyHistory.Authorization("after-0", "/oncegate/keys/k/authorizations/after-0", 0,
                        KeyHistory.AuthorizationStatus.UNUSED, "ops", "resend", at, null, -1)),
                List.of(new KeyHistory.Unreadable("/oncegate/keys/k/1", new byte[] {(byte) 0xff, 'x'}, "not UTF-8", "fix it")),
                "a new attempt would stop sent",
                new Decision.StopSent(StopReason.SENT_VERIFIED, new Evidence("/oncegate/keys/k/0", 0, null, null, null, "sent_verified")),
                "create /oncegate/keys/k/authorizations/after-0 '{\"by\":\"<you>\",\"reason\":\"<why>\"}'", "g-1", 40L);

        JsonNode json = Cli.JSON.readTree(Json.line(Render.history(history)));

        assertThat(json.fieldNames()).toIterable().containsExactly("key", "path", "exists", "state", "readable",
                "next_attempt", "authorize_command", "genesis", "zxid", "record", "scopes", "authorizations", "unreadable");
        assertThat(json.get("genesis").asText()).isEqualTo("g-1");
        assertThat(json.get("next_attempt").asText())
                .isEqualTo("a new attempt would stop sent (`oncegate run` would exit 10.)");
        assertThat(json.get("zxid").asLong()).isEqualTo(40L);
        assertThat(json.get("authorize_command").asText()).startsWith("create /oncegate/keys/k/authorizations/after-0 ");
        JsonNode scope = json.get("scopes").get(0);
        assertThat(scope.fieldNames()).toIterable().containsExactly("scope", "path", "state", "version", "mzxid", "opened",
                "opened_at", "lease", "armed", "outcome", "outcome_writes", "reconciliation", "armed_zxid", "recorded_at");
        assertThat(scope.get("outcome_writes").asInt()).isEqualTo(1);
        assertThat(scope.get("armed_zxid").asLong()).isEqualTo(43L);
        assertThat(scope.get("mzxid").asLong()).isEqualTo(42L);
        assertThat(scope.get("armed").get("zxid").asLong()).as("zxids are decimal everywhere").isEqualTo(42L);
        assertThat(scope.get("lease").get("expires").asText()).as("times are ISO-8601").isEqualTo("2026-01-02T03:04:05Z");
        assertThat(scope.get("lease").get("holder").fieldNames()).toIterable()
                .containsExactly("task", "host", "pid", "session", "attempt");
        assertThat(json.get("authorizations").get(0).fieldNames()).toIterable()
                .containsExactly("name", "path", "after", "status", "by", "reason", "at", "actor", "used_by");
        assertThat(json.get("authorizations").get(0).get("used_by").isNull()).isTrue();
        assertThat(json.get("authorizations").get(0).get("status").asText()).isEqualTo("unused");
        JsonNode unreadable = json.get("unreadable").get(0);
        assertThat(unreadable.get("raw").isNull()).as("not UTF-8: shown as base64").isTrue();
        assertThat(unreadable.get("raw_base64").asText()).isEqualTo("/3g=");
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
