package dev.oncegate.cli;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import dev.oncegate.Attempt;
import dev.oncegate.Crossing;
import dev.oncegate.Decision;
import dev.oncegate.EffectKey;
import dev.oncegate.Evidence;
import dev.oncegate.Gate;
import dev.oncegate.StopReason;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.ParameterException;

/**
 * {@code oncegate run}: gates COMMAND as the boundary action of one effect.
 *
 * <p>Order of work: validate every input (nothing touches ZooKeeper before that), connect,
 * enter the gate, and only on {@code proceed} cross: the library arms the scope, then starts
 * the command, then records its outcome. The run's own result is one JSON line on stderr
 * (stdout belongs to the command), and also in the {@link ResultChannel} a script asked for.
 *
 * <p>A SIGTERM/SIGINT while the command runs kills the command's process tree and waits (at
 * most {@code --shutdown-grace}) until the outcome ({@code send_status_unknown}) is recorded;
 * past the grace it exits 1 without its result line (the scope may stay armed, which reads as
 * {@code send_status_unknown}). A signal before the crossing interrupts the entry, which releases
 * any lease it took (exit 13 if that has not ended within the grace).
 */
@Command(name = "run", mixinStandardHelpOptions = true,
        customSynopsis = {"oncegate run [OPTIONS] (--dest=PROVIDER:ID | --dest-name=PROVIDER:TITLE)",
                "                    --file=PATH -- COMMAND [ARG...]"},
        description = "Run COMMAND at most once for this effect: only if the gate decides proceed, after arming the scope.",
        footer = {"", "COMMAND gets ONCEGATE_KEY, ONCEGATE_SCOPE, ONCEGATE_FENCING_TOKEN, ONCEGATE_FENCING_ZXID and"
                        + " ONCEGATE_IDEMPOTENCY_KEY (the same for every retry within this scope, new in every later scope and"
                        + " after retention removed the key: hand it to the provider).",
                "Exit 0 → sent_verified; exit --not-sent-exit → not_sent; anything else, a signal or --timeout → send_status_unknown.",
                "run exits with what the records say afterwards: an outcome that could not be written leaves the scope"
                        + " armed, which reads as send_status_unknown (exit 1), never 0.",
                "The run's result is one JSON line on stderr (stdout is COMMAND's). With --result-file or --result-fd the"
                        + " same line goes there too, whenever run reached a decision, and for bad input found after"
                        + " parsing (\"reason\":\"bad_input\", exit 2) or a failure before any decision"
                        + " (\"reason\":\"failed\", exit 13); not for arguments that do not parse, nor when the result"
                        + " option itself is bad. COMMAND inherits neither.",
                "--metrics-textfile adds the run's decision and outcome counts to a node_exporter textfile; a file that"
                        + " cannot be written is reported on stderr and never changes the exit code.",
                "",
                "Exit codes: 0 this run delivered (sent_verified); 1 this run crossed and the outcome is unknown"
                        + " (send_status_unknown); 2 usage error or bad input, nothing written; 3 COMMAND proved not_sent,"
                        + " the key is free again; 10 stopped: consumed, sent_verified; 11 stopped: consumed, status unknown"
                        + " or armed by another executor; 12 stopped: another executor is active (busy), or this one was"
                        + " fenced; 13 stopped: state unavailable (fail closed)."})
final class RunCommand extends NamespaceCommand {

    /** The most {@code --shutdown-grace} may be: a supervisor's stop timeout is minutes, not hours. */
    static final Duration MAX_SHUTDOWN_GRACE = Duration.ofHours(1);
    static final String TASK_ID_ENV = "ONCEGATE_TASK_ID";
    static final String METRICS_TEXTFILE_ENV = "ONCEGATE_METRICS_TEXTFILE";
    /** The defaults of --wait and --shutdown-grace, as picocli and {@link QuickRun} read them. */
    static final String DEFAULT_WAIT = "0";
    static final String DEFAULT_SHUTDOWN_GRACE = "10s";

    @Mixin
    EffectKeyOptions effect;

    @Option(names = "--task-id", paramLabel = "ID",
            description = "This worker's task id, recorded in the lease, armed and outcome records (default:"
                    + " $$" + TASK_ID_ENV + ", else host:pid).")
    String taskId;

