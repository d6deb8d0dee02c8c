package dev.oncegate.cli;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.locks.ReentrantLock;

import dev.oncegate.ActionResult;
import dev.oncegate.Attempt;
import dev.oncegate.BoundaryAction;
import dev.oncegate.Crossing;
import dev.oncegate.Decision;
import dev.oncegate.EffectKey;
import dev.oncegate.FencingToken;
import dev.oncegate.ProvenNotSentException;

/**
 * One agent's lease, as the sidecar holds it between the agent's calls: an {@link Attempt} that
 * proceeded, the fencing token it was last given, and what is left of its life.
 *
 * <h2>Lifetime</h2>
 * <pre>
 *   OPEN ──cross──▶ CROSSING ──outcome (or its timeout, or shutdown)──▶ FINISHED
 *     │                 └── arming refused ─────────────────────────────▶ FINISHED
 *     └── checkpoint stop, release, idle timeout, shutdown ──────────────▶ FINISHED
 * </pre>
 * An OPEN handle holds no thread: between the agent's calls it is this object and its attempt.
 * Closing the attempt of an OPEN handle releases the lease at once (an agent that vanished
 * before crossing loses its lease when the handle idles out; a sidecar that vanished leaves it to
 * lapse by the lease TTL). A crossing is the library's {@link Attempt#cross}: the boundary action
 * hands the armed context to the agent's {@code cross} call and then waits for the agent's
 * {@code outcome} call on the crossing's own thread, since the library invokes the action on the
 * thread that crosses. Whatever ends the wait other than the agent's report (its timeout, the
 * sidecar's SIGTERM) yields {@link ActionResult#unconfirmed}: {@code send_status_unknown}, never
 * {@code not_sent}. An agent killed after crossing leaves the scope armed, which reads
 * {@code send_status_unknown} to everyone at once.
 *
 * <p>Thread-safe: calls on one handle are serialised by its lock (a second concurrent call is
 * refused, not queued); the attempt is used by one thread at a time, the lock (or the crossing
 * thread's start) ordering its uses; the outcome is handed over through one future completed once.
 */
final class SidecarHandle {

    enum State { OPEN, CROSSING, FINISHED }

    /** What ended a crossing's wait without the agent: turned into {@code send_status_unknown}. */
    private record NoReport(String why) {
    }

    final String id;
    final EffectKey key;
    /** The task id of the handle's gate, or null for the sidecar's own. */
    final String task;
    private final Attempt attempt;
    private final Runnable onFinish;
    private final java.util.concurrent.atomic.AtomicBoolean finished = new java.util.concurrent.atomic.AtomicBoolean();
    private final ReentrantLock lock = new ReentrantLock();
    private volatile State state = State.OPEN;
    private volatile FencingToken token;
    private final int scope;
    private volatile long lastUsed;
    /** When it finished (System.nanoTime): the sidecar forgets it a while later, however often it is called. */
    private volatile long finishedAt;
    /** Why the handle finished, for the refusal of later calls. */
    private volatile String ending;
    /** The armed context, once the crossing's action runs. */
    private final CompletableFuture<BoundaryAction.Context> armed = new CompletableFuture<>();
    /** The agent's report (ActionResult or ProvenNotSentException) or a {@link NoReport}; completed once. */
    private final CompletableFuture<Object> report = new CompletableFuture<>();
    /** What the library's cross returned. */
    private final CompletableFuture<Crossing> crossed = new CompletableFuture<>();

    /** @param onFinish called once, on the thread that finishes the handle (the sidecar's bookkeeping) */
    SidecarHandle(String id, Attempt attempt, String task, long now, Runnable onFinish) {
        this.id = id;
        this.onFinish = onFinish;
        this.attempt = attempt;
        this.key = attempt.key();
        this.task = task;
        Decision.Proceed proceed = (Decision.Proceed) attempt.decision();
        this.scope = proceed.scope();
        this.token = proceed.token();
        this.lastUsed = now;
    }

    State state() {
        return state;
    }

    FencingToken token() {
        return token;
    }

