package dev.oncegate.cli;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.oncegate.testing.Timing;

/**
 * Runs {@code java -jar oncegate.jar …} as a separate process, the way operators and workers
 * do. Output goes to files (no pipe can fill up and stall the child). Every started process is
 * remembered, and {@link #destroyAll()} kills it and its descendants with the CLI's own
 * {@link ProcessTree}: tests call it in {@code @AfterEach} so nothing outlives a test.
 */
final class Cli {

    static final ObjectMapper JSON = new ObjectMapper();

    private static final List<Process> STARTED = new CopyOnWriteArrayList<>();

    private final Path dir;
    private final Map<String, String> env;
    private final Path launcher;

    /** A CLI whose processes run in {@code dir} with extra environment {@code env}. */
    Cli(Path dir, Map<String, String> env) {
        this(dir, env, null);
    }

    /**
     * A CLI started by {@code launcher} (the distribution's {@code bin/oncegate}, say) instead of
     * {@code java -jar oncegate.jar}; null for the latter.
     */
    Cli(Path dir, Map<String, String> env, Path launcher) {
        this.dir = dir;
        this.env = env;
        this.launcher = launcher;
    }

    static Path jar() {
        String jar = System.getProperty("oncegate.jar");
        if (jar == null) {
            throw new IllegalStateException("system property oncegate.jar is not set: run the *IT tests with"
                    + " `mvn verify` (failsafe sets it to target/oncegate.jar)");
        }
        Path path = Path.of(jar);
        if (!Files.isRegularFile(path)) {
            throw new IllegalStateException(path + " does not exist: `mvn package` builds it");
        }
        return path;
    }

    /** Runs to completion (bounded by {@link Timing#PROCESS}) and returns exit code and output. */
    Result run(String... args) {
        Running running = start(args);
        return running.await(Timing.PROCESS);
    }

    /** Starts without waiting. */
    Running start(String... args) {
        List<String> command = new ArrayList<>();
        if (launcher != null) {
            command.add(launcher.toString());
        } else {
            command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
            command.add("-XX:TieredStopAtLevel=1");
            command.add("-XX:+UseSerialGC");
            command.add("-Djava.net.preferIPv4Stack=true");
            command.add("-jar");
            command.add(jar().toString());
        }
        command.addAll(List.of(args));
        try {
            Path out = Files.createTempFile(dir, "stdout-", ".txt");
            Path err = Files.createTempFile(dir, "stderr-", ".txt");
            ProcessBuilder builder = new ProcessBuilder(command).directory(dir.toFile())
                    .redirectOutput(out.toFile()).redirectError(err.toFile())
                    .redirectInput(ProcessBuilder.Redirect.from(Path.of("/dev/null").toFile()));
            builder.environment().keySet().removeIf(name -> name.startsWith("ONCEGATE_"));
            // Each test's own host state (zxid marks, the server's default data directory), never the user's.
            builder.environment().put("ONCEGATE_STATE_DIR", dir.resolve("state").toString());
            builder.environment().putAll(env);
            Process process = builder.start();
            STARTED.add(process);
            return new Running(process, out, err, String.join(" ", args));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** Kills every process started so far, with all its descendants, and waits for them. */
    static void destroyAll() {
        for (Process p : STARTED) {
            ProcessTree.kill(p, Duration.ZERO);
            STARTED.remove(p);
        }
    }

    /** A started CLI process. */
    record Running(Process process, Path stdoutFile, Path stderrFile, String args) {

        Result await(Duration limit) {
            try {
                if (!process.waitFor(limit.toMillis(), TimeUnit.MILLISECONDS)) {
                    throw new AssertionError("oncegate " + args + " did not finish within " + limit
                            + "; stderr so far:\n" + stderr());
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new AssertionError("interrupted", e);
            }
            return new Result(process.exitValue(), read(stdoutFile), read(stderrFile), args);
        }

        String stdout() {
            return read(stdoutFile);
        }

        String stderr() {
            return read(stderrFile);
        }
    }

    /** A finished CLI process. */
    record Result(int exit, String stdout, String stderr, String args) {

        /** stdout as one JSON object (commands that print a record print exactly one line). */
        JsonNode stdoutJson() {
            return parse(stdout.strip(), "stdout");
        }

        /** {@code run}'s own result: the last JSON line on stderr. */
        JsonNode runJson() {
            String[] lines = stderr.split("\n");
            for (int i = lines.length - 1; i >= 0; i--) {
                if (lines[i].startsWith("{")) {
                    return parse(lines[i], "stderr");
                }
            }
            throw new AssertionError("no JSON line on stderr of oncegate " + args + ":\n" + stderr);
        }

        private JsonNode parse(String text, String stream) {
            try {
                return JSON.readTree(text);
            } catch (IOException e) {
                throw new AssertionError("not JSON on " + stream + " of oncegate " + args + ": " + text, e);
            }
        }

        @Override
        public String toString() {
            return "oncegate " + args + " → exit " + exit + "\nstdout: " + stdout + "\nstderr: " + stderr;
        }
    }

    static String read(Path file) {
        try {
            return Files.readString(file, StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
