package dev.oncegate.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.time.Duration;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import dev.oncegate.Operator;
import dev.oncegate.ScopeState;
import dev.oncegate.testing.Timing;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * SIGTERM's stop ({@link Sidecar#shutdown}) keeps its promise to armed crossings: an agent that
 * delivered during the grace still reports, and its outcome is recorded as reported; new work is
 * refused. And the stop's answer, which becomes the exit code, says whether every crossing's
 * outcome was really recorded, not only whether its crossing ended.
 */
class SidecarShutdownTest extends SidecarFixture {

    /** The stop runs here, as the shutdown hook's thread would, while the test plays the agent. */
    private final ExecutorService hook = Executors.newSingleThreadExecutor();

    @AfterEach
    void stopHook() throws InterruptedException {
        hook.shutdownNow();
        assertThat(hook.awaitTermination(Timing.EVENTUALLY.toMillis(), TimeUnit.MILLISECONDS)).isTrue();
    }

    @Test
    void outcomeReportedDuringTheGrace_isRecorded_newWorkIsRefused_andTheStopSaysAllRecorded() throws Exception {
        // Given: agent A armed its crossing, and agent B holds a lease on another effect
        Answer a = post("/v1/enter-and-cross", Map.of("destination", dest, "sha256", sha256, "task", "agent-a"));
        assertThat(a.body().get("armed").asBoolean()).isTrue();
        Answer b = post("/v1/enter", Map.of("destination", dest, "sha256", "ab".repeat(32), "task", "agent-b"));
        assertThat(b.body().get("decision").asText()).isEqualTo("proceed");

        // When: SIGTERM's stop begins with a grace long enough for A to report, and the agents call meanwhile
        Future<Boolean> stop = hook.submit(() -> sidecar.shutdown(Timing.scaled(Duration.ofSeconds(40))));
        await().atMost(Timing.EVENTUALLY).until(() -> get("/healthz").body().get("status").asText().equals("stopping"));
        Answer outcome = post("/v1/outcome", with(handle(a), "outcome", "sent_verified", "evidence", "msg-7"));
        Answer enter = post("/v1/enter", Map.of("destination", dest, "sha256", "cd".repeat(32), "task", "agent-c"));
        Answer checkpoint = post("/v1/checkpoint", with(handle(b), "name", "picker"));
        // (409 while the stop itself holds B's handle to release it)
        Answer released = await().atMost(Timing.EVENTUALLY).until(() -> post("/v1/release", handle(b)),
                r -> r.status() != 409);

        // Then: A's outcome is recorded as it reported it, and the stop reports every crossing recorded
        assertThat(outcome.status()).as(outcome.text()).isEqualTo(200);
        assertThat(outcome.body().get("recorded").asBoolean()).isTrue();
        assertThat(outcome.body().get("reads_as").asText()).isEqualTo("sent_verified");
        assertThat(outcome()).contains("sent_verified").contains("msg-7").doesNotContain("SIGTERM");
        assertThat(stop.get(Timing.EVENTUALLY.toMillis(), TimeUnit.MILLISECONDS)).isTrue();
        // B only gives its lease back (the stop had released it already); new enters and checkpoints get 503
        assertThat(released.status()).as(released.text()).isEqualTo(200);
        assertThat(released.body().get("released").asBoolean()).isTrue();
        assertThat(enter.status()).isEqualTo(503);
        assertThat(enter.body().get("error").asText()).contains("stopping");
        assertThat(checkpoint.status()).isEqualTo(503);
    }

    @Test
    void crossingWhoseOutcomeIsNotRecorded_theStopSaysSo() throws Exception {
        // Given: agent A armed its crossing, and an operator reconciled the key meanwhile: the reconciliation took
        // the scope's one outcome write, so the executor's own outcome can no longer be recorded
        Answer a = post("/v1/enter-and-cross", Map.of("destination", dest, "sha256", sha256, "task", "agent-a"));
        assertThat(a.body().get("armed").asBoolean()).isTrue();
        Operator operator = Operator.builder(curator).namespace(NAMESPACE).build();
        Operator.Reconciled reconciled = operator.reconcile(key.key(), "alice", "message 42 is in the inbox");
        assertThat(reconciled.created()).isTrue();

        // When: SIGTERM's stop runs its grace without a report from A
        boolean allRecorded = sidecar.shutdown(Timing.scaled(Duration.ofSeconds(4)));

        // Then: the crossing ended (its send_status_unknown was not written), and the stop says not all were
        // recorded: exit 1
        assertThat(allRecorded).isFalse();
        assertThat(outcome()).doesNotContain("SIGTERM");
        assertThat(operator.inspect(key.key()).state()).isEqualTo(ScopeState.SENT_VERIFIED);
    }
}
