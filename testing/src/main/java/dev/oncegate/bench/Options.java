package dev.oncegate.bench;

import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.ThreadLocalRandom;

/**
 * The benchmark's command line: {@code [--quick] [--out FILE] [--seed N] [--trials N]
 * [--trial-seconds S] [--memory-keys N]}. {@code --quick} shrinks every size for a smoke run;
 * the other options override either size.
 *
 * @param quick        the short run (a few seconds per phase)
 * @param out          where the JSON report goes; the log goes beside it ({@code .log})
 * @param seed         names the keys; printed, so a run can be repeated
 * @param trials       trials per arm and workload (at least 3)
 * @param trial        how long each trial runs
 * @param warmup       how long each arm warms up on each workload before the trials (untimed)
 * @param consumedKeys keys consumed beforehand for the consumed workload, per arm
 * @param memoryKeys   keys per arm in the memory phase
 * @param help         print the usage and stop
 * @param sidecarJar   the CLI jar whose {@code oncegate sidecar} and {@code oncegate run} the sidecar phase runs
 * @param python       the Python of the sidecar phase's agents
 * @param pythonClient the directory holding the Python client's package ({@code client/python})
 * @param sidecarHandles open handles at which the sidecar's footprint is measured
 * @param runEffects   how many {@code oncegate run -- true} the sidecar phase times
 * @param startup      the unpacked distribution whose start the startup phase measures, or null for no such phase
 * @param startupRuns  runs of each command in the startup phase
 * @param startupOnly  the startup phase alone: no trials, no memory phase
 * @param backlogKeys  the large size of the backlog phase (0: no backlog phase); the small one is {@link #backlogSmall}
 * @param backlogOnly  the backlog phase alone
 */
