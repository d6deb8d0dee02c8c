package dev.oncegate.bench;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.oncegate.Gate;

/**
 * Issue 18's comparison, in the same run as the arms: agents in Python through {@code oncegate
 * sidecar} (the built jar, a process of its own against this run's server) against the library's
 * arms on new keys with 16 workers; what {@code oncegate run -- true} costs per effect, which is what
 * Python fleets pay without the sidecar; and the sidecar's memory and threads per open handle.
 *
 * <ul>
 *   <li>The sidecar warmed first by the same 16 processes on both paths below, untimed, in rounds
 *       of {@value #WARM_ROUND_SECONDS} s (each path in turn) until its JIT compiler threads spend
 *       less than {@value #WARM_COMPILER_SHARE} of its CPU in a round, or for at most
 *       {@value #WARM_MAX_SECONDS} s: the library's arms are measured in a JVM that has run every
 *       earlier trial, while a fresh sidecar on a loaded 2-core machine was measured still
 *       compiling, at a third of its CPU, after 40 s of load.</li>
 *   <li>16 Python processes, each entering new keys one after another (enter, cross, report
 *       sent_verified: three calls) for the phase's length; effects/s over all of them and
 *       per-effect latency percentiles (each effect from the agent's enter to the recorded outcome).</li>
 *   <li>The same with {@code enter-and-cross} (two calls: the enter arms, as for an agent with no
 *       checkpoint).</li>
 *   <li>One Python process doing each, for the per-effect latency of one agent alone.</li>
 *   <li>{@code java -jar oncegate.jar run … -- true} on new keys, one after another: wall time
 *       per effect (a JVM start and a ZooKeeper session each).</li>
 *   <li>One Python process holding {@code handles} open handles (entered, not crossed): the
 *       sidecar's heap after a full GC ({@code jcmd GC.run}, {@code GC.heap_info}), its resident
 *       memory and its threads ({@code /proc}), against the same with none open.</li>
 * </ul>
 * Skipped, saying why, when the jar or a Python with the client is missing.
 *
 * <p>Not thread-safe: one run, one thread.
 */
final class SidecarPhase {

    static final String NAMESPACE = "/bench/sidecar";
    static final int CLIENTS = 16;
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final Pattern HEAP_USED = Pattern.compile("used (\\d+)K");
    static final double WARM_ROUND_SECONDS = 4.0;
    static final double WARM_COMPILER_SHARE = 0.10;
    static final double WARM_MAX_SECONDS = 90.0;

    private final Options options;
    private final BenchServer server;
    private final Fleet fleet;
    private final Progress progress;
    private final Path dir;

    SidecarPhase(Options options, BenchServer server, Fleet fleet, Progress progress) throws IOException {
        this.options = options;
        this.server = server;
        this.fleet = fleet;
        this.progress = progress;
        this.dir = Files.createTempDirectory("oncegate-bench-sidecar");
    }

    /** Why the phase cannot run here, or null when it can. */
    String missing() {
        if (!Files.isRegularFile(options.sidecarJar())) {
            return "no " + options.sidecarJar() + " (build it with `mvn -B -q package -DskipTests`, or give --sidecar-jar)";
        }
        if (!Files.isExecutable(options.python())) {
            return "no " + options.python() + " (give --python)";
        }
        if (!Files.isRegularFile(options.pythonClient().resolve("oncegate").resolve("__init__.py"))) {
            return "no Python client in " + options.pythonClient() + " (give --python-client client/python)";
        }
        return null;
    }

