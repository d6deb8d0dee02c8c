package dev.oncegate.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Map;

import org.junit.jupiter.api.Test;

/**
 * Whatever the sidecar refuses, it refuses before writing anything, and its answer names the field.
 */
class SidecarRefusalsTest extends SidecarFixture {

    @Test
    void noBearerOrWrongBearer_401_andNothingWritten() throws Exception {
        // When: an enter without the token, and one with another token
        Answer none = post("/v1/enter", Map.of("destination", dest, "sha256", sha256), null);
        Answer wrong = post("/v1/enter", Map.of("destination", dest, "sha256", sha256), "not-the-token");

        // Then: 401 naming Authorization; the key was never created
        assertThat(none.status()).isEqualTo(401);
        assertThat(wrong.status()).isEqualTo(401);
        assertThat(wrong.body().get("field").asText()).isEqualTo("Authorization");
        assertThat(keyExists()).isFalse();
    }

    @Test
    void malformedBodies_400_namingTheField_andNothingWritten() throws Exception {
        assertField(postRaw("/v1/enter", "{not json", bearer), 400, "body");
        assertField(postRaw("/v1/enter", "[1]", bearer), 400, "body");
        assertField(post("/v1/enter", Map.of("destination", dest, "sha256", sha256, "colour", "red")), 400, "colour");
        assertField(post("/v1/enter", Map.of("destination", "no-colon", "sha256", sha256)), 400, "destination");
        assertField(post("/v1/enter", Map.of("destination", dest, "sha256", "abc")), 400, "sha256");
        assertField(post("/v1/enter", Map.of("destination", dest)), 400, "sha256");
        assertField(post("/v1/enter", Map.of("destination", dest, "sha256", sha256, "key", "0".repeat(64))), 400, "key");
        assertField(post("/v1/enter", Map.of("destination", dest, "sha256", sha256, "wait_ms", -1)), 400, "wait_ms");
        assertField(post("/v1/enter", Map.of("destination", dest, "sha256", sha256, "task", "")), 400, "task");
        assertThat(keyExists()).isFalse();
    }

    @Test
    void unknownHandleOrStaleToken_refused_andTheLeaseStaysWithItsHolder() throws Exception {
        // Given: agent A proceeds
        Answer a = enter("agent-a");
        int token = a.body().get("token").asInt();

        // When: calls name an unknown handle, or A's handle with another token
        assertField(post("/v1/cross", Map.of("handle", "ffff", "token", token)), 404, "handle");
        assertField(post("/v1/cross", with(handle(a), "token", token + 1)), 409, "token");
        assertField(post("/v1/checkpoint", with(handle(a), "token", token + 1, "name", "x")), 409, "token");
        assertField(post("/v1/cross", Map.of("handle", a.body().get("handle").asText())), 400, "token");

        // Then: nothing was armed, and A still crosses with its own token
        assertThat(znode("/0/armed")).isNull();
        assertThat(post("/v1/cross", handle(a)).body().get("armed").asBoolean()).isTrue();
    }

    @Test
    void badOrSecondOutcome_refused_andTheFirstStands() throws Exception {
        // Given: agent A crossed
        Answer a = enter("agent-a");
        post("/v1/cross", handle(a));

        // When: a not_sent without evidence, an unknown outcome, then a real one and a second one
        assertField(post("/v1/outcome", with(handle(a), "outcome", "not_sent")), 400, "evidence");
        assertField(post("/v1/outcome", with(handle(a), "outcome", "delivered")), 400, "outcome");
        assertThat(post("/v1/outcome", with(handle(a), "outcome", "sent_verified", "evidence", "r-1")).status())
                .isEqualTo(200);
        Answer second = post("/v1/outcome", with(handle(a), "outcome", "not_sent", "evidence", "oops"));

        // Then: the second is refused and the recorded outcome is the first
        assertThat(second.status()).isEqualTo(409);
        assertThat(znode("/0/armed/outcome")).contains("sent_verified").doesNotContain("oops");
    }

    @Test
    void outcomeBeforeCrossing_refused_andNothingArmed() throws Exception {
        Answer a = enter("agent-a");
        assertField(post("/v1/outcome", with(handle(a), "outcome", "sent_verified")), 409, "handle");
        assertThat(znode("/0/armed")).isNull();
    }

    private static void assertField(Answer answer, int status, String field) {
        assertThat(answer.status()).as(answer.body().toString()).isEqualTo(status);
        assertThat(answer.body().get("field").asText()).as(answer.body().toString()).isEqualTo(field);
    }
}
