package dev.oncegate.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;

import dev.oncegate.Destination;
import dev.oncegate.EffectKey;
import dev.oncegate.IdentityKind;
import dev.oncegate.testing.Timing;
import org.junit.jupiter.api.Test;

/**
 * An enter-and-cross that got its decision long after its request was read (queued behind enters
 * that wait, or waiting itself past what it asked for) must not arm: its agent may have given up
 * (its HTTP call timed out, its process died), and a scope armed for nobody is consumed for good
 * ({@code --outcome-timeout} records {@code send_status_unknown}). It releases the lease and answers
 * 503 ("enter again"); an agent still there enters again and arms then.
 */
class EnterAndCrossLateTest extends SidecarFixture {

    @Override
    Sidecar.Settings settings() {
        // One request thread and one enter thread, so that a waiting enter queues the next one; a short lateness bound.
        return new Sidecar.Settings("sidecar-test", null, Duration.ofSeconds(60), Duration.ofMinutes(5), 1, 16,
                Duration.ofMillis(500));
    }

    @Test
    void anEnterAndCrossQueuedPastItsBound_armsNothing_releasesTheLease_andAnswers503() throws Exception {
        // Given another key held by agent A, and agent W waiting 3 s for it on the one enter thread
        String otherSha = EffectKey.of(Destination.parse(IdentityKind.STABLE, dest),
                ("other " + UUID.randomUUID()).getBytes(StandardCharsets.UTF_8)).sha256();
        Answer a = post("/v1/enter", Map.of("destination", dest, "sha256", otherSha, "task", "agent-a"));
        assertThat(a.body().get("decision").asText()).isEqualTo("proceed");
        CompletableFuture<Answer> w = CompletableFuture.supplyAsync(() -> post("/v1/enter",
                Map.of("destination", dest, "sha256", otherSha, "task", "agent-w", "wait_ms", Timing.scaled(3_000).toMillis())));
        await().atMost(Timing.EVENTUALLY).until(() -> sidecar.entersRunning() == 1); // W's enter holds the thread

        // When agent X asks to enter-and-cross this test's free key, with no wait, while W's enter holds the thread
        Answer x = post("/v1/enter-and-cross", Map.of("destination", dest, "sha256", sha256, "task", "agent-x"));

        // Then X's enter ran only after W's wait: it arms nothing, releases the lease, and says to enter again
        assertThat(w.get().body().get("decision").asText()).isEqualTo("stop_busy");
        assertThat(x.status()).as(x.text()).isEqualTo(503);
        assertThat(x.text()).contains("enter again");
        assertThat(znode("/0/armed")).isNull();
        // and an agent still there that enters again proceeds at once, and arms
        Answer again = post("/v1/enter-and-cross", Map.of("destination", dest, "sha256", sha256, "task", "agent-x"));
        assertThat(again.body().get("armed").asBoolean()).as(again.text()).isTrue();
        assertThat(znode("/0/armed")).isNotNull();
    }

    @Test
    void anEnterAndCrossAnsweredInTime_armsAsBefore() throws Exception {
        // Given nobody else on the key; When an agent enters and crosses in one call
        Answer x = post("/v1/enter-and-cross", Map.of("destination", dest, "sha256", sha256, "task", "agent-x"));

        // Then it is armed at once
        assertThat(x.body().get("armed").asBoolean()).as(x.text()).isTrue();
        assertThat(znode("/0/armed")).isNotNull();
    }
}