    Report.SidecarResult run() throws Exception {
        Gate.initialize(fleet.client(0), NAMESPACE);
        Path script = dir.resolve("sidecar_agents.py");
        try (InputStream in = SidecarPhase.class.getResourceAsStream("sidecar_agents.py")) {
            Files.copy(in, script);
        }
        double seconds = Math.max(2.0, options.trial().toMillis() * options.trials() / 1000.0);
        Process sidecar = startSidecar();
        try {
            String url = JSON.readTree(new BufferedReader(new InputStreamReader(sidecar.getInputStream(),
                    StandardCharsets.UTF_8)).readLine()).get("url").asText();
            Map<String, String> env = Map.of("ONCEGATE_SIDECAR_URL", url,
                    "ONCEGATE_SIDECAR_TOKEN_FILE", dir.resolve("sidecar.token").toString(),
                    "PYTHONPATH", options.pythonClient().toAbsolutePath().toString());
            warm(script, env, sidecar.pid());
            Agents many = effects(script, env, CLIENTS, seconds, "many", false);
            Agents manyTwo = effects(script, env, CLIENTS, seconds, "many2", true);
            progress.step(String.format(java.util.Locale.ROOT, "sidecar: %d Python clients, %.1f effects/s, p50 %.2f ms"
                    + " (enter-and-cross: %.1f effects/s, p50 %.2f ms)", CLIENTS, many.perSecond(), many.latency().p50Ms(),
                    manyTwo.perSecond(), manyTwo.latency().p50Ms()));
            Agents one = effects(script, env, 1, seconds / 2, "one", false);
            Agents oneTwo = effects(script, env, 1, seconds / 2, "one2", true);
            double runMs = runEffects();
            progress.step(String.format(java.util.Locale.ROOT, "sidecar: one client %.2f ms per effect; oncegate run -- true"
                    + " %.0f ms per effect", one.meanMs(), runMs));
            long pid = sidecar.pid();
            Footprint before = footprint(pid);
            Process holder = python(script, env, "handles", Integer.toString(options.sidecarHandles()), "h" + options.seed());
            int open;
            try (BufferedReader out = new BufferedReader(new InputStreamReader(holder.getInputStream(), StandardCharsets.UTF_8))) {
                String line = out.readLine();
                if (line == null) {
                    throw new IllegalStateException("the handle holder ended early: " + error(holder));
                }
                open = JSON.readTree(line).get("open").asInt();
                Footprint with = footprint(pid);
                holder.getOutputStream().close();
                holder.waitFor(5, TimeUnit.MINUTES);
                int n = Math.max(1, open);
                progress.step(String.format(java.util.Locale.ROOT, "sidecar: %d open handles, %.0f heap bytes and %.3f"
                                + " threads per handle", open, (with.heapBytes() - before.heapBytes()) / (double) n,
                        (with.threads() - before.threads()) / (double) n));
                return new Report.SidecarResult(null, CLIENTS, many.seconds(), many.effects(), many.perSecond(),
                        many.latency(), many.undecided(), many.firstError(), one.meanMs(), one.latency(),
                        options.runEffects(), runMs, open, (with.heapBytes() - before.heapBytes()) / (double) n,
                        (with.rssBytes() - before.rssBytes()) / (double) n, (with.threads() - before.threads()) / (double) n,
                        before.threads(), with.threads(), manyTwo.effects(), manyTwo.perSecond(), manyTwo.latency(),
                        manyTwo.undecided(), oneTwo.meanMs(), oneTwo.latency());
            } finally {
                holder.destroyForcibly();
            }
        } finally {
            sidecar.destroy(); // SIGTERM: it releases what is open
            if (!sidecar.waitFor(60, TimeUnit.SECONDS)) {
                sidecar.destroyForcibly();
            }
        }
    }

    /** Warms the sidecar's JIT, untimed, until its compiler threads settle (see the class comment). */
    private void warm(Path script, Map<String, String> env, long pid) throws Exception {
        double warmed = 0;
        int round = 0;
        double share = 1;
        while (warmed < WARM_MAX_SECONDS && share >= WARM_COMPILER_SHARE) {
            double[] before = cpuSeconds(pid);
            effects(script, env, CLIENTS, WARM_ROUND_SECONDS, "warmup" + round, round % 2 == 1);
            double[] after = cpuSeconds(pid);
            double all = after[0] - before[0];
            share = all <= 0 ? 0 : (after[1] - before[1]) / all;
            warmed += WARM_ROUND_SECONDS;
            round++;
        }
        progress.step(String.format(java.util.Locale.ROOT, "sidecar: warmed for %.0f s (%d rounds of 16 clients);"
                + " JIT compiler threads %.0f%% of its CPU in the last round", warmed, round, share * 100));
    }