record Options(boolean quick, Path out, long seed, int trials, Duration trial, Duration warmup, int consumedKeys,
               long memoryKeys, boolean help, Path sidecarJar, Path python, Path pythonClient, int sidecarHandles,
               int runEffects, Path startup, int startupRuns, boolean startupOnly, int backlogKeys, boolean backlogOnly) {

    static final String USAGE = """
            Usage: java -jar oncegate-bench.jar [--quick] [--out FILE] [--seed N] [--trials N]
                                                [--trial-seconds S] [--memory-keys N]
                                                [--startup DIR [--startup-runs N] [--startup-only]]
              --quick            a short run (about half a minute) with far fewer keys
              --out FILE         the JSON report (default oncegate-bench.json); the log goes beside it
              --seed N           names the keys (default: random, printed)
              --trials N         trials per arm and workload, at least 3 (default 5; --quick 3)
              --trial-seconds S  length of one trial (default 3; --quick 0.15)
              --memory-keys N    keys per arm in the memory phase (default 100000; --quick 100)
              --sidecar-jar PATH the CLI jar for the sidecar phase (default client/target/oncegate.jar; the phase
                                 is skipped, saying so, when it or Python is missing)
              --python PATH      Python for the sidecar phase's agents (default /usr/bin/python3)
              --python-client DIR  the Python client (default client/python)
              --sidecar-handles N  open handles for the sidecar's footprint (default 1000; --quick 50)
              --run-effects N    timed `oncegate run -- true` effects (default 10; --quick 2)
              --startup DIR      also time the unpacked distribution DIR's bin/oncegate (--version, key,
                                 inspect, run -- true) against a bare `java -cp` hello-world
              --startup-runs N   runs of each command in the startup phase (default 10; --quick 3)
              --startup-only     the startup phase alone (with the server it talks to)
              --backlog          also the backlog phase: the backlog query and one exporter scan at 1,000 and at
                                 100,000 consumed keys, the same small backlog in each (--quick: 100 and 2,000)
              --backlog-keys N   the backlog phase's large size (default 100000; --quick 2000)
              --backlog-only     the backlog phase alone
            Exit status: 0 when no arm executed an effect twice, 1 when one did or the run failed, 2 for bad options.""";

    Options {
        if (trials < 3) {
            throw new IllegalArgumentException("--trials: at least 3, got " + trials);
        }
        if (trial.isNegative() || trial.isZero()) {
            throw new IllegalArgumentException("--trial-seconds: must be positive");
        }
        if (sidecarHandles < 1 || runEffects < 1) {
            throw new IllegalArgumentException("--sidecar-handles and --run-effects: at least 1");
        }
        if (memoryKeys < 1) {
            throw new IllegalArgumentException("--memory-keys: at least 1, got " + memoryKeys);
        }
        if (startupRuns < 1) {
            throw new IllegalArgumentException("--startup-runs: at least 1, got " + startupRuns);
        }
        if (startupOnly && startup == null) {
            throw new IllegalArgumentException("--startup-only: needs --startup DIR");
        }
        if (backlogKeys < 0 || backlogKeys > 0 && backlogKeys <= backlogSmall()) {
            throw new IllegalArgumentException("--backlog-keys: more than the small size " + backlogSmall() + ", got " + backlogKeys);
        }
        if (startupOnly && backlogOnly) {
            throw new IllegalArgumentException("--startup-only and --backlog-only: one phase alone at a time");
        }
    }

    /** The backlog phase's small size. */
    int backlogSmall() {
        return quick ? 100 : 1000;
    }

    /** The log file beside the report: {@code report.json} → {@code report.log}. */
    Path logFile() {
        String name = out.getFileName().toString();
        String base = name.endsWith(".json") ? name.substring(0, name.length() - 5) : name;
        return out.resolveSibling(base + ".log");
    }

    /**
     * Parses the command line.
     *
     * @throws IllegalArgumentException naming the option that is wrong
     */
    static Options parse(String... args) {
        boolean quick = false;
        boolean help = false;
        String out = null;
        Long seed = null;
        Integer trials = null;
        Double seconds = null;
        Long memoryKeys = null;
        String sidecarJar = null;
        String python = null;
        String pythonClient = null;
        Integer handles = null;
        Integer runs = null;
        String startup = null;
        Integer startupRuns = null;
        boolean startupOnly = false;
        boolean backlog = false;
        Integer backlogKeys = null;
        boolean backlogOnly = false;
        for (int i = 0; i < args.length; i++) {
            String arg = args[i];
            switch (arg) {
                case "--quick" -> quick = true;
                case "--help", "-h" -> help = true;
                case "--out" -> out = value(args, ++i, arg);
                case "--seed" -> seed = number(value(args, ++i, arg), arg);
                case "--trials" -> trials = Math.toIntExact(number(value(args, ++i, arg), arg));
                case "--trial-seconds" -> seconds = decimal(value(args, ++i, arg), arg);
                case "--memory-keys" -> memoryKeys = number(value(args, ++i, arg), arg);
                case "--sidecar-jar" -> sidecarJar = value(args, ++i, arg);
                case "--python" -> python = value(args, ++i, arg);
                case "--python-client" -> pythonClient = value(args, ++i, arg);
                case "--sidecar-handles" -> handles = Math.toIntExact(number(value(args, ++i, arg), arg));
                case "--run-effects" -> runs = Math.toIntExact(number(value(args, ++i, arg), arg));
                case "--startup" -> startup = value(args, ++i, arg);
                case "--startup-runs" -> startupRuns = Math.toIntExact(number(value(args, ++i, arg), arg));
                case "--startup-only" -> startupOnly = true;
                case "--backlog" -> backlog = true;
                case "--backlog-keys" -> {
                    backlog = true;
                    backlogKeys = Math.toIntExact(number(value(args, ++i, arg), arg));
                }
                case "--backlog-only" -> {
                    backlog = true;
                    backlogOnly = true;
                }
                default -> throw new IllegalArgumentException("unknown option " + arg);
            }
        }
        return new Options(quick, Path.of(out != null ? out : "oncegate-bench.json").toAbsolutePath(),
                seed != null ? seed : ThreadLocalRandom.current().nextLong(),
                trials != null ? trials : quick ? 3 : 5,
                Duration.ofMillis((long) ((seconds != null ? seconds : quick ? 0.15 : 3) * 1000)),
                quick ? Duration.ZERO : Duration.ofSeconds(1),
                quick ? 64 : 2000,
                memoryKeys != null ? memoryKeys : quick ? 100 : 100_000,
                help, Path.of(sidecarJar != null ? sidecarJar : "client/target/oncegate.jar").toAbsolutePath(),
                Path.of(python != null ? python : "/usr/bin/python3"),
                Path.of(pythonClient != null ? pythonClient : "client/python").toAbsolutePath(),
                handles != null ? handles : quick ? 50 : 1000, runs != null ? runs : quick ? 2 : 10,
                startup == null ? null : Path.of(startup), startupRuns != null ? startupRuns : quick ? 3 : 10,
                startupOnly, !backlog ? 0 : backlogKeys != null ? backlogKeys : quick ? 2000 : 100_000, backlogOnly);
    }

    private static String value(String[] args, int i, String option) {
        if (i >= args.length) {
            throw new IllegalArgumentException(option + ": needs a value");
        }
        return args[i];
    }

    private static long number(String text, String option) {
        try {
            return Long.parseLong(text);
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException(option + ": not a whole number: " + text);
        }
    }

    private static double decimal(String text, String option) {
        try {
            return Double.parseDouble(text);
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException(option + ": not a number: " + text);
        }
    }
}