    int scope() {
        return scope;
    }

    long lastUsed() {
        return lastUsed;
    }

    /**
     * Takes the handle for one call: the handle must carry {@code presented} as its token.
     *
     * @throws SidecarError 409 naming {@code token} when stale, {@code handle} when another call holds it
     */
    void claim(long presented, long now) {
        if (!lock.tryLock()) {
            throw SidecarError.conflict("handle", "another call on this handle is in progress; calls on a handle are"
                    + " made one at a time");
        }
        if (presented != token.version()) {
            lock.unlock();
            throw SidecarError.conflict("token", "this handle's fencing token is " + token.version() + ", not "
                    + presented + " (a handle is valid only with the token of its latest enter or checkpoint)");
        }
        lastUsed = now;
    }

    void unclaim(long now) {
        lastUsed = now;
        lock.unlock();
    }

    /** Refuses a call that needs the handle OPEN; the caller holds the claim. */
    void requireOpen(String call) {
        if (state == State.CROSSING) {
            throw SidecarError.conflict("handle", "already crossed (armed): " + call + " is over; report the outcome");
        }
        if (state == State.FINISHED) {
            throw SidecarError.conflict("handle", "finished (" + ending + "); enter again");
        }
    }

    /**
     * Revalidates the lease at a named checkpoint; the caller holds the claim and checked OPEN.
     * A stop finishes the handle (its attempt closed).
     */
    Decision checkpoint(String name) throws InterruptedException {
        Decision decision = attempt.checkpoint(name);
        if (decision instanceof Decision.Proceed proceed) {
            token = proceed.token();
        } else {
            finish("stopped at checkpoint " + name + ": " + ((Decision.Stop) decision).reason().wireName());
        }
        return decision;
    }

    /**
     * Starts the crossing on a thread of {@code crossings} and waits for it to arm (then the agent
     * may act) or to be refused. The caller holds the claim and checked OPEN.
     *
     * @param outcomeTimeout how long the armed crossing waits for the agent's report
     * @return the armed context, or the refusal
     * @throws SidecarError 503 when no crossing thread is free (nothing was armed)
     */
    Object cross(Executor crossings, Duration outcomeTimeout, Duration armBound)
            throws InterruptedException {
        state = State.CROSSING;
        try {
            crossings.execute(() -> runCrossing(outcomeTimeout));
        } catch (RejectedExecutionException e) {
            state = State.OPEN;
            throw new SidecarError(503, null, "too many crossings in flight (--max-crossings); nothing was armed,"
                    + " the lease is still yours: cross again");
        }
        try {
            CompletableFuture.anyOf(armed, crossed).get(armBound.toMillis(), TimeUnit.MILLISECONDS);
        } catch (ExecutionException e) {
            throw new IllegalStateException("the crossing failed: " + e.getCause(), e.getCause());
        } catch (TimeoutException e) {
            // The arming write's reply is bounded by the library well below this; past it, say nothing is known.
            report.complete(new NoReport("the arming write had no reply within " + Durations.format(armBound)));
            throw new SidecarError(503, null, "the arming write had no reply within " + Durations.format(armBound)
                    + "; do not act: the scope may be armed, and then reads send_status_unknown");
        }
        if (armed.isDone()) {
            return armed.join();
        }
        return crossed.join();
    }

    private void runCrossing(Duration outcomeTimeout) {
        try {
            Crossing crossing = attempt.cross(context -> {
                armed.complete(context);
                return awaitReport(outcomeTimeout);
            });
            crossed.complete(crossing);
            finish(crossing instanceof Crossing.Crossed c ? "crossed: " + c.outcome().wireName()
                    + (c.recorded() ? "" : " (not recorded: reads send_status_unknown)")
                    : "arming refused: " + ((Crossing.Refused) crossing).stop().reason().wireName());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            crossed.complete(new Crossing.Refused((Decision.Stop) attempt.decision()));
            finish("interrupted before arming: nothing was armed");
        } catch (RuntimeException | Error e) {
            crossed.completeExceptionally(e);
            finish("the crossing failed: " + e);
        }
    }