    @Option(names = "--wait", paramLabel = "DURATION", defaultValue = DEFAULT_WAIT, converter = Durations.class,
            description = "How long to wait for another active executor to finish (default: 0, do not wait).")
    Duration wait;

    @Option(names = "--not-sent-exit", paramLabel = "CODE",
            description = "COMMAND's exit code (1..125) that proves nothing was delivered (no default). 126 and up mean"
                    + " 'not executable' or death by a signal, which never prove anything.")
    Integer notSentExit;

    @Option(names = "--shutdown-grace", paramLabel = "DURATION", defaultValue = DEFAULT_SHUTDOWN_GRACE, converter = Durations.class,
            description = "After a SIGTERM/SIGINT, how long to wait for the outcome to be recorded (ZooKeeper may be"
                    + " unreachable) before exiting 1 without a result line (default: ${DEFAULT-VALUE}; at most 1h). Keep"
                    + " the supervisor's stop timeout above it (systemd TimeoutStopSec, Kubernetes"
                    + " terminationGracePeriodSeconds).")
    Duration shutdownGrace;

    @Option(names = "--timeout", paramLabel = "DURATION", converter = Durations.class,
            description = "Kill COMMAND's process tree after this long; the outcome is then send_status_unknown.")
    Duration timeout;

    /** The result's own channel, a descriptor: see {@link ResultChannel#descriptor}. */
    @Option(names = "--result-fd", paramLabel = "N",
            description = "Also write the result line to descriptor N, which the caller opened: --result-fd 3 3>result.json.")
    Integer resultFd;

    /** The result's own channel, a file: see {@link ResultChannel#file}. */
    @Option(names = "--result-file", paramLabel = "PATH",
            description = "Also write the result line to PATH, atomically (a complete file or none; an earlier file at"
                    + " PATH is removed when run starts).")
    Path resultFile;

    @Option(names = "--metrics-textfile", paramLabel = "PATH", defaultValue = "${env:" + METRICS_TEXTFILE_ENV + "}",
            description = "When the run is over, add its counts (decisions by kind and reason, outcomes, election wait"
                    + " and boundary time) to this Prometheus textfile-collector file, which node_exporter's textfile"
                    + " collector serves: the runs of a host add up in it, safely when concurrent. The name must end in"
                    + " .prom and its directory exist (default: $$ONCEGATE_METRICS_TEXTFILE; none: no file).")
    Path metricsTextfile;

    @Parameters(paramLabel = "COMMAND", arity = "0..*",
            description = "The command to gate, after `--`, with its arguments.")
    List<String> command;

    /** Every input of the run, checked: nothing is connected, started or written before it exists. */
    private record Input(ZooKeeperConnection.Settings settings, EffectKey key, Path textfile) {
    }

    @Override
    public Integer call() throws InterruptedException {
        Shutdown shutdown = Shutdown.install(Thread.currentThread());
        try (ResultChannel channel = resultChannel()) {
            Input input;
            try {
                input = input();
            } catch (RuntimeException e) {
                writeFailure(channel, e, shutdown);
                throw shutdown.signalled() ? new ReportedFailure(e) : e;
            }
            return run(channel, input, shutdown);
        } finally {
            shutdown.done(ExitCode.STOP_UNAVAILABLE); // a no-op when the run's own code was set
        }
    }

    /**
     * {@link #call} for a command line that {@link QuickRun} parsed instead of picocli: null, having
     * done nothing, when the result channel cannot be used or an input is bad, for picocli's path to
     * report in its own words (the hint to run {@code --help}, the bad-input result line); else what
     * {@link #call} returns. The channel is opened first, as {@link #call} opens it, so that a result
     * file left by an earlier run is gone before the content is read (a signal while a large file is
     * hashed must not leave the earlier result looking like this run's); a declined line has then
     * removed only what picocli's path removes first too.
     */
    Integer callIfValid() throws InterruptedException {
        Shutdown shutdown = Shutdown.install(Thread.currentThread());
        try {
            ResultChannel channel;
            try {
                channel = resultChannel();
            } catch (RuntimeException e) {
                return null;
            }
            try (channel) {
                Input input;
                try {
                    input = input();
                } catch (RuntimeException e) {
                    if (!shutdown.signalled()) {
                        return null;
                    }
                    writeFailure(channel, e, shutdown);
                    throw new ReportedFailure(e);
                }
                return run(channel, input, shutdown);
            }
        } finally {
            shutdown.done(ExitCode.STOP_UNAVAILABLE); // a no-op when the run's own code was set
        }
    }