    /**
     * The process's CPU seconds ({@code /proc/PID/stat}, threads that ended included) and its JIT
     * compiler threads' ({@code /proc/PID/task}); zeros without {@code /proc} (one round is warmed).
     */
    private static double[] cpuSeconds(long pid) {
        try {
            double all = statCpu(Files.readString(Path.of("/proc", Long.toString(pid), "stat")));
            double compiler = 0;
            try (var tasks = Files.list(Path.of("/proc", Long.toString(pid), "task"))) {
                for (Path task : tasks.toList()) {
                    try {
                        String stat = Files.readString(task.resolve("stat"));
                        if (stat.substring(stat.indexOf('(') + 1, stat.lastIndexOf(')')).contains("CompilerThre")) {
                            compiler += statCpu(stat);
                        }
                    } catch (IOException e) {
                        // the thread ended meanwhile: a compiler thread does not
                    }
                }
            }
            return new double[] {all, compiler};
        } catch (IOException | RuntimeException e) {
            return new double[] {0, 0};
        }
    }

    /** utime + stime of a {@code /proc} stat line, in seconds (USER_HZ is 100 on Linux). */
    private static double statCpu(String stat) {
        String[] f = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
        return (Long.parseLong(f[11]) + Long.parseLong(f[12])) / 100.0;
    }

    private Process startSidecar() throws IOException {
        List<String> command = List.of(java(), "-Xmx512m", "-jar", options.sidecarJar().toString(), "sidecar",
                "--connect", server.connectString(), "--namespace", NAMESPACE, "--listen", "127.0.0.1:0",
                "--token-file", dir.resolve("sidecar.token").toString(), "--state-dir", dir.resolve("state").toString(),
                "--handle-idle-timeout", "30m");
        return new ProcessBuilder(command).redirectError(dir.resolve("sidecar.log").toFile()).start();
    }

    /** One phase of Python agents on new keys. */
    private record Agents(long effects, double seconds, double perSecond, Report.Latency latency, double meanMs,
                          long undecided, String firstError) {
    }

    private Agents effects(Path script, Map<String, String> env, int clients, double seconds, String tag,
                           boolean enterAndCross) throws Exception {
        List<Process> agents = new ArrayList<>();
        for (int i = 0; i < clients; i++) {
            String prefix = tag + "-" + options.seed() + "-" + i;
            agents.add(enterAndCross ? python(script, env, "effects", Double.toString(seconds), prefix, "enter-and-cross")
                    : python(script, env, "effects", Double.toString(seconds), prefix));
        }
        // Every agent's interpreter is up and its connection open before any is timed: a fleet's agents are
        // long-lived, and 16 interpreters starting at once would otherwise spend their start-up inside the window.
        List<BufferedReader> outs = new ArrayList<>();
        for (Process agent : agents) {
            BufferedReader out = new BufferedReader(new InputStreamReader(agent.getInputStream(), StandardCharsets.UTF_8));
            String ready = out.readLine();
            if (ready == null || !JSON.readTree(ready).path("ready").asBoolean()) {
                throw new IllegalStateException("a Python agent did not get ready (" + ready + "): " + error(agent));
            }
            outs.add(out);
        }
        for (Process agent : agents) {
            agent.getOutputStream().write('\n');
            agent.getOutputStream().flush();
        }
        List<Double> latencies = new ArrayList<>();
        long undecided = 0;
        String firstError = null;
        double longest = 0;
        for (int a = 0; a < agents.size(); a++) {
            Process agent = agents.get(a);
            String out = outs.get(a).lines().collect(Collectors.joining("\n")).strip();
            agent.waitFor();
            if (out.isEmpty()) {
                throw new IllegalStateException("a Python agent printed nothing: " + error(agent));
            }
            JsonNode r = JSON.readTree(out);
            r.get("latencies_ms").forEach(v -> latencies.add(v.asDouble()));
            undecided += r.get("undecided").asLong();
            if (firstError == null && !r.get("first_error").isNull()) {
                firstError = r.get("first_error").asText();
            }
            longest = Math.max(longest, r.get("seconds").asDouble());
        }
        double[] sorted = latencies.stream().mapToDouble(Double::doubleValue).sorted().toArray();
        Report.Latency latency = new Report.Latency(sorted.length, percentile(sorted, 0.50), percentile(sorted, 0.99),
                percentile(sorted, 0.999), sorted.length == 0 ? 0 : sorted[sorted.length - 1]);
        double mean = Arrays.stream(sorted).average().orElse(0);
        return new Agents(sorted.length, longest, sorted.length / longest, latency, mean, undecided, firstError);
    }

