package dev.oncegate.deploy;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * Runs Prometheus's {@code promtool} (Debian's {@code prometheus} package; see {@link Tools} for
 * what happens when it is missing). Public for the CLI's process tests, which check the files
 * {@code oncegate run --metrics-textfile} writes.
 *
 * <p>Stateless and thread-safe (each call runs its own process).
 */
public final class Promtool {

    /** What promtool said, stdout and stderr together. */
    public record Result(int exit, String output) {
    }

    private Promtool() {
    }

    /** {@code promtool ARGS…} in {@code workDir}, reading {@code stdin} (null: nothing). */
    public static Result run(Path workDir, Path stdin, String... args) throws IOException, InterruptedException {
        Path promtool = Tools.require("promtool", "apt-get install -y prometheus");
        List<String> command = new ArrayList<>(List.of(promtool.toString()));
        command.addAll(List.of(args));
        Path out = Files.createTempFile("promtool-", ".txt");
        try {
            ProcessBuilder builder = new ProcessBuilder(command).directory(workDir.toFile()).redirectErrorStream(true)
                    .redirectOutput(out.toFile());
            builder.redirectInput(stdin != null ? ProcessBuilder.Redirect.from(stdin.toFile())
                    : ProcessBuilder.Redirect.from(Path.of("/dev/null").toFile()));
            Process process = builder.start();
            if (!process.waitFor(60, TimeUnit.SECONDS)) {
                process.destroyForcibly();
                throw new AssertionError("promtool " + String.join(" ", args) + " did not finish in 60 s");
            }
            return new Result(process.exitValue(), Files.readString(out, StandardCharsets.UTF_8));
        } finally {
            Files.deleteIfExists(out);
        }
    }

    /** {@code promtool check metrics < file}: Prometheus's own exposition parser and its lint. */
    public static Result checkMetrics(Path file) throws IOException, InterruptedException {
        return run(file.toAbsolutePath().getParent(), file, "check", "metrics");
    }
}
