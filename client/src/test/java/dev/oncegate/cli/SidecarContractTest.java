package dev.oncegate.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.InputStream;
import java.util.HashSet;
import java.util.Iterator;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import org.junit.jupiter.api.Test;

/**
 * {@code sidecar-openapi.yaml} says what the server answers: every answer of a session that
 * touches every endpoint (proceeding, stopping, refusing) has a status the file lists for its
 * path, and exactly the fields of the schema the file names for that status.
 */
class SidecarContractTest extends SidecarFixture {

    static final String OPENAPI = "/dev/oncegate/cli/sidecar-openapi.yaml";

    @Test
    void everyAnswer_matchesTheOpenApiFile() throws Exception {
        // Given: the OpenAPI file
        JsonNode api;
        try (InputStream in = SidecarContractTest.class.getResourceAsStream(OPENAPI)) {
            assertThat(in).as(OPENAPI + " on the classpath").isNotNull();
            api = new ObjectMapper(new YAMLFactory()).readTree(in);
        }

        // When: agents use every endpoint, right and wrong
        Answer a = enter("agent-a");
        enter("agent-b");
        post("/v1/checkpoint", with(handle(a), "name", "picker"));
        Answer again = post("/v1/checkpoint", with(handle(a), "name", "picker")); // stale token: 409
        assertThat(again.status()).isEqualTo(409);
        Answer renewed = answers.get(2);
        Map<String, Object> current = Map.of("handle", a.body().get("handle").asText(), "token", renewed.body().get("token").asInt());
        post("/v1/cross", current);
        post("/v1/outcome", with(current, "outcome", "sent_verified", "evidence", "r-1"));
        post("/v1/outcome", with(current, "outcome", "sent_verified", "evidence", "r-1"));
        post("/v1/release", current); // finished: released already, 200
        post("/v1/release", Map.of("handle", "nope", "token", 1));
        post("/v1/cross", Map.of("handle", "nope", "token", 1));
        post("/v1/outcome", Map.of("handle", "nope", "token", 1, "outcome", "x"));
        post("/v1/inspect", Map.of("key", key.key()));
        post("/v1/inspect", Map.of("key", "xyz"));
        post("/v1/enter", Map.of("destination", dest, "sha256", sha256), null);
        postRaw("/v1/enter", "{", bearer);
        post("/v1/enter", Map.of("key", "a".repeat(64)));
        String other = "ab".repeat(32); // another content for this test's destination: a new key
        Answer both = post("/v1/enter-and-cross", Map.of("destination", dest, "sha256", other, "task", "agent-c"));
        post("/v1/outcome", with(handle(both), "outcome", "sent_verified", "evidence", "r-2"));
        post("/v1/enter-and-cross", Map.of("destination", dest, "sha256", other, "task", "agent-d")); // consumed
        post("/v1/enter-and-cross", Map.of("destination", "no-colon", "sha256", sha256));
        get("/healthz");
        get("/metrics");

        // Then: each answer's status and fields are the file's
        Set<String> statusesSeen = new TreeSet<>();
        for (Answer answer : answers) {
            JsonNode responses = api.at("/paths/" + answer.path().replace("/", "~1") + "/post/responses");
            if (responses.isMissingNode()) {
                responses = api.at("/paths/" + answer.path().replace("/", "~1") + "/get/responses");
            }
            String status = Integer.toString(answer.status());
            assertThat(responses.has(status)).as(answer.path() + " answered " + status + " " + answer.body()
                    + ", which the file does not list").isTrue();
            statusesSeen.add(answer.path() + " " + status);
            JsonNode schema = schemaOf(api, responses.get(status));
            if (schema == null || answer.body() == null || !schema.has("properties")) {
                continue;
            }
            assertThat(fieldNames(answer.body())).as(answer.path() + " " + status + " fields")
                    .isEqualTo(fieldNames(schema.get("properties")));
        }
        assertThat(statusesSeen).contains("/v1/enter 200", "/v1/enter 400", "/v1/enter 401", "/v1/enter 404",
                "/v1/enter-and-cross 200", "/v1/enter-and-cross 400",
                "/v1/checkpoint 200", "/v1/checkpoint 409", "/v1/cross 200", "/v1/cross 404", "/v1/outcome 200",
                "/v1/outcome 409", "/v1/release 200", "/v1/release 404", "/v1/inspect 200", "/v1/inspect 400",
                "/healthz 200", "/metrics 200");
    }

    /** The JSON schema of a response object (following $refs), or null when it has none. */
    private static JsonNode schemaOf(JsonNode api, JsonNode response) {
        JsonNode r = resolve(api, response);
        JsonNode schema = r.at("/content/application~1json/schema");
        return schema.isMissingNode() ? null : resolve(api, schema);
    }

    private static JsonNode resolve(JsonNode api, JsonNode node) {
        while (node.has("$ref")) {
            node = api.at(node.get("$ref").asText().substring(1));
        }
        return node;
    }

    private static Set<String> fieldNames(JsonNode object) {
        Set<String> names = new HashSet<>();
        for (Iterator<String> it = object.fieldNames(); it.hasNext(); ) {
            names.add(it.next());
        }
        return new TreeSet<>(names);
    }
}