    /**
     * Writes the failure result line to the channel. After a signal the main thread may still be
     * flagged interrupted (a read it interrupted threw ClosedByInterruptException, which leaves the
     * flag set), and a flagged thread cannot write a file channel: the flag is cleared first, the
     * signal having been acted on (the run ends, exit 13). After a signal it also says why on
     * stderr, once, here: the shutdown hook halts the JVM as soon as the run is done, and the
     * CLI's handler, which would say it after that, loses the race (it then prints nothing, see
     * {@link ReportedFailure}).
     */
    private static void writeFailure(ResultChannel channel, Exception e, Shutdown shutdown) {
        if (shutdown.signalled()) {
            Thread.interrupted();
        }
        if (e instanceof ReportedFailure) {
            return; // written and said when it was made
        }
        Map<String, Object> result = failureResult(e, shutdown);
        channel.write(Json.line(result));
        if (shutdown.signalled()) {
            System.err.println("oncegate run: " + result.get("detail"));
            System.err.flush();
        }
    }

    /**
     * A failure after a termination signal, already written to the result channel and stderr by
     * {@link #writeFailure}: the CLI's handler only exits 13 for it (the shutdown hook halts the
     * JVM with that code meanwhile).
     */
    static final class ReportedFailure extends RuntimeException {
        ReportedFailure(Exception cause) {
            super(cause.getMessage(), cause);
        }
    }

    private static String signalledBefore(Exception e) {
        return "a termination signal arrived before any decision; nothing was armed, nothing run (" + e.getMessage() + ")";
    }

    private Input input() {
        ZooKeeperConnection.Settings settings = zookeeper.settings();
        EffectKey key = effect.resolve(this);
        validate();
        return new Input(settings, key, textfile());
    }

    private Integer run(ResultChannel channel, Input input, Shutdown shutdown) throws InterruptedException {
        try {
            return gated(channel, input, shutdown);
        } catch (RuntimeException | InterruptedException e) {
            writeFailure(channel, e, shutdown);
            throw e;
        }
    }

    /** The channel of --result-file or --result-fd, checked before any other input. */
    private ResultChannel resultChannel() {
        if (resultFile != null && resultFd != null) {
            throw usage("--result-file and --result-fd are mutually exclusive: give the result one channel");
        }
        if (resultFile != null) {
            refuseResultFileOverAnInput();
            return ResultChannel.file(resultFile);
        }
        return resultFd != null ? ResultChannel.descriptor(resultFd) : ResultChannel.none();
    }

    /**
     * Refuses a --result-file that names a file the run reads: opening the channel removes it, and
     * the result would then replace it (the content file that the key was computed from, the
     * credentials). Checked before the channel removes anything, on either parser's path.
     */
    private void refuseResultFileOverAnInput() {
        Map<String, Path> inputs = new LinkedHashMap<>();
        inputs.put("--file", effect.file);
        inputs.put("--auth-file", zookeeper.connection.authFile);
        String zkClientConfig = zookeeper.connection.zkClientConfig;
        inputs.put("--zk-client-config", zkClientConfig == null || zkClientConfig.isEmpty() ? null : Path.of(zkClientConfig));
        inputs.put("--metrics-textfile", metricsTextfile == null || metricsTextfile.toString().isEmpty() ? null : metricsTextfile);
        for (Map.Entry<String, Path> input : inputs.entrySet()) {
            if (input.getValue() != null && sameFile(resultFile, input.getValue())) {
                throw usage("--result-file: " + resultFile + " is also " + input.getKey() + " (" + input.getValue()
                        + "): the result line would replace it; give the result a path of its own");
            }
        }
    }

