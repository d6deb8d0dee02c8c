package dev.oncegate.cli;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.PrintStream;
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
 *
 * <p>{@link #inProcess(Path)} runs the same command lines through {@link Main#run} in this JVM
 * instead (a JVM per command costs about a second): for usage errors, parsing and the operator's
 * commands, whose outcome does not depend on a process boundary. Not for {@code run},
 * {@code server}, {@code exporter} or {@code demo} (shutdown hooks, child processes, signals),
 * nor for what only a real process shows (the locale's argument decoding, environment variables,
 * the jar's contents).
 *
 * <p>Process runs are thread-safe; in-process runs are serialised, since they replace
 * {@code System.out}, {@code System.err} and {@code System.in} while they run.
 */
final class Cli {

    static final ObjectMapper JSON = new ObjectMapper();

    private static final List<Process> STARTED = new CopyOnWriteArrayList<>();
    private static final Object IN_PROCESS = new Object();

    private final Path dir;
    private final Map<String, String> env;
    private final Path launcher;
    private final boolean inProcess;

    /** A CLI whose processes run in {@code dir} with extra environment {@code env}. */
    Cli(Path dir, Map<String, String> env) {
        this(dir, env, null);
    }

    /**
     * A CLI started by {@code launcher} (the distribution's {@code bin/oncegate}, say) instead of
     * {@code java -jar oncegate.jar}; null for the latter.
     */
    Cli(Path dir, Map<String, String> env, Path launcher) {
        this(dir, env, launcher, false);
    }

    private Cli(Path dir, Map<String, String> env, Path launcher, boolean inProcess) {
        this.dir = dir;
        this.env = env;
        this.launcher = launcher;
        this.inProcess = inProcess;
    }

    /**
     * A CLI that runs each command line in this JVM, with this test's state directory (as a
     * process of {@link #Cli(Path, Map)} gets in {@code dir}). Relative paths resolve against
     * this JVM's working directory, not {@code dir}: pass absolute ones.
     *
     * @throws IllegalStateException when this JVM has an {@code ONCEGATE_*} variable in its
     *         environment, which would change what the commands do (the build removes them)
     */
    static Cli inProcess(Path dir) {
        List<String> set = System.getenv().keySet().stream().filter(name -> name.startsWith("ONCEGATE_")).sorted().toList();
        if (!set.isEmpty()) {
            throw new IllegalStateException("in-process CLI runs would read " + set + " from this JVM's environment:"
                    + " add them to client/pom.xml's excludedEnvironmentVariables");
        }
        return new Cli(dir, Map.of(), null, true);
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

    /**
     * {@code java … -jar oncegate.jar}, as the tests start the CLI: options for a JVM that lives
     * seconds (C1 only, the serial collector, no hsperfdata file), and the class-data sharing archive of the jar that
     * the build makes for the tests (property {@code oncegate.jar.cds}, when it exists; a JVM for
     * which it does not fit starts without it, silently), so that each JVM maps the JDK's and
     * oncegate's classes instead of loading them: a third less CPU per start.
     */
    static List<String> javaCommand() {
        List<String> command = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC", "-XX:-UsePerfData"));
        String archive = System.getProperty("oncegate.jar.cds");
        if (archive != null && Files.isRegularFile(Path.of(archive))) {
            command.add("-XX:SharedArchiveFile=" + archive);
            // Mapped where it was made, not relocated (this JDK's default): a few ms less CPU per JVM,
            // of the hundreds the ITs start. The distribution's launcher keeps the JDK's default.
            command.addAll(List.of("-XX:+UnlockDiagnosticVMOptions", "-XX:ArchiveRelocationMode=0"));
        }
        command.addAll(List.of("-Djava.net.preferIPv4Stack=true", "-jar", jar().toString()));
        return command;
    }

    /** {@link #javaCommand()} as words of a shell command line, each quoted. */
    static String javaCommandLine() {
        return javaCommand().stream().map(word -> "'" + word.replace("'", "'\\''") + "'")
                .collect(java.util.stream.Collectors.joining(" "));
    }

    /**
     * Runs to completion (a process: bounded by {@link Timing#PROCESS}) and returns exit code and
     * output.
     */
    Result run(String... args) {
        if (inProcess) {
            return runInProcess(args);
        }
        Running running = start(args);
        return running.await(Timing.PROCESS);
    }

    private Result runInProcess(String... args) {
        String[] withState = withStateDir(args);
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        int exit;
        synchronized (IN_PROCESS) {
            PrintStream stdout = System.out;
            PrintStream stderr = System.err;
            InputStream stdin = System.in;
            // Main.run sets the log levels of -v and of the demo as system properties: this JVM's stay
            Map<String, String> logLevels = logLevels();
            try (PrintStream o = new PrintStream(out, true, StandardCharsets.UTF_8);
                    PrintStream e = new PrintStream(err, true, StandardCharsets.UTF_8)) {
                System.setOut(o);
                System.setErr(e);
                System.setIn(new ByteArrayInputStream(new byte[0]));
                exit = Main.run(withState);
            } finally {
                System.setOut(stdout);
                System.setErr(stderr);
                System.setIn(stdin);
                logLevels().keySet().forEach(System::clearProperty);
                logLevels.forEach(System::setProperty);
            }
        }
        return new Result(exit, out.toString(StandardCharsets.UTF_8), err.toString(StandardCharsets.UTF_8),
                String.join(" ", args));
    }

    private static Map<String, String> logLevels() {
        Map<String, String> levels = new java.util.HashMap<>();
        System.getProperties().stringPropertyNames().stream().filter(name -> name.startsWith("org.slf4j.simpleLogger."))
                .forEach(name -> levels.put(name, System.getProperty(name)));
        return levels;
    }

    /** {@code args} with {@code --state-dir DIR/state} after the subcommand, when it takes one and is not given one. */
    private String[] withStateDir(String[] args) {
        if (args.length == 0) {
            return args;
        }
        if (!StateDirCommands.NAMES.contains(args[0])
                || List.of(args).stream().takeWhile(a -> !a.equals("--")).anyMatch(a -> a.startsWith("--state-dir"))) {
            return args;
        }
        List<String> with = new ArrayList<>(List.of(args));
        with.addAll(1, List.of("--state-dir", dir.resolve("state").toString()));
        return with.toArray(String[]::new);
    }

    /** The subcommands that take {@code --state-dir}, from the CLI's model (built once: it takes a while). */
    private static final class StateDirCommands {
        static final java.util.Set<String> NAMES = Main.commandLine().getSubcommands().entrySet().stream()
                .filter(e -> e.getValue().getCommandSpec().findOption("--state-dir") != null)
                .map(Map.Entry::getKey).collect(java.util.stream.Collectors.toUnmodifiableSet());
    }

    /** Starts a process without waiting. */
    Running start(String... args) {
        if (inProcess) {
            throw new UnsupportedOperationException("an in-process CLI runs to completion: use run");
        }
        List<String> command = new ArrayList<>();
        if (launcher != null) {
            command.add(launcher.toString());
        } else {
            command.addAll(javaCommand());
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
