package dev.oncegate.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The in-process runs that most CLI tests use ({@link Cli#inProcess}, through {@link Main#run})
 * answer as {@code java -jar oncegate.jar} does: the same exit code and the same output for a key,
 * for bad input, for help and for an unknown subcommand. So a test that moved into the test JVM
 * still says what the jar does.
 */
class InProcessMatchesTheJarIT {

    @TempDir
    Path dir;

    @AfterEach
    void killEverythingStarted() {
        Cli.destroyAll();
    }

    @Test
    void sameCommandLines_sameExitCodesAndOutput_inProcessAndAsTheJar() throws Exception {
        // Given a file to key, and command lines that succeed, refuse bad input or print help
        Path file = Files.writeString(dir.resolve("hello.txt"), "hello world\n");
        List<String[]> commandLines = List.of(
                new String[] {"key", "--dest", "slack:C024BE91L", "--file", file.toString()},
                new String[] {"key", "--dest", "slack:", "--file", file.toString()},
                new String[] {"run", "--dest", "slack:C1", "--file", file.toString(), "--not-sent-exit", "137", "--", "true"},
                new String[] {"inspect", "--help"},
                new String[] {"deliver"});
        Cli jar = new Cli(dir, Map.of());
        Cli inProcess = Cli.inProcess(dir);

        for (String[] args : commandLines) {
            // When each runs both ways
            Cli.Result asJar = jar.run(args);
            Cli.Result here = inProcess.run(args);

            // Then both answer alike
            assertThat(here.exit()).as("exit of %s", asJar).isEqualTo(asJar.exit());
            assertThat(here.stdout()).as("stdout of %s", asJar).isEqualTo(asJar.stdout());
            assertThat(here.stderr()).as("stderr of %s", asJar).isEqualTo(asJar.stderr());
        }
    }
}