    /** Whether {@code a} and {@code b} name one file: the same path, or (when both exist) one file through links. */
    static boolean sameFile(Path a, Path b) {
        Path x = a.toAbsolutePath().normalize();
        Path y = b.toAbsolutePath().normalize();
        if (x.equals(y)) {
            return true;
        }
        try {
            return Files.exists(x) && Files.exists(y) && Files.isSameFile(x, y);
        } catch (IOException e) {
            return false;
        }
    }

    private Integer gated(ResultChannel channel, Input input, Shutdown shutdown) throws InterruptedException {
        ZooKeeperConnection.Settings settings = input.settings();
        EffectKey key = input.key();
        Path textfile = input.textfile();
        RunMetrics metrics = textfile == null ? null : new RunMetrics(textfile, zookeeper.namespace(), Clock.systemUTC());
        ChildCommand action = new ChildCommand(command, notSentExit, timeout);
        shutdown.gate(action, shutdownGrace);
        Map<String, Object> result = null;
        int code = ExitCode.STOP_UNAVAILABLE;
        try (ZooKeeperConnection zk = zookeeper.open(settings);
             Gate gate = zk.gate(b -> {
                 if (taskId() != null) {
                     b.taskId(taskId());
                 }
                 if (metrics != null) {
                     b.meterRegistry(metrics.registry());
                 }
             });
             Attempt attempt = enter(zk, gate, key, metrics)) {
            Decision decision = attempt.decision();
            if (decision instanceof Decision.Stop stop) {
                Decision.Stop said = stop;
                if (stop.reason() == StopReason.ZOOKEEPER_UNREACHABLE) {
                    // The gate waited only what was left of --connect-timeout (nothing, by then): the result
                    // line says what the command waited for, as stderr does.
                    System.err.println("oncegate run: " + zk.unreachable());
                    Evidence e = stop.evidence();
                    said = new Decision.StopUnavailable(stop.reason(),
                            new Evidence(e.path(), e.scope(), e.task(), e.host(), e.at(), zk.unreachable()));
                }
                result = stopResult(key, said);
                code = ExitCode.of(said);
            } else {
                shutdown.crossing();
                try {
                    Crossing crossing = attempt.cross(action);
                    result = crossingResult(key, (Decision.Proceed) decision, crossing, action);
                    code = ExitCode.of(crossing);
                } catch (InterruptedException e) {
                    // A signal arrived between the decision and the crossing: nothing was armed, nothing run.
                    Decision.Stop stop = (Decision.Stop) attempt.decision();
                    result = stopResult(key, stop);
                    code = ExitCode.of(stop);
                }
            }
        } catch (RuntimeException | InterruptedException e) {
            if (result == null) {
                // Before shutdown.done: a shutdown hook waiting for it would halt the JVM right after.
                writeFailure(channel, e, shutdown);
                if (shutdown.signalled()) {
                    throw new ReportedFailure(e);
                }
            }
            throw e;
        } finally {
            if (metrics != null) {
                metrics.write();
            }
            if (result != null) {
                String line = Json.line(result);
                System.err.println(line);
                System.err.flush();
                channel.write(line);
            }
            shutdown.done(code);
        }
        return code;
    }

    /**
     * Puts the gate's series in the metrics textfile at zero when they are new there (the gate
     * learnt the namespace's roles when it was made), then enters.
     */
    private Attempt enter(ZooKeeperConnection zk, Gate gate, EffectKey key, RunMetrics metrics) throws InterruptedException {
        if (metrics != null) {
            metrics.addMissingAtZero();
        }
        return gate.enter(key, wait);
    }

