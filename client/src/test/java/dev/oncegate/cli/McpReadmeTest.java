package dev.oncegate.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.oncegate.deploy.RepoFiles;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;

/**
 * The README's "Agents over MCP" configuration is what an agent runtime will be given verbatim:
 * it must parse, name the launcher the distribution installs, start the {@code mcp} subcommand
 * with options it accepts, and set only variables the CLI reads.
 */
class McpReadmeTest {

    @Test
    void agentsOverMcpJson_parses_andStartsTheMcpSubcommandOfTheInstalledLauncher() throws Exception {
        JsonNode server = new ObjectMapper().readTree(readmeJson()).get("mcpServers").get("oncegate");

        assertThat(server.get("command").asText()).isEqualTo("oncegate");
        Path launcher = RepoFiles.path("client/src/dist/bin/oncegate");
        assertThat(Files.isExecutable(launcher)).as(launcher + " is what the distribution's bin/oncegate is").isTrue();

        List<String> args = new ArrayList<>();
        server.get("args").forEach(a -> args.add(a.asText()));
        assertThat(args).first().isEqualTo("mcp");
        CommandLine.ParseResult parsed = Main.commandLine().parseArgs(args.toArray(String[]::new));
        assertThat(parsed.subcommand().commandSpec().name()).isEqualTo("mcp");

        String help = Main.commandLine().getSubcommands().get("mcp").getUsageMessage();
        server.get("env").fieldNames().forEachRemaining(variable ->
                assertThat(help).as("mcp --help names " + variable).contains("$" + variable));
    }

    /** The first ```json block of the README's "Agents over MCP" section. */
    private static String readmeJson() {
        String readme = RepoFiles.read("README.md");
        int section = readme.indexOf("### Agents over MCP");
        assertThat(section).as("README section Agents over MCP").isNotNegative();
        Matcher block = Pattern.compile("```json\n(.*?)```", Pattern.DOTALL).matcher(readme.substring(section));
        assertThat(block.find()).as("a ```json block in Agents over MCP").isTrue();
        return block.group(1);
    }
}
