package dev.oncegate.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Map;

import org.junit.jupiter.api.Test;

/**
 * {@code POST /v1/enter-and-cross}, for an agent with no checkpoint: the same library calls as
 * enter then cross (one gate, the arming only after a proceed), in one round trip. A stop arms
 * nothing and returns no handle; a proceed arms and returns the handle the outcome needs.
 */
class EnterAndCrossInOneCallTest extends SidecarFixture {

    private Answer enterAndCross(String task) {
        return post("/v1/enter-and-cross", Map.of("destination", dest, "sha256", sha256, "task", task));
    }

    @Test
    void newKey_armsInOneCall_andTheOutcomeIsRecorded() throws Exception {
        // When: an agent enters and crosses in one call, then reports
        Answer armed = enterAndCross("agent-a");
        Answer outcome = post("/v1/outcome", with(handle(armed), "outcome", "sent_verified", "evidence", "msg-7"));

        // Then: it proceeded and was armed with the library's idempotency key; the outcome is on record
        assertThat(armed.status()).isEqualTo(200);
        assertThat(armed.body().get("decision").asText()).isEqualTo("proceed");
        assertThat(armed.body().get("armed").asBoolean()).isTrue();
        assertThat(armed.body().get("handle").isTextual()).isTrue();
        assertThat(armed.body().get("idempotency_key").asText()).hasSize(32);
        assertThat(armed.body().get("scope").asInt()).isZero();
        assertThat(outcome.status()).isEqualTo(200);
        assertThat(outcome.body().get("reads_as").asText()).isEqualTo("sent_verified");
        assertThat(znode("/0/armed/outcome")).contains("sent_verified").contains("msg-7").contains("agent-a");
    }

    @Test
    void consumedKey_stopsWithoutArming_andWithoutAHandle() throws Exception {
        // Given: agent A delivered the effect
        Answer a = enterAndCross("agent-a");
        post("/v1/outcome", with(handle(a), "outcome", "sent_verified", "evidence", "msg-8"));

        // When: agent B asks to enter and cross the same effect
        Answer b = enterAndCross("agent-b");

        // Then: B stops on A's record: not armed, no handle, no idempotency key
        assertThat(b.status()).isEqualTo(200);
        assertThat(b.body().get("decision").asText()).isEqualTo("stop_sent");
        assertThat(b.body().get("armed").asBoolean()).isFalse();
        assertThat(b.body().get("handle").isNull()).isTrue();
        assertThat(b.body().get("idempotency_key").isNull()).isTrue();
        assertThat(b.body().get("evidence").get("task").asText()).isEqualTo("agent-a");
    }

    @Test
    void armedHandle_refusesCheckpointAndRelease() {
        // Given: an agent armed in one call
        Answer armed = enterAndCross("agent-a");

        // When: it tries a checkpoint and a release
        Answer checkpoint = post("/v1/checkpoint", with(handle(armed), "name", "picker"));
        Answer release = post("/v1/release", handle(armed));

        // Then: both are refused (409): the scope is armed, only the outcome is left
        assertThat(checkpoint.status()).isEqualTo(409);
        assertThat(release.status()).isEqualTo(409);
        assertThat(post("/v1/outcome", with(handle(armed), "outcome", "send_status_unknown")).status()).isEqualTo(200);
    }

    @Test
    void badInput_400NamingTheField_andNothingWritten() throws Exception {
        // When: the destination is malformed
        Answer bad = post("/v1/enter-and-cross", Map.of("destination", "no-colon", "sha256", sha256));

        // Then: 400 naming destination; no key was created
        assertThat(bad.status()).isEqualTo(400);
        assertThat(bad.body().get("field").asText()).isEqualTo("destination");
        assertThat(keyExists()).isFalse();
    }
}
