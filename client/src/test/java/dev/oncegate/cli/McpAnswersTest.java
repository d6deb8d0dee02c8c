package dev.oncegate.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Instant;
import java.util.Map;

import dev.oncegate.Crossing;
import dev.oncegate.Decision;
import dev.oncegate.Evidence;
import dev.oncegate.FencingToken;
import dev.oncegate.Outcome;
import dev.oncegate.StopReason;
import org.junit.jupiter.api.Test;

/**
 * What {@code oncegate mcp} tells a model, decision by decision: an instruction that starts with
 * what to do ("proceed", "do not send") and names who delivered and when, so that a model acts on
 * the words alone.
 */
class McpAnswersTest {

    private static final String KEY = "a".repeat(64);
    private static final Instant AT = Instant.parse("2026-11-30T21:14:03Z");
    private static final Evidence BY_SIBLING = new Evidence("/oncegate/keys/aa/aa/" + KEY + "/0", 0, "report-7",
            "worker-3", AT, "scope 0");

    @Test
    void proceed_saysWhichScopeIsHeld_andThatSubmittingWaitsForCrossEffect() {
        Map<String, Object> answer = McpTools.decision(KEY, new Decision.Proceed(0, new FencingToken(1, 11)), null);

        assertThat(answer.keySet()).first().isEqualTo("instruction");
        assertThat((String) answer.get("instruction")).startsWith("proceed: you hold the lease for scope 0")
                .contains("Do not submit before cross_effect says proceed");
        assertThat(answer).containsEntry("decision", "proceed").containsEntry("token", 1).containsEntry("zxid", 11L);
    }

    @Test
    void stopSent_namesTheTaskHostAndTime_andSaysNotToSendAgain() {
        Map<String, Object> answer = McpTools.decision(KEY,
                new Decision.StopSent(StopReason.SENT_VERIFIED, BY_SIBLING), null);

        assertThat((String) answer.get("instruction")).isEqualTo("do not send: already delivered (sent_verified) by"
                + " task report-7 on worker-3 at 2026-11-30T21:14:03Z (scope 0). Do not send again; it is done.");
        assertThat(answer).containsEntry("decision", "stop_sent").containsEntry("reason", "sent_verified");
    }

    @Test
    void stopUnknown_saysItMayHaveBeenDelivered_andNotToRetry() {
        String unknown = (String) McpTools.decision(KEY,
                new Decision.StopUnknown(StopReason.SEND_STATUS_UNKNOWN, BY_SIBLING), null).get("instruction");
        String armed = (String) McpTools.decision(KEY,
                new Decision.StopUnknown(StopReason.ARMED_WITHOUT_OUTCOME, BY_SIBLING), null).get("instruction");

        assertThat(unknown).startsWith("do not send: task report-7 on worker-3 crossed the boundary")
                .contains("may already have been delivered").contains("do not retry");
        assertThat(armed).startsWith("do not send: task report-7 on worker-3 is delivering it or died while delivering")
                .contains("do not retry");
    }

    @Test
    void stopBusyAndFenced_sayNotToSendNow_andHowToLearnTheResult() {
        String busy = (String) McpTools.decision(KEY,
                new Decision.StopBusy(StopReason.EXECUTOR_ACTIVE, BY_SIBLING), null).get("instruction");
        String fenced = (String) McpTools.crossing(KEY, new McpEffect.CrossAnswer(null,
                new Decision.StopBusy(StopReason.FENCED, BY_SIBLING))).get("instruction");

        assertThat(busy).startsWith("do not send now: task report-7 on worker-3 is working on this effect")
                .contains("wait_seconds");
        assertThat(fenced).startsWith("do not submit: your lease was taken over by task report-7");
    }

    @Test
    void stopUnavailable_failsClosed_withTheReason() {
        String answer = (String) McpTools.decision(KEY, new Decision.StopUnavailable(StopReason.ZOOKEEPER_UNREACHABLE,
                new Evidence("/oncegate", -1, null, null, null, "no connection within 15s")), null).get("instruction");

        assertThat(answer).startsWith("do not send: the shared state could not be established (zookeeper_unreachable:"
                + " no connection within 15s)").contains("Fail closed");
    }

    @Test
    void anOutcomeThatCouldNotBeWritten_readsAsUnknown_andSaysNotToDeliverAgain() {
        Map<String, Object> answer = McpTools.recorded(KEY,
                new Crossing.Crossed(Outcome.SENT_VERIFIED, 0, new FencingToken(2, 12), "message 42", false));

        assertThat(answer).containsEntry("recorded", false).containsEntry("reads_as", "send_status_unknown");
        assertThat((String) answer.get("instruction")).contains("stays armed").contains("Do not deliver this effect again");
    }
}
