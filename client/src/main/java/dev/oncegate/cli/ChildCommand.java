package dev.oncegate.cli;

import java.io.File;
import java.io.IOException;
import java.nio.charset.Charset;
import java.nio.charset.CharsetEncoder;
import java.nio.file.Files;
import java.nio.file.InvalidPathException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
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
 * <p>When {@code run} itself dies without running its shutdown hook (SIGKILL, the OOM killer), the
 * command must not go on delivering unwatched: it is started through util-linux's
 * {@code setpriv --pdeathsig TERM}, so the kernel sends it SIGTERM when the thread that started
 * it ends. That thread is the main thread, which lives as long as the run. Only the command's own
 * process gets the signal: a shell that starts children of its own should {@code exec} its last
 * command or forward the signal (a trap). Where setpriv is missing or too old to know
 * {@code --pdeathsig} (util-linux before 2.33), the command starts as it is, and a SIGKILLed run
 * leaves it running (it delivers unrecorded: its key reads {@code send_status_unknown}); systemd's
 * {@code KillMode=mixed} and a container's PID namespace end it anyway. It is also started under
 * util-linux's {@code setsid}, in a session and process group of its own, so that a signal meant
 * for run's group (Ctrl-C, a hangup, {@code kill -- -PGID}) reaches run alone: run marks the command
 * terminated, then signals it, and whatever it exits with then proves nothing. A signal sent to the
 * command itself (systemd's {@code KillMode=control-group} signals every process of the unit) is
 * the command's to answer, and what it exits with is recorded. What works here is found out by
 * running it once per run ({@link #workingPrefix}), in parallel with connecting to ZooKeeper.
 *
 * <p>Thread-safety: {@link #deliver} runs on the main thread; {@link #terminate} may be called
 * from a shutdown hook at any time. They meet under {@code lock}: a terminate before the start
 * prevents the start, a terminate after it kills the started process tree.
 */
final class ChildCommand implements BoundaryAction {

    /** Between SIGTERM and SIGKILL when run stops the command's tree (a supervisor's stop timeout must exceed it). */
    static final Duration GRACE = Duration.ofSeconds(3);
    /**
     * The highest exit code that may prove {@code not_sent}: 126 and 127 mean the shell could not
     * run the command, and 128+N is how a death by signal N is reported (Java's {@link Process}
     * reports a killed child so too), so a command killed by SIGKILL (137) after delivering could
     * otherwise pass for a proof.
     */
    static final int MAX_NOT_SENT_EXIT = 125;
    /** What makes the kernel signal the command when its parent dies (util-linux 2.33 and later). */
    static final List<String> PARENT_DEATH_SIGNAL = List.of("--pdeathsig", "TERM", "--");
    /** Where util-linux's programs are looked for. */
    private static final List<String> BIN = List.of("/usr/bin", "/bin");
    private static final Duration PROBE = Duration.ofSeconds(5);

    private final List<String> command;
    private final Integer notSentExit;
    private final Duration timeout;
    /** What the command is started under ({@link #workingPrefix}); found while the run connects. */
    private final CompletableFuture<List<String>> prefix;

    private final Object lock = new Object();
    private Process process;
    private boolean terminating;
    private volatile Integer exitCode;

    ChildCommand(List<String> command, Integer notSentExit, Duration timeout) {
        this.command = List.copyOf(command);
        this.notSentExit = notSentExit;
        this.timeout = timeout;
        this.prefix = CompletableFuture.supplyAsync(ChildCommand::workingPrefix);
    }

    @Override
    public ActionResult deliver(Context context) throws ProvenNotSentException, InterruptedException {
        ProcessBuilder builder = new ProcessBuilder(command).inheritIO();
        Map<String, String> env = builder.environment();
        builder.command(commandLine(env.get("PATH")));
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

    /**
     * The command line to start: the command under {@link #workingPrefix} ({@code setsid},
     * {@code setpriv --pdeathsig TERM}) when that works here and the command can be found (a command
     * that cannot be found is started as it is, so that its start fails here and proves
     * {@code not_sent}; under setpriv it would exit 127, which proves nothing).
     */
    List<String> commandLine(String path) throws InterruptedException {
        List<String> under;
        try {
            under = prefix.get();
        } catch (ExecutionException e) {
            under = List.of();
        }
        if (under.isEmpty() || !executable(command.get(0), path)) {
            return command;
        }
        List<String> out = new ArrayList<>(under);
        out.addAll(command);
        return out;
    }

    /**
     * Why this JVM cannot hand {@code command} to the new process exactly as given, or null when it
     * can. {@link ProcessBuilder} encodes the program and its arguments in {@code sun.jnu.encoding},
     * the locale's charset, replacing what it cannot encode with {@code ?}: under an ASCII locale
     * ({@code LANG=C}) a non-ASCII argument would reach the command changed (a different effect
     * delivered), and a non-ASCII program would not be found after the arming (the key consumed for
     * a command that never started). {@code bin/oncegate} always runs the JVM under a UTF-8 locale.
     */
    static String unpassable(List<String> command) {
        String name = System.getProperty("sun.jnu.encoding");
        CharsetEncoder encoder;
        try {
            encoder = name == null ? null : Charset.forName(name).newEncoder();
        } catch (RuntimeException unknown) {
            encoder = null;
        }
        for (int i = 0; encoder != null && i < command.size(); i++) {
            if (!encoder.canEncode(command.get(i))) {
                return "COMMAND " + (i == 0 ? "(the program)" : "argument " + i) + " has text that this JVM cannot pass on"
                        + " in its locale's charset (" + name + ", LANG=" + System.getenv("LANG") + "): the command would"
                        + " get '?' in its place; run oncegate under a UTF-8 locale (LC_ALL=C.UTF-8), as bin/oncegate does";
            }
        }
        return null;
    }

    /** Whether {@code program} names an executable file, directly or on {@code path}, as execvp would find it. */
    static boolean executable(String program, String path) {
        try {
            if (program.contains("/")) {
                return Files.isRegularFile(Path.of(program)) && Files.isExecutable(Path.of(program));
            }
            if (path == null) {
                return false;
            }
            for (String dir : path.split(File.pathSeparator, -1)) {
                Path candidate = Path.of(dir.isEmpty() ? "." : dir, program);
                if (Files.isRegularFile(candidate) && Files.isExecutable(candidate)) {
                    return true;
                }
            }
            return false;
        } catch (InvalidPathException notAPath) {
            // Not a file name here: started as it is, the command fails to start, which proves not_sent.
            return false;
        }
    }

    /**
     * What the command is started under, the first of these that runs {@code true} here: util-linux's
     * {@code setsid setpriv --pdeathsig TERM --}, {@code setpriv --pdeathsig TERM --}, {@code setsid};
     * none when none does. {@code setsid} makes the command the leader of a session and a process
     * group of its own (started by the JVM, never a group leader, it does not fork): a signal to
     * run's process group (Ctrl-C, a terminal's hangup, {@code kill -- -PGID}, a container runtime's
     * group forward) reaches run alone, which marks the command as terminated before it signals it,
     * so that what the command exits with then proves nothing ({@link #deliver}).
     */
    static List<String> workingPrefix() {
        Optional<Path> setsid = program("setsid");
        Optional<Path> setpriv = program("setpriv");
        List<List<String>> candidates = new ArrayList<>();
        if (setsid.isPresent() && setpriv.isPresent()) {
            List<String> both = new ArrayList<>(List.of(setsid.get().toString(), setpriv.get().toString()));
            both.addAll(PARENT_DEATH_SIGNAL);
            candidates.add(both);
        }
        if (setpriv.isPresent()) {
            List<String> alone = new ArrayList<>(List.of(setpriv.get().toString()));
            alone.addAll(PARENT_DEATH_SIGNAL);
            candidates.add(alone);
        }
        setsid.ifPresent(p -> candidates.add(List.of(p.toString())));
        for (List<String> candidate : candidates) {
            List<String> probe = new ArrayList<>(candidate);
            probe.add("true");
            try {
                Process p = new ProcessBuilder(probe).redirectErrorStream(true)
                        .redirectOutput(ProcessBuilder.Redirect.DISCARD).start();
                if (p.waitFor(PROBE.toMillis(), TimeUnit.MILLISECONDS) && p.exitValue() == 0) {
                    return List.copyOf(candidate);
                }
                p.destroyForcibly();
            } catch (IOException e) {
                // this one does not run here: the next, if any
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return List.of();
            }
        }
        return List.of();
    }

    private static Optional<Path> program(String name) {
        return BIN.stream().map(dir -> Path.of(dir, name)).filter(Files::isExecutable).findFirst();
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
