package dev.oncegate.bench;

import java.io.File;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.jar.JarEntry;
import java.util.jar.JarOutputStream;

import dev.oncegate.testing.Scratch;

/**
 * How long the distribution's short-lived commands take, wall clock from the process's start to
 * its exit, beside the floor: a bare {@code java -cp DIR Hello} of the same Java. Each run starts
 * every command once, in turn (floor, {@code --version}, {@code key}, {@code inspect},
 * {@code run -- true}, {@link CuratorMinimum}: A B C D E F A B C D E F …), so that a machine's
 * changing load falls on all alike; {@code inspect}, {@code run} and the minimum talk to the
 * benchmark's live server, and each {@code run} crosses for a key of its own (it arms, runs
 * {@code true} and records sent_verified), as each minimum does. The minimum is the least a
 * {@code run -- true} on Curator and a {@code LeaderLatch} can cost on this machine: the floor that
 * the project's fixed choices put under {@code run}.
 *
 * <p>The launcher runs as a user would have it: {@code JAVA_HOME} this JVM's Java, a cache
 * directory ({@code XDG_CACHE_HOME}) and a state directory of the phase's own, none of the host's
 * {@code ONCEGATE_*} settings. The first {@code key} (untimed in the figures, reported as
 * {@code first_use_ms}) makes the installation's class-data sharing archive there.
 *
 * <p>Not thread-safe: one phase belongs to the thread that runs it.
 */
final class StartupPhase {

    private static final long PROCESS_TIMEOUT_SECONDS = 120;
    /**
     * Untimed rounds first, as the timed ones: the benchmark's server has just started, and a
     * server that has answered a few sessions, elections and multis answers the rest as a
     * production one does (its own code compiled), which the commands' figures should not carry.
     */
    private static final int WARMUP_ROUNDS = 3;
    private static final String NAMESPACE = "/bench-startup";
    /** The startup phase's name for {@link CuratorMinimum}'s figures. */
    static final String CURATOR_MINIMUM = "curator_minimum";
    /** Where {@link CuratorMinimum} makes its keys, apart from the namespace the commands use. */
    private static final String MINIMUM_BASE = "/bench-startup-curator-minimum";
    /** The launcher's JVM options for every short-lived command (bin/oncegate), which {@link CuratorMinimum} runs with. */
    private static final List<String> SHORT_LIVED = List.of("-Xlog:disable", "-Xlog:all=warning:stderr",
            "-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC", "-XX:-UsePerfData");

    private final Path distribution;
    private final String connect;
    private final int runs;
    private final Progress progress;

    StartupPhase(Path distribution, String connect, int runs, Progress progress) {
        this.distribution = distribution;
        this.connect = connect;
        this.runs = runs;
        this.progress = progress;
    }

    /** Runs the phase in a scratch directory that it removes. */
    Report.Startup measure() throws IOException, InterruptedException {
        Path launcher = distribution.resolve("bin/oncegate").toAbsolutePath();
        if (!Files.isExecutable(launcher)) {
            throw new IllegalArgumentException("--startup: " + launcher + " is not an executable launcher: give the"
                    + " unpacked distribution, e.g. client/target/oncegate-VERSION (built by `mvn package`)");
        }
        Path scratch = Files.createTempDirectory("oncegate-bench-startup-");
        try {
            return measure(launcher, scratch);
        } finally {
            Scratch.delete(scratch);
        }
    }

    private Report.Startup measure(Path launcher, Path scratch) throws IOException, InterruptedException {
        Path hello = scratch.resolve("hello");
        Path helloClass = hello.resolve("dev/oncegate/bench/Hello.class");
        Files.createDirectories(helloClass.getParent());
        try (InputStream in = Hello.class.getResourceAsStream("Hello.class")) {
            Files.copy(in, helloClass);
        }
        Path file = Files.writeString(scratch.resolve("report.txt"), "startup\n", StandardCharsets.UTF_8);
        String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        String[] effect = {"--dest", "bench:startup", "--file", file.toString()};

        Map<String, List<String>> commands = new LinkedHashMap<>();
        commands.put("floor", List.of(java, "-cp", hello.toString(), Hello.class.getName()));
        commands.put("version", command(launcher, "--version"));
        commands.put("key", command(launcher, "key", effect));
        commands.put("inspect", command(launcher, "inspect", "--connect", connect, "--namespace", NAMESPACE, effect[0],
                effect[1], effect[2], effect[3]));

        long t0 = System.nanoTime();
        run(scratch, command(launcher, "key", effect));
        double firstUse = (System.nanoTime() - t0) / 1e6;
        progress.note(String.format(Locale.ROOT, "startup: first use (makes the class-data sharing archive): %.0f ms",
                firstUse));
        run(scratch, command(launcher, "init", "--connect", connect, "--namespace", NAMESPACE));
        Minimum minimum = Minimum.prepare(scratch, java, distribution.resolve("lib/oncegate.jar").toAbsolutePath(), connect);

        Map<String, List<Double>> times = new LinkedHashMap<>();
        for (int r = -WARMUP_ROUNDS; r < runs; r++) {
            Map<String, List<Double>> round = r < 0 ? new LinkedHashMap<>() : times;
            for (Map.Entry<String, List<String>> c : commands.entrySet()) {
                round.computeIfAbsent(c.getKey(), k -> new ArrayList<>()).add(run(scratch, c.getValue()));
            }
            Path own = Files.writeString(scratch.resolve("run-" + r + ".txt"), "startup run " + r + " " + System.nanoTime());
            round.computeIfAbsent("run_true", k -> new ArrayList<>()).add(run(scratch, command(launcher, "run",
                    "--connect", connect, "--namespace", NAMESPACE, "--dest", "bench:startup", "--file", own.toString(),
                    "--", "true")));
            round.computeIfAbsent(CURATOR_MINIMUM, k -> new ArrayList<>()).add(run(scratch, minimum.command("run" + r)));
            progress.note(r < 0 ? "startup: warm-up round " + (r + WARMUP_ROUNDS + 1) + "/" + WARMUP_ROUNDS
                    : "startup: run " + (r + 1) + "/" + runs);
        }
        double floor = Report.Stat.of(times.get("floor"), d -> d).median();
        List<Report.StartupCommand> results = new ArrayList<>();
        times.forEach((name, list) -> {
            Report.Stat ms = Report.Stat.of(list, d -> d);
            results.add(new Report.StartupCommand(name, ms, Math.round(ms.median() / floor * 1000) / 1000.0));
        });
        return new Report.Startup(distribution.toAbsolutePath().normalize().toString(), runs,
                Math.round(firstUse * 10) / 10.0, List.copyOf(results));
    }