    private ActionResult awaitReport(Duration outcomeTimeout) throws Exception {
        Object r;
        try {
            r = report.get(outcomeTimeout.toMillis(), TimeUnit.MILLISECONDS);
        } catch (TimeoutException e) {
            r = new NoReport("no outcome from the agent within --outcome-timeout " + Durations.format(outcomeTimeout));
            if (!report.complete(r)) {
                r = report.join();
            }
        }
        if (r instanceof ProvenNotSentException proof) {
            throw proof;
        }
        if (r instanceof NoReport none) {
            return ActionResult.unconfirmed(none.why());
        }
        return (ActionResult) r;
    }

    /**
     * Hands the agent's report to the armed crossing and waits until its outcome is recorded.
     *
     * @param result an {@link ActionResult} or a {@link ProvenNotSentException}
     * @throws SidecarError 409 when the handle is not crossing or its crossing already ended
     */
    Crossing.Crossed report(Object result, Duration recordBound) throws InterruptedException {
        if (state == State.OPEN) {
            throw SidecarError.conflict("handle", "not crossed yet: call cross first, and act only after its answer");
        }
        if (!armed.isDone()) {
            throw SidecarError.conflict("outcome", "this handle's crossing was not armed (" + ending + ")");
        }
        if (!report.complete(result)) {
            Object earlier = report.join();
            throw SidecarError.conflict("outcome", earlier instanceof NoReport none
                    ? "the crossing already ended with send_status_unknown: " + none.why()
                    : "already reported for this crossing; an outcome is recorded once");
        }
        try {
            return (Crossing.Crossed) crossed.get(recordBound.toMillis(), TimeUnit.MILLISECONDS);
        } catch (ExecutionException e) {
            throw new IllegalStateException("recording the outcome failed: " + e.getCause()
                    + "; the scope stays armed and reads send_status_unknown", e.getCause());
        } catch (TimeoutException e) {
            throw new SidecarError(503, null, "the outcome was not recorded within " + Durations.format(recordBound)
                    + " (ZooKeeper unreachable?); until it is, the scope reads send_status_unknown");
        }
    }

    /** Ends an armed crossing's wait with {@code send_status_unknown} (SIGTERM); false when it was not waiting. */
    boolean abandonCrossing(String why) {
        return state == State.CROSSING && report.complete(new NoReport(why));
    }

    /** Whether the crossing thread has returned (or none was started). */
    boolean crossingOver() {
        return state != State.CROSSING || crossed.isDone();
    }

    /**
     * Whether the crossing returned without its outcome written: the library answered
     * {@code recorded=false} (another outcome took the scope's one write, the armed record is
     * gone, ZooKeeper could not be reached) or failed. That scope reads {@code send_status_unknown}
     * (or what an operator recorded), not what the agent reported. A crossing refused before
     * arming wrote nothing and needs nothing: it counts as recorded, as does one still running.
     */
    boolean crossingUnrecorded() {
        if (!crossed.isDone()) {
            return false;
        }
        if (crossed.isCompletedExceptionally()) {
            return true;
        }
        return crossed.join() instanceof Crossing.Crossed c && !c.recorded();
    }

    /** Closes an OPEN handle's attempt, releasing its lease; the caller holds the claim or the handle is idle. */
    void finish(String why) {
        if (!finished.compareAndSet(false, true)) {
            return;
        }
        ending = why;
        finishedAt = System.nanoTime();
        state = State.FINISHED;
        try {
            attempt.close();
        } finally {
            onFinish.run();
        }
    }

    /**
     * Finishes an OPEN handle nobody is using ({@code why}: idle timeout, shutdown); false when a call holds it or it is not OPEN.
     */
    boolean finishIfIdle(String why) {
        if (state != State.OPEN || !lock.tryLock()) {
            return false;
        }
        try {
            if (state != State.OPEN) {
                return false;
            }
            finish(why);
            return true;
        } finally {
            lock.unlock();
        }
    }

    long finishedAt() {
        return finishedAt;
    }

    String ending() {
        return ending;
    }
}
