package dev.oncegate.cli;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import dev.oncegate.Attempt;
import dev.oncegate.Crossing;
import dev.oncegate.Decision;
import dev.oncegate.EffectKey;
import dev.oncegate.Outcome;
import dev.oncegate.Gate;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;

/**
 * {@code oncegate run}: gates COMMAND as the boundary action of one effect.
 *
 * <p>Order of work: validate every input (nothing touches ZooKeeper before that), connect,
 * enter the gate, and only on {@code proceed} cross: the library arms the scope, then starts
 * the command, then records its outcome. The run's own result is one JSON line on stderr;
 * stdout belongs to the command.
 *
 * <p>A SIGTERM/SIGINT while the command runs kills the command's process tree and waits (at
 * most {@link #SHUTDOWN_GRACE}) until the outcome ({@code send_status_unknown}) is recorded.
 * A signal before the crossing interrupts the entry, which releases any lease it took.
 */
@Command(name = "run", mixinStandardHelpOptions = true,
        description = "Run COMMAND at most once for this effect: only if the gate decides proceed, after arming the scope.",
        footer = {"", "COMMAND gets ONCEGATE_KEY, ONCEGATE_SCOPE, ONCEGATE_FENCING_TOKEN and ONCEGATE_FENCING_ZXID.",
                "Exit 0 → sent_verified; exit --not-sent-exit → not_sent; anything else, a signal or --timeout → send_status_unknown.",
                "run exits with what the records say afterwards: an outcome that could not be written leaves the scope"
                        + " armed, which reads as send_status_unknown (exit 1), never 0.",
                "The run's result is printed as one JSON line on stderr; stdout is COMMAND's."})
final class RunCommand implements Callable<Integer> {

    static final Duration SHUTDOWN_GRACE = Duration.ofSeconds(10);

    @Spec
    CommandSpec spec;

    @Mixin
    CommonOptions common;

    @Mixin
    ConnectOptions connection;

    @Mixin
    EffectKeyOptions effect;

    @Mixin
    StateOptions state;

    @Option(names = "--task-id", paramLabel = "ID",
            description = "This worker's task id, recorded in the lease, armed and outcome records (default: host:pid).")
    String taskId;

    @Option(names = "--wait", paramLabel = "DURATION", defaultValue = "0", converter = Durations.class,
            description = "How long to wait for another active executor to finish (default: 0, do not wait).")
    Duration wait;

    @Option(names = "--not-sent-exit", paramLabel = "CODE",
            description = "COMMAND's exit code (1..125) that proves nothing was delivered (no default). 126 and up mean"
                    + " 'not executable' or death by a signal, which never prove anything.")
    Integer notSentExit;

    @Option(names = "--timeout", paramLabel = "DURATION", converter = Durations.class,
            description = "Kill COMMAND's process tree after this long; the outcome is then send_status_unknown.")
    Duration timeout;

    @Parameters(paramLabel = "COMMAND", arity = "0..*",
            description = "The command to gate, after `--`, with its arguments.")
    List<String> command;

    @Override
    public Integer call() throws InterruptedException {
        String namespace = common.namespace();
        ZooKeeperConnection.Settings settings = connection.settings();
        EffectKey key = effect.resolve(spec);
        validate();
        ChildCommand action = new ChildCommand(command, notSentExit, timeout);
        Shutdown shutdown = new Shutdown(action, Thread.currentThread());
        Runtime.getRuntime().addShutdownHook(shutdown.hook);
        Map<String, Object> result = null;
        int code = ExitCode.STOP_UNAVAILABLE;
        try (ZooKeeperConnection zk = ZooKeeperConnection.open(settings, namespace);
             Gate gate = zk.gate(state, b -> {
                 if (taskId != null) {
                     b.taskId(taskId);
                 }
             });
             Attempt attempt = enter(zk, gate, key)) {
            Decision decision = attempt.decision();
            if (decision instanceof Decision.Stop stop) {
                result = stopResult(key, stop);
                code = ExitCode.of(stop);
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
        } finally {
            if (result != null) {
                System.err.println(Json.line(result));
                System.err.flush();
            }
            shutdown.done(code);
        }
        return code;
    }

    /** Learns the namespace's roles first (for the ACLs of the election nodes Curator creates), then enters. */
    private Attempt enter(ZooKeeperConnection zk, Gate gate, EffectKey key) throws InterruptedException {
        zk.learnRoles();
        return gate.enter(key, wait);
    }

    /** Checks what picocli cannot: everything before any connection. */
    private void validate() {
        if (command == null || command.isEmpty()) {
            throw new ParameterException(spec.commandLine(), "missing COMMAND: give it after `--`, e.g. -- ./deliver.sh");
        }
        if (notSentExit != null && (notSentExit < 1 || notSentExit > ChildCommand.MAX_NOT_SENT_EXIT)) {
            throw new ParameterException(spec.commandLine(), "--not-sent-exit: must be an exit code from 1 to "
                    + ChildCommand.MAX_NOT_SENT_EXIT + ", got " + notSentExit + " (126 and 127 mean the command could not"
                    + " be run, 128+N that a signal killed it: neither proves that nothing was delivered)");
        }
        if (taskId != null && (taskId.isEmpty() || taskId.length() > 256)) {
            throw new ParameterException(spec.commandLine(),
                    "--task-id: must be 1 to 256 characters, got " + taskId.length());
        }
        if (timeout != null && timeout.isZero()) {
            throw new ParameterException(spec.commandLine(), "--timeout: must be more than zero");
        }
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
        out.put("scope", crossed.scope());
        out.put("token", crossed.token().version());
        out.put("zxid", crossed.token().zxid());
        out.put("outcome", crossed.outcome().wireName());
        out.put("recorded", crossed.recorded());
        // What every later contender reads: an outcome that could not be written leaves the scope armed.
        out.put("reads_as", crossed.recorded() ? crossed.outcome().wireName() : Outcome.SEND_STATUS_UNKNOWN.wireName());
        out.put("command_exit", action.exitCode());
        out.put("detail", crossed.detail());
        return out;
    }

    private static Map<String, Object> base(String decision, String reason, EffectKey key) {
        Map<String, Object> out = Json.object();
        out.put("decision", decision);
        out.put("reason", reason);
        out.put("key", key.key());
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
     * The shutdown hook and its hand-shake with the main thread. Before the crossing, a signal
     * interrupts the main thread (entering gives up and releases any lease). From the crossing
     * on, it stops the command (or prevents its start) and lets the main thread record the
     * outcome, then exits with the run's code. Either way it waits at most {@link #SHUTDOWN_GRACE}.
     */
    private static final class Shutdown {
        final Thread hook;
        private final ChildCommand action;
        private final Thread main;
        private final CountDownLatch finished = new CountDownLatch(1);
        private volatile boolean crossing;
        private volatile int code = ExitCode.STOP_UNAVAILABLE;

        Shutdown(ChildCommand action, Thread main) {
            this.action = action;
            this.main = main;
            this.hook = new Thread(this::onSignal, "oncegate-shutdown");
        }

        void crossing() {
            crossing = true;
        }

        void done(int exitCode) {
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
            action.terminate();
            if (!crossing) {
                main.interrupt();
            }
            try {
                if (finished.await(SHUTDOWN_GRACE.toMillis(), TimeUnit.MILLISECONDS)) {
                    System.err.flush();
                    Runtime.getRuntime().halt(code);
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }
}
