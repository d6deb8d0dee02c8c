package dev.oncegate.cli;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@link QuickCommands} answers {@code --version} and plain {@code key} command lines exactly as
 * picocli's full path does (stdout, stderr, exit code), and leaves every other command line,
 * failures included, to picocli.
 */
class QuickCommandsTest {

    @TempDir
    Path dir;

    @Test
    void plainCommandLines_areAnsweredQuickly_withThePicocliOutput() throws Exception {
        Path file = Files.writeString(dir.resolve("report.txt"), "hello world\n");
        Path odd = Files.writeString(dir.resolve("a=b é.txt"), "x");
        List<String[]> lines = List.of(
                new String[] {"--version"},
                new String[] {"-V"},
                new String[] {"key", "--dest", "slack:C024BE91L", "--file", file.toString()},
                new String[] {"key", "--file", file.toString(), "--dest-name", "slack:#général \"x\""},
                new String[] {"key", "--dest=slack:a=b", "--file=" + odd, "--namespace=/other"},
                new String[] {"key", "-v", "--namespace", "/n/s", "--dest", "mail:x", "--file", file.toString()},
                new String[] {"key", "--verbose", "--dest", "mail:a@b", "--file", odd.toString()});
        for (String[] args : lines) {
            Run quick = quick(args);
            Run full = full(args);

            assertThat(quick.exit()).as(String.join(" ", args)).isEqualTo(ExitCode.OK);
            assertThat(quick).as(String.join(" ", args)).isEqualTo(full);
        }
    }

    @Test
    void anythingElse_isLeftToPicocli_havingPrintedNothing() throws Exception {
        Path file = Files.writeString(dir.resolve("report.txt"), "hello world\n");
        String f = file.toString();
        List<String[]> lines = new ArrayList<>(List.of(
                new String[] {},
                new String[] {"--version", "key"},
                new String[] {"--help"},
                new String[] {"key"},
                new String[] {"key", "--help"},
                new String[] {"key", "-h"},
                new String[] {"key", "-V"},
                new String[] {"key", "--dest", "slack:C1", "--file"},
                new String[] {"key", "--dest", "slack:C1"},
                new String[] {"key", "--file", f},
                new String[] {"key", "--dest", "slack:C1", "--dest-name", "slack:x", "--file", f},
                new String[] {"key", "--dest", "slack:C1", "--dest", "slack:C2", "--file", f},
                new String[] {"key", "--dest", "slack:C1", "--file", f, "--file", f},
                new String[] {"key", "-v", "-v", "--dest", "slack:C1", "--file", f},
                new String[] {"key", "--dest", "--file", f},
                new String[] {"key", "--dest", "-x", "--file", f},
                new String[] {"key", "--dest", "@args", "--file", f},
                new String[] {"key", "@args"},
                new String[] {"key", "--dest", "slack:C1", "--file", f, "extra"},
                new String[] {"key", "--dest", "slack:C1", "--file", f, "--"},
                new String[] {"key", "--dest", "slack:C1", "--file", f, "--connect", "x"},
                new String[] {"key", "--dest", "bad provider:C1", "--file", f},
                new String[] {"key", "--dest", "slack:C1", "--file", dir.resolve("missing").toString()},
                new String[] {"key", "--dest", "slack:C1", "--file", dir.toString()},
                new String[] {"key", "--dest", "slack:C1", "--file", f, "--namespace", "relative"},
                new String[] {"run", "--dest", "slack:C1", "--file", f, "true"},
                new String[] {"run", "--help"},
                new String[] {"inspect", "--key", "ab"}));
        for (String[] args : lines) {
            Run quick = quick(args);

            assertThat(quick).as(String.join(" ", args)).isEqualTo(new Run(QuickCommands.DECLINED, "", ""));
        }
    }

    private record Run(int exit, String stdout, String stderr) {
    }

    private static Run quick(String... args) {
        return captured(() -> QuickCommands.run(args));
    }

    private static Run full(String... args) {
        return captured(() -> Main.commandLine(args).execute(args));
    }

    private static synchronized Run captured(java.util.function.IntSupplier command) {
        PrintStream out = System.out;
        PrintStream err = System.err;
        ByteArrayOutputStream o = new ByteArrayOutputStream();
        ByteArrayOutputStream e = new ByteArrayOutputStream();
        int exit;
        try (PrintStream po = new PrintStream(o, true, StandardCharsets.UTF_8);
                PrintStream pe = new PrintStream(e, true, StandardCharsets.UTF_8)) {
            System.setOut(po);
            System.setErr(pe);
            exit = command.getAsInt();
        } finally {
            System.setOut(out);
            System.setErr(err);
        }
        return new Run(exit, o.toString(StandardCharsets.UTF_8), e.toString(StandardCharsets.UTF_8));
    }
}