    /** Checks what picocli cannot: everything before any connection. */
    private void validate() {
        if (command == null || command.isEmpty()) {
            throw usage("missing COMMAND: give it after `--`, e.g. -- ./deliver.sh");
        }
        String unpassable = ChildCommand.unpassable(command);
        if (unpassable != null) {
            throw usage(unpassable);
        }
        if (notSentExit != null && (notSentExit < 1 || notSentExit > ChildCommand.MAX_NOT_SENT_EXIT)) {
            throw usage("--not-sent-exit: must be an exit code from 1 to "
                    + ChildCommand.MAX_NOT_SENT_EXIT + ", got " + notSentExit + " (126 and 127 mean the command could not"
                    + " be run, 128+N that a signal killed it: neither proves that nothing was delivered)");
        }
        String task = taskId();
        if (task != null && (task.isEmpty() || task.length() > 256)) {
            throw usage((taskId != null ? "--task-id" : TASK_ID_ENV)
                    + ": must be 1 to 256 characters, got " + task.length());
        }
        if (timeout != null && timeout.isZero()) {
            throw usage("--timeout: must be more than zero");
        }
        if (shutdownGrace.isZero() || shutdownGrace.compareTo(MAX_SHUTDOWN_GRACE) > 0) {
            throw usage("--shutdown-grace: must be more than zero and at most 1h, got " + Durations.format(shutdownGrace));
        }
    }

    /** --task-id, else a non-empty $ONCEGATE_TASK_ID, else null (the gate's default, host:pid). */
    private String taskId() {
        if (taskId != null) {
            return taskId;
        }
        String env = System.getenv(TASK_ID_ENV);
        return env == null || env.isEmpty() ? null : env;
    }

    /**
     * The result line of a run that reached no decision: bad input (exit 2), or a failure before any
     * decision (13), a termination signal's interrupt included, whatever it made a read throw.
     */
    private static Map<String, Object> failureResult(Exception e, Shutdown shutdown) {
        boolean signalled = shutdown != null && shutdown.signalled();
        boolean badInput = !signalled && (e instanceof ParameterException || e instanceof IllegalArgumentException);
        Map<String, Object> out = base(null, badInput ? "bad_input" : "failed", null);
        String detail = e.getMessage() != null ? e.getMessage() : e.toString();
        if (signalled) {
            detail = e instanceof InterruptedException
                    ? "interrupted by a termination signal before a decision; nothing was armed, nothing run"
                            + (e.getMessage() != null ? " (" + e.getMessage() + ")" : "")
                    : signalledBefore(e);
        }
        out.put("detail", detail);
        return out;
    }

    /**
     * The {@code --metrics-textfile}, absolute, or null (an empty $ONCEGATE_METRICS_TEXTFILE
     * counts as unset); node_exporter reads only {@code *.prom} files, in a directory that exists.
     */
    private Path textfile() {
        if (metricsTextfile == null || metricsTextfile.toString().isEmpty()) {
            return null;
        }
        Path file = metricsTextfile.toAbsolutePath().normalize();
        String problem = null;
        if (!file.getFileName().toString().endsWith(".prom") || file.getFileName().toString().equals(".prom")) {
            problem = "the name must end in .prom, or node_exporter's textfile collector never reads it";
        } else if (!Files.isDirectory(file.getParent())) {
            problem = "its directory " + file.getParent() + " does not exist (node_exporter's --collector.textfile.directory)";
        } else if (Files.exists(file) && !Files.isRegularFile(file)) {
            problem = "it exists and is not a regular file";
        }
        if (problem != null) {
            throw usage("--metrics-textfile: " + file + ": " + problem);
        }
        return file;
    }

    private static Map<String, Object> stopResult(EffectKey key, Decision.Stop stop) {
        Map<String, Object> out = base(stop.kind(), stop.reason().wireName(), key);
        out.put("scope", stop.evidence().scope() < 0 ? null : stop.evidence().scope());
        out.put("evidence", Json.evidence(stop.evidence()));
        return out;
    }

    private static Map<String, Object> crossingResult(EffectKey key, Decision.Proceed proceed, Crossing crossing,
                                                      ChildCommand action) {
        if (crossing instanceof Crossing.Refused refused) {
            // Arming was refused: the command never ran.
            Map<String, Object> out = stopResult(key, refused.stop());
            out.put("scope", proceed.scope());
            out.put("token", proceed.token().version());
            out.put("zxid", proceed.token().zxid());
            return out;
        }
        Crossing.Crossed crossed = (Crossing.Crossed) crossing;
        Map<String, Object> out = base(proceed.kind(), null, key);
        Render.crossed(out, crossed);
        out.put("command_exit", action.exitCode());
        out.put("detail", crossed.detail());
        return out;
    }

