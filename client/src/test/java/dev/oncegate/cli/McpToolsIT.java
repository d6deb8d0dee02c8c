package dev.oncegate.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.io.InputStream;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import com.fasterxml.jackson.databind.JsonNode;
import io.modelcontextprotocol.spec.McpSchema;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The tools that {@code oncegate mcp} offers a model, as tools/list gives them, pinned by
 * {@code mcp-tools.json}: their names in order, their input schemas exactly, the phrases of their
 * descriptions that make a model use them right, and which of them only read. A change to any of
 * them changes what agents do: make it here on purpose, with the JSON.
 */
class McpToolsIT extends CliFixture {

    @AfterEach
    void endEverySession() {
        McpAgent.closeAll();
    }

    @Test
    void toolsList_matchesThePinnedNamesSchemasAndDescriptionPhrases() throws IOException {
        JsonNode pinned = pinned();
        McpAgent agent = McpAgent.start(dir, zk.connectString(), "schema-reader");

        List<McpSchema.Tool> tools = agent.tools();

        List<String> names = new ArrayList<>();
        pinned.get("tools").forEach(t -> names.add(t.get("name").asText()));
        assertThat(tools).extracting(McpSchema.Tool::name).containsExactlyElementsOf(names);
        for (JsonNode expected : pinned.get("tools")) {
            McpSchema.Tool tool = tools.stream().filter(t -> t.name().equals(expected.get("name").asText())).findFirst()
                    .orElseThrow();
            JsonNode schema = McpAgent.JSON.valueToTree(tool.inputSchema());
            assertThat(schema).as(tool.name() + "'s input schema, now:\n" + schema).isEqualTo(expected.get("inputSchema"));
            for (JsonNode phrase : expected.get("phrases")) {
                assertThat(tool.description()).as(tool.name() + "'s description").contains(phrase.asText());
            }
            assertThat(tool.annotations().readOnlyHint()).as(tool.name() + " only reads")
                    .isEqualTo(expected.get("readOnly").asBoolean());
        }
    }

    @Test
    void effectKey_answersExactlyWhatOncegateKeyPrints() {
        McpAgent agent = McpAgent.start(dir, zk.connectString(), "key-reader");

        JsonNode answer = agent.call("effect_key", Map.of("destination", dest, "file", content.toString()));
        Cli.Result printed = cli.run("key", "--dest", dest, "--file", content.toString());

        assertThat(printed.exit()).as(printed.toString()).isZero();
        assertThat(answer).isEqualTo(printed.stdoutJson());
        assertThat(agent.call("effect_key", Map.of("destination", dest, "sha256", key.sha256()))).isEqualTo(answer);
    }

    @Test
    void badInput_isAnErrorAnswerNamingTheField_andWritesNothing() throws Exception {
        McpAgent agent = McpAgent.start(dir, zk.connectString(), "sloppy");

        McpSchema.CallToolResult both = agent.callRaw("check_effect",
                Map.of("destination", dest, "file", content.toString(), "sha256", key.sha256()));
        McpSchema.CallToolResult unheld = agent.callRaw("cross_effect", Map.of("key", key.key()));

        assertThat(both.isError()).isTrue();
        assertThat(McpAgent.answer(both).get("instruction").asText()).contains("file, sha256: give exactly one");
        assertThat(unheld.isError()).isTrue();
        assertThat(McpAgent.answer(unheld).get("instruction").asText()).contains("call check_effect first");
        assertThat(curator.checkExists().forPath(key.path(NAMESPACE))).isNull();
    }

    @Test
    void argumentsTheSchemaRefuses_areAnsweredAsEveryAnswerIs_oneJsonObjectWhoseInstructionNamesTheField()
            throws Exception {
        McpAgent agent = McpAgent.start(dir, zk.connectString(), "sloppy");
        Map<String, Map<String, Object>> calls = new java.util.LinkedHashMap<>();
        calls.put("destination", Map.of("destination", 5, "sha256", key.sha256()));
        calls.put("bogus", Map.of("destination", dest, "sha256", key.sha256(), "bogus", 1));
        calls.put("key", Map.of("key", "zz"));
        calls.put("identity", Map.of("destination", dest, "sha256", key.sha256(), "identity", "nickname"));

        for (Map.Entry<String, Map<String, Object>> call : calls.entrySet()) {
            McpSchema.CallToolResult refused = agent.callRaw("check_effect", call.getValue());
            assertThat(refused.isError()).as(call.getKey()).isTrue();
            JsonNode answer = McpAgent.answer(refused);
            assertThat(answer.get("error").asBoolean()).as(answer.toString()).isTrue();
            assertThat(answer.get("instruction").asText()).as(call.getKey())
                    .startsWith("check_effect: bad input: ").contains(call.getKey()).endsWith("correct the arguments.");
        }
        McpSchema.CallToolResult long_ = agent.callRaw("record_outcome",
                Map.of("key", key.key(), "outcome", "sent_verified", "evidence", "x".repeat(McpTools.MAX_EVIDENCE + 1)));
        assertThat(McpAgent.answer(long_).get("instruction").asText()).startsWith("record_outcome: bad input: ")
                .contains("evidence");
        assertThat(curator.checkExists().forPath(key.path(NAMESPACE))).isNull();
    }

    private static JsonNode pinned() throws IOException {
        try (InputStream in = McpToolsIT.class.getResourceAsStream("/mcp-tools.json")) {
            assertThat(in).as("client/src/test/resources/mcp-tools.json").isNotNull();
            return McpAgent.JSON.readTree(in);
        }
    }
}
