package dev.oncegate.cli;

import java.io.IOException;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import dev.oncegate.ActionResult;
import dev.oncegate.BoundaryAction;
import dev.oncegate.ProvenNotSentException;

/**
 * The wrapped COMMAND as a {@link BoundaryAction}: started only after the scope was armed,
 * with the key, scope, fencing token and idempotency key in its environment, and its
 * stdin/stdout/stderr inherited untouched. Exit 0 is {@code sent_verified}; exit
 * {@code --not-sent-exit} is {@code not_sent}; a command that could not even be started never
 * ran, so it is {@code not_sent} too; anything else (another exit, a signal, the timeout) is
 * {@code send_status_unknown}.
 *
 * <p>Thread-safety: {@link #deliver} runs on the main thread; {@link #terminate} may be called
 * from a shutdown hook at any time. They meet under {@code lock}: a terminate before the start
 * prevents the start, a terminate after it kills the started process tree.
 */
final class ChildCommand implements BoundaryAction {

    private static final Duration GRACE = Duration.ofSeconds(3);
    /**
     * The highest exit code that may prove {@code not_sent}: 126 and 127 mean the shell could not
     * run the command, and 128+N is how a death by signal N is reported (Java's {@link Process}
     * reports a killed child so too), so a command killed by SIGKILL (137) after delivering could
     * otherwise pass for a proof.
     */
    static final int MAX_NOT_SENT_EXIT = 125;

    private final List<String> command;
    private final Integer notSentExit;
    private final Duration timeout;

    private final Object lock = new Object();
    private Process process;
    private boolean terminating;
    private volatile Integer exitCode;

    ChildCommand(List<String> command, Integer notSentExit, Duration timeout) {
        this.command = List.copyOf(command);
        this.notSentExit = notSentExit;
        this.timeout = timeout;
    }

    @Override
    public ActionResult deliver(Context context) throws ProvenNotSentException, InterruptedException {
        ProcessBuilder builder = new ProcessBuilder(command).inheritIO();
        Map<String, String> env = builder.environment();
        env.put("ONCEGATE_KEY", context.key().key());
        env.put("ONCEGATE_SCOPE", Integer.toString(context.scope()));
        env.put("ONCEGATE_FENCING_TOKEN", Integer.toString(context.token().version()));
        env.put("ONCEGATE_FENCING_ZXID", Long.toString(context.token().zxid()));
        env.put("ONCEGATE_IDEMPOTENCY_KEY", context.idempotencyKey());
        Process p;
        synchronized (lock) {
            if (terminating) {
                throw new ProvenNotSentException("oncegate was told to terminate before the command started");
            }
            try {
                p = builder.start();
            } catch (IOException | RuntimeException e) {
                throw new ProvenNotSentException("the command could not be started (" + e.getMessage() + ")", e);
            }
            process = p;
        }
        boolean exited;
        try {
            exited = timeout == null ? waitUninterruptibly(p, null) : waitUninterruptibly(p, timeout);
        } finally {
            if (p.isAlive()) {
                ProcessTree.kill(p, Duration.ZERO);
            }
        }
        if (!exited) {
            exitCode = exitValueOrNull(p);
            return ActionResult.unconfirmed("command timed out after " + Durations.format(timeout)
                    + " and was killed (its process tree too)");
        }
        int code = p.exitValue();
        exitCode = code;
        boolean wasTerminated;
        synchronized (lock) {
            wasTerminated = terminating;
        }
        if (wasTerminated) {
            // oncegate signalled the command's tree: whatever it exited with (a shell whose child was
            // killed may well exit 0), it did not run to its own end, so nothing is proven either way.
            return ActionResult.unconfirmed("command stopped with exit " + code
                    + " after oncegate received a termination signal");
        }
        if (code == 0) {
            return ActionResult.verified("exit 0");
        }
        if (notSentExit != null && code == notSentExit && code <= MAX_NOT_SENT_EXIT) {
            throw new ProvenNotSentException("command exited " + code + " (--not-sent-exit)");
        }
        return ActionResult.unconfirmed(code > 128
                ? "command exited " + code + " (killed by signal " + (code - 128) + "?)"
                : "command exited " + code);
    }

    /** The command's exit status, or null when it never ran or was killed without one. */
    Integer exitCode() {
        return exitCode;
    }

    /**
     * Called from the shutdown hook: prevents a start that has not happened, or stops the
     * running process tree (SIGTERM, then SIGKILL after a grace period).
     */
    void terminate() {
        Process p;
        synchronized (lock) {
            terminating = true;
            p = process;
        }
        if (p != null && p.isAlive()) {
            ProcessTree.kill(p, GRACE);
        }
    }

    /**
     * Waits for the process to exit, up to {@code limit} (null: forever). An interrupt does not
     * abandon the child: it is killed, since this run can no longer vouch for it.
     */
    private static boolean waitUninterruptibly(Process p, Duration limit) throws InterruptedException {
        try {
            if (limit == null) {
                p.waitFor();
                return true;
            }
            return p.waitFor(limit.toNanos(), TimeUnit.NANOSECONDS);
        } catch (InterruptedException e) {
            ProcessTree.kill(p, Duration.ZERO);
            throw e;
        }
    }

    private static Integer exitValueOrNull(Process p) {
        try {
            return p.exitValue();
        } catch (IllegalThreadStateException e) {
            return null;
        }
    }
}
