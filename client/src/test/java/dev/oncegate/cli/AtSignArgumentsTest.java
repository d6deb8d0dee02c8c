package dev.oncegate.cli;

import java.nio.file.Files;
import java.nio.file.Path;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A word that starts with {@code @} is a value like any other: picocli's argument files are off,
 * so an operator's {@code --evidence @ticket-4711} or {@code --by @alice} is recorded as typed,
 * never replaced by the lines of a file that happens to have that name.
 * ({@code RunExitCodesIT.commandArguments_reachTheCommandVerbatim_anAtSignIncluded} shows the same
 * for {@code run}'s COMMAND.)
 */
class AtSignArgumentsTest {

    @TempDir
    Path dir;

    @Test
    void anOptionValueStartingWithAnAtSign_isKeptAsTyped_evenWhenAFileHasThatName() throws Exception {
        Path file = Files.writeString(dir.resolve("ticket"), "--by\nmallory\n");
        String[] args = {"reconcile", "--key", "a".repeat(64), "--by", "@alice", "--evidence", "@" + file};

        CommandLine.ParseResult parsed = Main.commandLine(args).parseArgs(args);

        ReconcileCommand reconcile = (ReconcileCommand) parsed.subcommand().commandSpec().userObject();
        assertThat(reconcile.by).isEqualTo("@alice");
        assertThat(reconcile.evidence).isEqualTo("@" + file);
    }

    @Test
    void runsCommand_keepsItsAtSignArguments() throws Exception {
        Path file = Files.writeString(dir.resolve("body.json"), "other words\n");
        String[] args = {"run", "--dest", "slack:C1", "--file", file.toString(), "--", "curl", "-d", "@" + file, "@@x"};

        CommandLine.ParseResult parsed = Main.commandLine(args).parseArgs(args);

        RunCommand run = (RunCommand) parsed.subcommand().commandSpec().userObject();
        assertThat(run.command).containsExactly("curl", "-d", "@" + file, "@@x");
    }
}