    private static double percentile(double[] sorted, double p) {
        if (sorted.length == 0) {
            return 0;
        }
        return sorted[Math.min(sorted.length - 1, (int) Math.ceil(p * sorted.length) - 1)];
    }

    /** Mean wall time of {@code oncegate run -- true} on new keys, one after another, in ms. */
    private double runEffects() throws Exception {
        double total = 0;
        for (int i = 0; i < options.runEffects(); i++) {
            Path file = dir.resolve("run-" + i + ".txt");
            Files.writeString(file, "run " + options.seed() + " " + i);
            long t0 = System.nanoTime();
            Process run = new ProcessBuilder(java(), "-jar", options.sidecarJar().toString(), "run", "--connect",
                    server.connectString(), "--namespace", NAMESPACE, "--dest", "bench:run", "--file", file.toString(),
                    "--state-dir", dir.resolve("state").toString(), "--", "true")
                    .redirectOutput(ProcessBuilder.Redirect.DISCARD).redirectError(dir.resolve("run.log").toFile()).start();
            if (!run.waitFor(2, TimeUnit.MINUTES) || run.exitValue() != 0) {
                run.destroyForcibly();
                throw new IllegalStateException("oncegate run -- true did not deliver (exit " + (run.isAlive() ? "none"
                        : run.exitValue()) + "); see " + dir.resolve("run.log"));
            }
            total += (System.nanoTime() - t0) / 1e6;
        }
        return total / options.runEffects();
    }

    private Process python(Path script, Map<String, String> env, String... args) throws IOException {
        List<String> command = new ArrayList<>(List.of(options.python().toString(), script.toString()));
        command.addAll(List.of(args));
        ProcessBuilder builder = new ProcessBuilder(command).redirectError(dir.resolve("python-" + args[0] + ".log").toFile());
        builder.environment().putAll(env);
        return builder.start();
    }

    private String error(Process p) throws IOException {
        return "see " + dir + " (python-*.log, sidecar.log)";
    }

    private static String java() {
        return Path.of(System.getProperty("java.home"), "bin", "java").toString();
    }

    /** The sidecar process's heap after a full GC, resident memory and threads. */
    private record Footprint(long heapBytes, long rssBytes, int threads) {
    }

    private static Footprint footprint(long pid) throws Exception {
        jcmd(pid, "GC.run");
        Matcher m = HEAP_USED.matcher(jcmd(pid, "GC.heap_info"));
        long heap = m.find() ? Long.parseLong(m.group(1)) * 1024 : -1;
        long rss = -1;
        int threads = -1;
        for (String line : Files.readAllLines(Path.of("/proc", Long.toString(pid), "status"))) {
            if (line.startsWith("VmRSS:")) {
                rss = Long.parseLong(line.replaceAll("\\D", "")) * 1024;
            } else if (line.startsWith("Threads:")) {
                threads = Integer.parseInt(line.replaceAll("\\D", ""));
            }
        }
        return new Footprint(heap, rss, threads);
    }

    private static String jcmd(long pid, String command) throws Exception {
        Path jcmd = Path.of(System.getProperty("java.home"), "bin", "jcmd");
        Process p = new ProcessBuilder(jcmd.toString(), Long.toString(pid), command).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        p.waitFor(Duration.ofMinutes(1).toMillis(), TimeUnit.MILLISECONDS);
        return out;
    }
}
