package dev.oncegate.cli;

import java.nio.file.Files;
import java.util.ArrayList;
import java.util.List;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Bad input is refused with exit 2 and a message naming what is wrong, before anything touches
 * ZooKeeper: after each case the namespace still has no keys, and the command never ran.
 */
class BadInputIT extends CliFixture {

    static List<Arguments> badRuns() {
        return List.of(
                Arguments.of("missing file", List.of("--dest", "slack:C1", "--file", "no-such-file"), "--file"),
                Arguments.of("empty id", List.of("--dest", "slack:", "--file", "report.txt"), "identifier must not be empty"),
                Arguments.of("no colon", List.of("--dest", "slack", "--file", "report.txt"), "PROVIDER:ID"),
                Arguments.of("bad provider", List.of("--dest", "Slack:C1", "--file", "report.txt"), "provider"),
                Arguments.of("both dests", List.of("--dest", "slack:C1", "--dest-name", "slack:#general", "--file", "report.txt"),
                        "mutually exclusive"),
                Arguments.of("no dest", List.of("--file", "report.txt"), "--dest"),
                Arguments.of("no file", List.of("--dest", "slack:C1"), "--file"),
                Arguments.of("unknown flag", List.of("--dest", "slack:C1", "--file", "report.txt", "--frobnicate"), "--frobnicate"),
                Arguments.of("bad --wait", List.of("--dest", "slack:C1", "--file", "report.txt", "--wait", "soon"), "--wait"),
                Arguments.of("negative --wait", List.of("--dest", "slack:C1", "--file", "report.txt", "--wait", "-1s"), "--wait"),
                Arguments.of("bad --timeout", List.of("--dest", "slack:C1", "--file", "report.txt", "--timeout", "5x"), "--timeout"),
                Arguments.of("zero --not-sent-exit", List.of("--dest", "slack:C1", "--file", "report.txt", "--not-sent-exit", "0"),
                        "--not-sent-exit"),
                Arguments.of("too big --not-sent-exit", List.of("--dest", "slack:C1", "--file", "report.txt", "--not-sent-exit", "256"),
                        "--not-sent-exit"),
                // 126/127: the shell could not run the command; 128+N: killed by signal N (137: SIGKILL)
                Arguments.of("--not-sent-exit 126", List.of("--dest", "slack:C1", "--file", "report.txt", "--not-sent-exit", "126"),
                        "--not-sent-exit"),
                Arguments.of("--not-sent-exit 127", List.of("--dest", "slack:C1", "--file", "report.txt", "--not-sent-exit", "127"),
                        "--not-sent-exit"),
                Arguments.of("signal --not-sent-exit 137", List.of("--dest", "slack:C1", "--file", "report.txt", "--not-sent-exit", "137"),
                        "signal"),
                Arguments.of("signal --not-sent-exit 143", List.of("--dest", "slack:C1", "--file", "report.txt", "--not-sent-exit", "143"),
                        "signal"),
                Arguments.of("--not-sent-exit 255", List.of("--dest", "slack:C1", "--file", "report.txt", "--not-sent-exit", "255"),
                        "--not-sent-exit"),
                Arguments.of("empty --task-id", List.of("--dest", "slack:C1", "--file", "report.txt", "--task-id", ""), "--task-id"),
                Arguments.of("bad namespace", List.of("--dest", "slack:C1", "--file", "report.txt", "--namespace", "oncegate"),
                        "namespace"),
                Arguments.of("bad --connect-timeout", List.of("--dest", "slack:C1", "--file", "report.txt", "--connect-timeout", "x"),
                        "--connect-timeout"));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("badRuns")
    void badRun_exits2_namesTheProblem_writesNothing_runsNothing(String name, List<String> options, String named) throws Exception {
        List<String> args = new ArrayList<>(List.of("run", "--connect", zk.connectString()));
        args.addAll(options);
        args.addAll(List.of("--", "sh", "-c", "touch marker"));

        Cli.Result result = cli.run(args.toArray(String[]::new));

        assertThat(result.exit()).as(result.toString()).isEqualTo(2);
        assertThat(result.stderr()).as(result.toString()).contains(named);
        assertThat(result.stdout()).isEmpty();
        assertThat(Files.exists(dir.resolve("marker"))).isFalse();
    }

    @Test
    void malformedConnectString_exits2_beforeConnecting() throws Exception {
        Cli.Result result = cli.run("run", "--connect", "localhost:abc", "--dest", dest, "--file", content.toString(),
                "--", "sh", "-c", "touch marker");

        assertThat(result.exit()).as(result.toString()).isEqualTo(2);
        assertThat(result.stderr()).contains("--connect").doesNotContain("Exception");
        assertThat(Files.exists(dir.resolve("marker"))).isFalse();
    }

    @Test
    void missingCommand_exits2() {
        Cli.Result result = cli.run("run", "--connect", zk.connectString(), "--dest", dest, "--file", content.toString());

        assertThat(result.exit()).as(result.toString()).isEqualTo(2);
        assertThat(result.stderr()).contains("COMMAND");
    }

    @Test
    void inspect_malformedKey_orBothWays_exits2() {
        Cli.Result malformed = cli.run("inspect", "--connect", zk.connectString(), "--key", "DB8C");
        Cli.Result both = cli.run("inspect", "--connect", zk.connectString(), "--key", key.key(), "--dest", dest,
                "--file", content.toString());
        Cli.Result neither = cli.run("inspect", "--connect", zk.connectString());

        assertThat(malformed.exit()).as(malformed.toString()).isEqualTo(2);
        assertThat(malformed.stderr()).contains("--key");
        assertThat(both.exit()).as(both.toString()).isEqualTo(2);
        assertThat(neither.exit()).as(neither.toString()).isEqualTo(2);
    }

    @Test
    void key_badInput_exits2() {
        Cli.Result result = cli.run("key", "--dest-name", "slack:", "--file", content.toString());

        assertThat(result.exit()).as(result.toString()).isEqualTo(2);
        assertThat(result.stderr()).contains("--dest-name").contains("identifier");
    }

    @Test
    void noSubcommand_andUnknownSubcommand_exit2() {
        assertThat(cli.run().exit()).isEqualTo(2);
        assertThat(cli.run("deliver").exit()).isEqualTo(2);
    }

    @Test
    void helpAndVersion_exit0() {
        for (String command : List.of("init", "key", "run", "inspect", "server")) {
            Cli.Result help = cli.run(command, "--help");
            assertThat(help.exit()).as(help.toString()).isEqualTo(0);
            assertThat(help.stdout()).contains("Usage: oncegate " + command);
        }
        assertThat(cli.run("--version").stdout()).startsWith("oncegate ");
    }

    @AfterEach
    void nothingWasWritten() throws Exception {
        assertThat(curator.checkExists().forPath(NAMESPACE + "/keys") == null
                || curator.getChildren().forPath(NAMESPACE + "/keys").isEmpty())
                .as("bad input must not write a key").isTrue();
    }
}