    private static Map<String, Object> base(String decision, String reason, EffectKey key) {
        Map<String, Object> out = Json.object();
        out.put("decision", decision);
        out.put("reason", reason);
        out.put("key", key == null ? null : key.key());
        out.put("scope", null);
        out.put("token", null);
        out.put("zxid", null);
        out.put("outcome", null);
        out.put("recorded", null);
        out.put("reads_as", null);
        out.put("command_exit", null);
        out.put("detail", null);
        out.put("evidence", null);
        return out;
    }

    /**
     * The shutdown hook and its hand-shake with the main thread, installed before the run reads
     * anything. Before the crossing, a signal interrupts the main thread (reading the content
     * gives up, entering gives up and releases any lease it took), which ends with exit 13 and the
     * failure result line. From the crossing on, it stops the command (or prevents its start) and
     * lets the main thread record the outcome, then exits with the run's code. Either way it waits
     * at most the grace for the main thread ({@code --shutdown-grace} once the run has its inputs,
     * its default before), and then exits with a code of the table (see {@link #gaveUp}).
     */
    private static final class Shutdown {
        final Thread hook;
        private final Thread main;
        private final CountDownLatch finished = new CountDownLatch(1);
        private volatile ChildCommand action;
        private volatile Duration grace = Durations.parse(DEFAULT_SHUTDOWN_GRACE);
        private volatile boolean crossing;
        private volatile boolean signalled;
        private volatile int code = ExitCode.STOP_UNAVAILABLE;

        private Shutdown(Thread main) {
            this.main = main;
            this.hook = new Thread(this::onSignal, "oncegate-shutdown");
        }

        /** A hook for the run on {@code main}, registered. */
        static Shutdown install(Thread main) {
            Shutdown shutdown = new Shutdown(main);
            Runtime.getRuntime().addShutdownHook(shutdown.hook);
            return shutdown;
        }

        /** The run has its command and its grace: a signal from now on stops the command too. */
        void gate(ChildCommand command, Duration shutdownGrace) {
            grace = shutdownGrace;
            action = command;
            if (signalled) {
                command.terminate(); // the signal came just before: no start
            }
        }

        void crossing() {
            crossing = true;
        }

        /** Whether a termination signal has arrived. */
        boolean signalled() {
            return signalled;
        }

        /** The main thread is done with {@code exitCode}; only the first call counts. */
        void done(int exitCode) {
            if (finished.getCount() == 0) {
                return;
            }
            code = exitCode;
            finished.countDown();
            try {
                Runtime.getRuntime().removeShutdownHook(hook);
            } catch (IllegalStateException alreadyShuttingDown) {
                // the hook is running and waits for `finished`
            }
        }

        private void onSignal() {
            if (finished.getCount() == 0) {
                return;
            }
            signalled = true;
            ChildCommand command = action;
            if (command != null) {
                command.terminate();
            }
            if (!crossing) {
                main.interrupt();
            }
            int exit;
            try {
                if (finished.await(grace.toMillis(), TimeUnit.MILLISECONDS)) {
                    exit = code;
                } else {
                    exit = gaveUp();
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                exit = gaveUp();
            }
            System.err.flush();
            Runtime.getRuntime().halt(exit);
        }

        /**
         * The grace ran out before the main thread finished (ZooKeeper unreachable while it
         * records the outcome, say). Left alone, the JVM would end with the signal's 128+N, which
         * is no code of the table. From the crossing on the records may say armed, which reads as
         * {@code send_status_unknown}: exit 1. Before it nothing was armed: exit 13.
         */
        private int gaveUp() {
            int exit = crossing ? ExitCode.SEND_STATUS_UNKNOWN : ExitCode.STOP_UNAVAILABLE;
            System.err.println("oncegate run: gave up waiting " + Durations.format(grace) + " for the outcome to be"
                    + " recorded after a signal; exit " + exit + (crossing
                    ? ": the scope may stay armed, and then reads as send_status_unknown to every later run"
                    : ": nothing was armed") + " (`oncegate inspect` shows what was recorded)");
            return exit;
        }
    }
}
