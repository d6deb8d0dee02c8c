package dev.oncegate.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;
import picocli.CommandLine;
import picocli.CommandLine.Model.OptionSpec;

/**
 * Every subcommand's {@code --help}, as picocli renders it: a synopsis that shows what is
 * required (outside brackets, with the alternatives as groups), names every option or says
 * {@code [OPTIONS]}, puts {@code --} before run's COMMAND; and a footer with that subcommand's
 * own exit codes, every one of them a code the CLI really uses.
 */
class SubcommandHelpTest {

    /** Exit codes each subcommand's footer must name. */
    private static final Map<String, List<Integer>> EXIT_CODES = Map.ofEntries(
            Map.entry("init", List.of(0, 2, 13)),
            Map.entry("key", List.of(0, 2)),
            Map.entry("run", List.of(0, 1, 2, 3, 10, 11, 12, 13)),
            Map.entry("inspect", List.of(0, 2, 13)),
            Map.entry("list", List.of(0, 2, 13)),
            Map.entry("authorize", List.of(0, 2, 13)),
            Map.entry("reconcile", List.of(0, 2, 13)),
            Map.entry("gc", List.of(0, 2, 13)),
            Map.entry("acl", List.of(0, 2, 13)),
            Map.entry("server", List.of(0, 2, 13)),
            Map.entry("sidecar", List.of(0, 1, 2)),
            Map.entry("exporter", List.of(0, 2)),
            Map.entry("mcp", List.of(0, 1, 2)),
            Map.entry("doctor", List.of(0, 2, 13)),
            Map.entry("demo", List.of(0, 1, 2, 130)),
            Map.entry("help", List.of(0, 2)),
            Map.entry("generate-completion", List.of(0)));

    /** The codes the CLI exits with: ExitCode's, the demo's failure, and 130 for an interrupted demo. */
    private static final List<Integer> KNOWN_CODES = List.of(ExitCode.OK, ExitCode.SEND_STATUS_UNKNOWN, ExitCode.USAGE,
            ExitCode.NOT_SENT, ExitCode.STOP_SENT, ExitCode.STOP_UNKNOWN, ExitCode.STOP_BUSY, ExitCode.STOP_UNAVAILABLE,
            DemoCommand.FAILED, 130);

    static Stream<String> subcommands() {
        return Main.commandLine().getSubcommands().keySet().stream();
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("subcommands")
    void help_showsRequiredArgumentsInTheSynopsis_andThisSubcommandsExitCodes(String name) {
        CommandLine command = Main.commandLine().getSubcommands().get(name);
        CommandLine.Help help = command.getHelp();
        String synopsis = help.synopsis(0).replaceAll("\\s+", " ").strip();
        String footer = help.footer().replaceAll("\\s+", " ");

        assertThat(command.getUsageMessage()).contains("Usage: oncegate " + name + " ");
        for (OptionSpec option : command.getCommandSpec().options()) {
            String rendered = option.longestName() + (option.arity().max() > 0 ? "=" + option.paramLabel() : "");
            if (option.required()) {
                assertThat(synopsis).as("required " + rendered).contains(rendered).doesNotContain("[" + rendered + "]");
            } else if (!synopsis.contains("[OPTIONS]") && option.shortestName().startsWith("--")) {
                // (options with a short name are clustered, as in [-hvV])
                assertThat(synopsis).as("every option or [OPTIONS]").contains(option.longestName());
            }
        }
        assertThat(EXIT_CODES).as("a footer expectation for " + name).containsKey(name);
        assertThat(footer).as(name + "'s footer").contains("Exit codes: ");
        String codes = footer.substring(footer.indexOf("Exit codes: "));
        for (int code : EXIT_CODES.get(name)) {
            assertThat(codes).as(name + " exit " + code).containsPattern("(^|[ ;,:])" + code + " ");
        }
        Matcher named = Pattern.compile("[:;] (\\d+)[ ,]").matcher(codes);
        while (named.find()) {
            assertThat(KNOWN_CODES).as(name + " names exit " + named.group(1)).contains(Integer.parseInt(named.group(1)));
        }
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("subcommands")
    void synopsis_ofTheCommandsThatNameAnEffect_requiresOneDestinationAndTheFile(String name) {
        String synopsis = Main.commandLine().getSubcommands().get(name).getHelp().synopsis(0).replaceAll("\\s+", " ");
        String effect = "(--dest=PROVIDER:ID | --dest-name=PROVIDER:TITLE) --file=PATH";

        switch (name) {
            case "run" -> assertThat(synopsis).contains("[OPTIONS] " + effect + " -- COMMAND [ARG...]");
            case "key" -> assertThat(synopsis).contains("[OPTIONS] " + effect);
            case "inspect" -> assertThat(synopsis).contains("[OPTIONS] (--key=KEY | " + effect + ")");
            default -> assertThat(synopsis).doesNotContain("--dest");
        }
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("subcommands")
    void help_namesTheEnvironmentVariableOfEveryOptionAFleetSetsPerHost(String name) {
        CommandLine.Model.CommandSpec spec = Main.commandLine().getSubcommands().get(name).getCommandSpec();
        Map<String, String> variables = Map.of("--connect", "ONCEGATE_CONNECT", "--namespace", "ONCEGATE_NAMESPACE",
                "--task-id", "ONCEGATE_TASK_ID", "--auth", "ONCEGATE_AUTH", "--auth-file", "ONCEGATE_AUTH_FILE",
                "--state-dir", "ONCEGATE_STATE_DIR", "--zk-client-config", "ONCEGATE_ZK_CLIENT_CONFIG",
                "--verbose", "ONCEGATE_VERBOSE");
        variables.forEach((option, variable) -> {
            OptionSpec spec1 = spec.findOption(option);
            if (spec1 != null) {
                assertThat(String.join(" ", spec1.description())).as(name + " " + option).contains(variable);
            }
        });
    }
}
