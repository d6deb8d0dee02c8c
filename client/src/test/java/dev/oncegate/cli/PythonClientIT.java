package dev.oncegate.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assertions.fail;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import dev.oncegate.deploy.Tools;
import dev.oncegate.testing.EmbeddedZooKeeper;
import dev.oncegate.testing.Timing;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The Python client's own suite ({@code client/python/tests}, pytest) against a real ZooKeeper
 * started here and real sidecars started by the suite from {@code target/oncegate.jar}: races of
 * Python processes, resumed tasks, agents killed after crossing, not_sent with evidence, sidecars
 * killed or stopped mid-crossing, wrong tokens, every key vector, and the README's quick start.
 * Needs Debian's {@code python3} and {@code python3-pytest} (.ci/run installs them); without them
 * it fails under {@code -Doncegate.require-tools=true} and is skipped elsewhere.
 */
class PythonClientIT {

    static final Path SUITE = Path.of("python", "tests");

    @TempDir
    Path dir;

    @Test
    void pythonSuite_passesAgainstARealSidecarAndServer() throws Exception {
        // Given: Python with pytest, and a ZooKeeper server with /oncegate initialised
        Path python = python();
        try (EmbeddedZooKeeper zk = EmbeddedZooKeeper.start()) {
            zk.initNamespace("/oncegate");

            // When: pytest runs the suite, each sidecar and agent a process of its own
            Path log = Path.of("target", "python-tests.log");
            List<String> command = new ArrayList<>(List.of(python.toString(), "-m", "pytest", "-q", "-p", "no:cacheprovider",
                    "--basetemp", dir.resolve("pytest").toString(), SUITE.toString()));
            ProcessBuilder builder = new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(log.toFile());
            builder.environment().keySet().removeIf(name -> name.startsWith("ONCEGATE_"));
            builder.environment().put("ONCEGATE_JAR", Cli.jar().toAbsolutePath().toString());
            builder.environment().put("ONCEGATE_CONNECT", zk.connectString());
            builder.environment().put("ONCEGATE_README", Path.of("..", "README.md").toAbsolutePath().normalize().toString());
            builder.environment().put("JAVA_HOME", System.getProperty("java.home"));
            builder.environment().put("PYTHONDONTWRITEBYTECODE", "1");
            Process pytest = builder.start();
            try {
                if (!pytest.waitFor(Timing.scaled(java.time.Duration.ofMinutes(10)).toMillis(), TimeUnit.MILLISECONDS)) {
                    fail("pytest did not finish within 10 minutes; its output so far:\n" + Files.readString(log));
                }
            } finally {
                ProcessTree.kill(pytest, java.time.Duration.ZERO);
            }

            // Then: every Python test passed
            String output = Files.readString(log);
            System.out.println(output);
            assertThat(pytest.exitValue()).as("pytest's exit code; its output:\n" + output).isZero();
            assertThat(output).contains(" passed").doesNotContain(" skipped");
        }
    }

    /** Debian's python3 with pytest (the one .ci/run installs), else the first python3 on PATH that has it. */
    private static Path python() throws IOException, InterruptedException {
        List<Path> candidates = new ArrayList<>();
        candidates.add(Path.of("/usr/bin/python3"));
        String path = System.getenv("PATH");
        if (path != null) {
            for (String d : path.split(java.io.File.pathSeparator)) {
                candidates.add(Path.of(d, "python3"));
            }
        }
        for (Path candidate : candidates) {
            if (Files.isExecutable(candidate) && new ProcessBuilder(candidate.toString(), "-c", "import pytest")
                    .redirectErrorStream(true).redirectOutput(ProcessBuilder.Redirect.DISCARD).start().waitFor() == 0) {
                return candidate;
            }
        }
        String message = "no python3 with pytest found (/usr/bin/python3 or on PATH); install them with `apt-get install"
                + " python3 python3-pytest` (.ci/run does)";
        if (Tools.required()) {
            fail(message);
        }
        Assumptions.abort(message);
        throw new AssertionError("unreachable");
    }
}
