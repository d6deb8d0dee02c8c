package dev.oncegate.cli;

import java.nio.file.Files;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Bad input is refused with exit 2 and a message naming what is wrong, before anything touches
 * ZooKeeper: after each case the namespace still has no keys, and the command never ran. In this
 * JVM, through {@link Main#run}: parsing needs no process of its own (the real jar's exit 2 is
 * checked by the *IT tests, e.g. {@code MetricsTextfileIT} and {@code DemoIT}).
 */
class BadInputTest extends CliFixture {

    /** Placeholders for the fixture's content file and a file that does not exist, absolute ({@link #absolute}). */
    private static final String REPORT = "{report}";
    private static final String MISSING = "{missing}";

    static Stream<Arguments> badRuns() {
        Stream<Arguments> named = Stream.of(
                Arguments.of("missing file", List.of("--dest", "slack:C1", "--file", MISSING), "--file"),
                Arguments.of("empty id", List.of("--dest", "slack:", "--file", REPORT), "identifier must not be empty"),
                Arguments.of("no colon", List.of("--dest", "slack", "--file", REPORT), "PROVIDER:ID"),
                Arguments.of("bad provider", List.of("--dest", "Slack:C1", "--file", REPORT), "provider"),
                Arguments.of("both dests", List.of("--dest", "slack:C1", "--dest-name", "slack:#general", "--file", REPORT),
                        "mutually exclusive"),
                Arguments.of("no dest", List.of("--file", REPORT), "--dest"),
                Arguments.of("no file", List.of("--dest", "slack:C1"), "--file"),
                Arguments.of("unknown flag", List.of("--dest", "slack:C1", "--file", REPORT, "--frobnicate"), "--frobnicate"),
                withOption("bad --wait", "--wait", "soon", "--wait"),
                withOption("negative --wait", "--wait", "-1s", "--wait"),
                withOption("bad --timeout", "--timeout", "5x", "--timeout"),
                withOption("empty --task-id", "--task-id", "", "--task-id"),
                withOption("bad namespace", "--namespace", "oncegate", "namespace"),
                withOption("bad --connect-timeout", "--connect-timeout", "x", "--connect-timeout"),
                withOption("zero --shutdown-grace", "--shutdown-grace", "0s", "--shutdown-grace"),
                withOption("too long --shutdown-grace", "--shutdown-grace", "2h", "--shutdown-grace"));
        // 0 and above 125: no exit code a command chooses; 126/127: the shell could not run the command
        Stream<Arguments> notExitCodes = Stream.of("0", "256", "126", "127", "255")
                .map(code -> withOption("--not-sent-exit " + code, "--not-sent-exit", code, "--not-sent-exit"));
        // 128+N: killed by signal N (137: SIGKILL, 143: SIGTERM), which never proves anything
        Stream<Arguments> signals = Stream.of("137", "143")
                .map(code -> withOption("signal --not-sent-exit " + code, "--not-sent-exit", code, "signal"));
        return Stream.of(named, notExitCodes, signals).flatMap(cases -> cases);
    }

    /** A run whose effect is well named, with {@code option value} the one bad input; the message names {@code named}. */
    private static Arguments withOption(String name, String option, String value, String named) {
        return Arguments.of(name, List.of("--dest", "slack:C1", "--file", REPORT, option, value), named);
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("badRuns")
    void badRun_exits2_namesTheProblem_writesNothing_runsNothing(String name, List<String> options, String named) throws Exception {
        List<String> args = new ArrayList<>(List.of("run", "--connect", zk.connectString()));
        args.addAll(absolute(options));
        args.addAll(List.of("--", "sh", "-c", "touch " + dir.resolve("marker")));

        Cli.Result result = ops.run(args.toArray(String[]::new));

        assertThat(result.exit()).as(result.toString()).isEqualTo(2);
        assertThat(result.stderr()).as(result.toString()).contains(named);
        assertThat(result.stdout()).isEmpty();
        assertThat(Files.exists(dir.resolve("marker"))).isFalse();
    }

    @Test
    void malformedConnectString_exits2_beforeConnecting() throws Exception {
        Cli.Result result = ops.run("run", "--connect", "localhost:abc", "--dest", dest, "--file", content.toString(),
                "--", "sh", "-c", "touch " + dir.resolve("marker"));

        assertThat(result.exit()).as(result.toString()).isEqualTo(2);
        assertThat(result.stderr()).contains("--connect").doesNotContain("Exception");
        assertThat(Files.exists(dir.resolve("marker"))).isFalse();
    }

    @Test
    void missingCommand_exits2() {
        Cli.Result result = ops.run("run", "--connect", zk.connectString(), "--dest", dest, "--file", content.toString());

        assertThat(result.exit()).as(result.toString()).isEqualTo(2);
        assertThat(result.stderr()).contains("COMMAND");
    }

    @Test
    void inspect_malformedKey_orBothWays_exits2() {
        Cli.Result malformed = ops.run("inspect", "--connect", zk.connectString(), "--key", "DB8C");
        Cli.Result both = ops.run("inspect", "--connect", zk.connectString(), "--key", key.key(), "--dest", dest,
                "--file", content.toString());
        Cli.Result neither = ops.run("inspect", "--connect", zk.connectString());

        assertThat(malformed.exit()).as(malformed.toString()).isEqualTo(2);
        assertThat(malformed.stderr()).contains("--key");
        assertThat(both.exit()).as(both.toString()).isEqualTo(2);
        assertThat(neither.exit()).as(neither.toString()).isEqualTo(2);
    }

    @Test
    void key_badInput_exits2() {
        Cli.Result result = ops.run("key", "--dest-name", "slack:", "--file", content.toString());

        assertThat(result.exit()).as(result.toString()).isEqualTo(2);
        assertThat(result.stderr()).contains("--dest-name").contains("identifier");
    }

    @Test
    void noSubcommand_andUnknownSubcommand_exit2() {
        assertThat(ops.run().exit()).isEqualTo(2);
        assertThat(ops.run("deliver").exit()).isEqualTo(2);
    }

    @Test
    void demo_impossibleOptions_exit2_namingTheOption() {
        for (String[] args : new String[][] {
                {"demo", "--workers", "0"}, {"demo", "--effects", "-3"}, {"demo", "--contenders", "0"},
                {"demo", "--fault-rate", "-1"}, {"demo", "--duration", "soon"}, {"demo", "--metrics-port", "70000"},
                {"demo", "--bogus"}}) {
            Cli.Result result = ops.run(args);
            assertThat(result.exit()).as(result.toString()).isEqualTo(2);
            assertThat(result.stderr()).as(result.toString()).contains(args[1].replace("--bogus", "bogus"));
        }
    }

    @Test
    void helpAndVersion_exit0() {
        for (String command : List.of("init", "key", "run", "inspect", "server")) {
            Cli.Result help = ops.run(command, "--help");
            assertThat(help.exit()).as(help.toString()).isEqualTo(0);
            assertThat(help.stdout()).contains("Usage: oncegate " + command);
        }
        assertThat(ops.run("--version").stdout()).startsWith("oncegate ");
    }

    private List<String> absolute(List<String> options) {
        return options.stream().map(o -> o.replace(REPORT, content.toString()).replace(MISSING, dir.resolve("no-such-file").toString()))
                .toList();
    }

    @AfterEach
    void nothingWasWritten() throws Exception {
        assertThat(curator.checkExists().forPath(NAMESPACE + "/keys") == null
                || curator.getChildren().forPath(NAMESPACE + "/keys").isEmpty())
                .as("bad input must not write a key").isTrue();
    }
}