    /**
     * {@link CuratorMinimum}, ready to run: in a jar of its own after the distribution's (whose
     * Curator and ZooKeeper it uses), with the launcher's JVM options for a short-lived command
     * and a class-data sharing archive made for it as the launcher makes its own (the classes a
     * first run loads, dumped), which every timed run must map ({@code -Xshare:on}).
     */
    private record Minimum(List<String> prefix) {

        static Minimum prepare(Path scratch, String java, Path distributionJar, String connect)
                throws IOException, InterruptedException {
            Path jar = scratch.resolve("curator-minimum.jar");
            try (JarOutputStream out = new JarOutputStream(Files.newOutputStream(jar))) {
                for (Class<?> c : List.of(CuratorMinimum.class, CuratorMinimum.PlainConfig.class)) {
                    String name = c.getName().replace('.', '/') + ".class";
                    out.putNextEntry(new JarEntry(name));
                    try (InputStream in = c.getClassLoader().getResourceAsStream(name)) {
                        if (in == null) {
                            throw new IllegalStateException("no class file " + name + " on the benchmark's class path");
                        }
                        in.transferTo(out);
                    }
                    out.closeEntry();
                }
            }
            String classPath = distributionJar + File.pathSeparator + jar.toAbsolutePath();
            Path classList = scratch.resolve("curator-minimum.classlist");
            Path archive = scratch.resolve("curator-minimum.jsa");
            List<String> training = new ArrayList<>(List.of(java, "-XX:DumpLoadedClassList=" + classList));
            training.addAll(SHORT_LIVED);
            training.addAll(List.of("-cp", classPath, CuratorMinimum.class.getName(), connect, MINIMUM_BASE, "training"));
            run(scratch, training);
            List<String> dump = new ArrayList<>(List.of(java, "-Xshare:dump", "-XX:SharedClassListFile=" + classList,
                    "-XX:SharedArchiveFile=" + archive));
            dump.addAll(SHORT_LIVED);
            dump.addAll(List.of("-cp", classPath));
            run(scratch, dump);
            List<String> prefix = new ArrayList<>(List.of(java));
            prefix.addAll(SHORT_LIVED);
            prefix.addAll(List.of("-XX:SharedArchiveFile=" + archive, "-Xshare:on", "-cp", classPath,
                    CuratorMinimum.class.getName(), connect, MINIMUM_BASE));
            return new Minimum(List.copyOf(prefix));
        }

        /** The command line of one run, for a key of its own. */
        List<String> command(String key) {
            List<String> all = new ArrayList<>(prefix);
            all.add(key);
            return all;
        }
    }

    private static List<String> command(Path launcher, String first, String... rest) {
        List<String> all = new ArrayList<>(List.of(launcher.toString(), first));
        all.addAll(List.of(rest));
        return all;
    }

    /** Runs {@code command}, which must exit 0; returns the milliseconds from its start to its exit. */
    private static double run(Path scratch, List<String> command) throws IOException, InterruptedException {
        long t0 = System.nanoTime();
        Process p = start(scratch, command);
        if (!p.waitFor(PROCESS_TIMEOUT_SECONDS, TimeUnit.SECONDS)) {
            p.destroyForcibly();
            throw new IllegalStateException(String.join(" ", command) + " did not finish in " + PROCESS_TIMEOUT_SECONDS + " s");
        }
        double ms = (System.nanoTime() - t0) / 1e6;
        if (p.exitValue() != 0) {
            throw new IllegalStateException(String.join(" ", command) + " exited " + p.exitValue() + ": "
                    + Files.readString(scratch.resolve("stderr.txt"), StandardCharsets.UTF_8));
        }
        return ms;
    }

    private static Process start(Path scratch, List<String> command) throws IOException {
        ProcessBuilder builder = new ProcessBuilder(command).directory(scratch.toFile())
                .redirectOutput(scratch.resolve("stdout.txt").toFile()).redirectError(scratch.resolve("stderr.txt").toFile())
                .redirectInput(ProcessBuilder.Redirect.from(Path.of("/dev/null").toFile()));
        Map<String, String> env = builder.environment();
        env.keySet().removeIf(name -> name.startsWith("ONCEGATE_"));
        env.put("JAVA_HOME", System.getProperty("java.home"));
        env.put("XDG_CACHE_HOME", scratch.resolve("cache").toString());
        env.put("ONCEGATE_STATE_DIR", scratch.resolve("state").toString());
        return builder.start();
    }

}
