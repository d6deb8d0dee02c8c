package dev.oncegate.cli;

import java.time.Duration;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import dev.oncegate.ActionResult;
import dev.oncegate.Attempt;
import dev.oncegate.BoundaryAction;
import dev.oncegate.Crossing;
import dev.oncegate.Decision;
import dev.oncegate.EffectKey;
import dev.oncegate.Gate;
import dev.oncegate.Outcome;
import dev.oncegate.ProvenNotSentException;

/**
 * One effect of an MCP session ({@code oncegate mcp}): its {@link Attempt}, and the one thread
 * that owns it.
 *
 * <p>An attempt belongs to one thread, and a crossing must stay open across two tool calls:
 * {@code cross_effect} arms the scope and answers at once, so that the agent can press submit;
 * {@code record_outcome}, later, says what happened. So every call on the attempt (enter,
 * checkpoints, the crossing, close) runs on this effect's own thread, one at a time, and the
 * crossing's {@link BoundaryAction} hands the armed context to {@code cross_effect}'s caller and
 * then blocks until the agent's report arrives. The library therefore decides everything, as it
 * does for {@code run}: arming is its multi, and the outcome it records is {@code not_sent} only
 * for a {@link ProvenNotSentException}.
 *
 * <p>The end of the session ({@link #end}) ends the effect the protocol's way: before the
 * crossing the thread is interrupted and the attempt closed, which releases the lease; after
 * arming, an unreported crossing is reported as unknown, which records {@code send_status_unknown}.
 *
 * <p>Phases, each moved under this object's lock: ENTERING → STOPPED | PROCEEDING; PROCEEDING →
 * (checkpoint) PROCEEDING | STOPPED; PROCEEDING → CROSSING → ARMED → CROSSED, or CROSSING →
 * STOPPED (arming refused); any → ENDED.
 *
 * <p>Thread-safe: tool calls arrive on the SDK's threads, any number at once.
 */
final class McpEffect {

    enum Phase { ENTERING, STOPPED, PROCEEDING, CROSSING, ARMED, CROSSED, ENDED }

    /** What the agent reported about its crossing. */
    record Report(Outcome outcome, String evidence) {
    }

    /** What {@code cross_effect} learned: armed (with the action's context), or refused. */
    record CrossAnswer(BoundaryAction.Context armed, Decision.Stop refused) {
    }

    private final EffectKey key;
    private final ExecutorService owner;
    private final CompletableFuture<Decision> entered = new CompletableFuture<>();
    private final CompletableFuture<BoundaryAction.Context> armed = new CompletableFuture<>();
    private final CompletableFuture<Report> report = new CompletableFuture<>();
    private final CompletableFuture<Crossing> crossed = new CompletableFuture<>();
    /** {@link #end} reported the crossing as unknown, the agent never having reported it. */
    private boolean endedUnreported;
    /** The session ended while the arming write was in flight, before cross_effect answered: nothing may be handed out. */
    private boolean endedWhileArming;
    /** Touched by the owner thread only. */
    private Attempt attempt;
    private Phase phase = Phase.ENTERING;
    private Decision decision;
    /** The call in progress on the owner thread (enter, a checkpoint), interrupted when the session ends. */
    private Future<?> running;
    private Report reported;

    private McpEffect(EffectKey key) {
        this.key = key;
        this.owner = Executors.newSingleThreadExecutor(r -> {
            Thread t = new Thread(r, "oncegate-mcp-" + key.key().substring(0, 12));
            t.setDaemon(true);
            return t;
        });
    }

    /**
     * Starts entering the gate for {@code key} on the effect's own thread; {@link #awaitEntry}
     * waits for the decision. {@code prepare} runs first, on that thread (learning the roles).
     */
    static McpEffect enter(Gate gate, EffectKey key, Duration wait, Preparation prepare) {
        McpEffect effect = new McpEffect(key);
        synchronized (effect) {
            effect.running = effect.owner.submit(() -> {
                try {
                    prepare.run();
                    Attempt a = gate.enter(key, wait);
                    effect.attempt = a;
                    effect.onDecision(a.decision(), Phase.PROCEEDING);
                    effect.entered.complete(a.decision());
                } catch (Throwable e) {
                    effect.toPhase(Phase.ENDED);
                    effect.owner.shutdown();
                    effect.entered.completeExceptionally(e);
                }
                return null;
            });
        }
        return effect;
    }

    /** What the session runs before entering. */
    @FunctionalInterface
    interface Preparation {
        void run() throws InterruptedException;
    }

    EffectKey key() {
        return key;
    }

    synchronized Phase phase() {
        return phase;
    }

    /** The latest decision, or null while entering. */
    synchronized Decision decision() {
        return decision;
    }

    /**
     * The entry decision, once reached.
     *
     * @throws IllegalStateException when the entry failed or the session ended first
     */
    Decision awaitEntry() throws InterruptedException {
        return await(entered, "check_effect");
    }

    /**
     * Revalidates and renews the lease at {@code name} (SPEC §4.5).
     *
     * @throws IllegalStateException naming what to do when this effect is not held
     */
    Decision checkpoint(String name) throws InterruptedException {
        CompletableFuture<Decision> done = new CompletableFuture<>();
        synchronized (this) {
            requirePhase(Phase.PROCEEDING, "checkpoint_effect");
            running = owner.submit(() -> {
                try {
                    Decision d = attempt.checkpoint(name);
                    onDecision(d, Phase.PROCEEDING);
                    done.complete(d);
                } catch (Throwable e) {
                    done.completeExceptionally(e);
                }
                return null;
            });
        }
        return await(done, "checkpoint_effect");
    }

    /**
     * Arms the scope and answers as soon as it is armed (the action then waits for the agent's
     * report), or with the stop when arming was refused.
     *
     * @throws IllegalStateException naming what to do when this effect is not held
     */
    CrossAnswer cross() throws InterruptedException {
        synchronized (this) {
            requirePhase(Phase.PROCEEDING, "cross_effect");
            if (armed.isDone() || crossed.isDone()) { // never a second crossing of one effect, whatever the phase says
                throw new IllegalStateException("cross_effect: this effect was crossed already; report its outcome"
                        + " with record_outcome");
            }
            phase = Phase.CROSSING;
            running = null;
            owner.execute(() -> {
                try {
                    Crossing crossing = attempt.cross(this::deliver);
                    synchronized (this) {
                        if (crossing instanceof Crossing.Refused refused) {
                            decision = refused.stop();
                            phase = phase == Phase.ENDED ? Phase.ENDED : Phase.STOPPED;
                        } else {
                            phase = phase == Phase.ENDED ? Phase.ENDED : Phase.CROSSED;
                        }
                    }
                    crossed.complete(crossing);
                } catch (Throwable e) {
                    toPhase(Phase.STOPPED);
                    crossed.completeExceptionally(e);
                } finally {
                    attempt.close();
                    owner.shutdown();
                }
            });
        }
        try {
            CompletableFuture.anyOf(armed, crossed).get();
        } catch (ExecutionException e) {
            throw failure("cross_effect", e.getCause());
        }
        if (armed.isDone()) {
            return new CrossAnswer(armed.join(), null);
        }
        Crossing crossing = crossed.join();
        if (crossing instanceof Crossing.Refused refused) {
            return new CrossAnswer(null, refused.stop());
        }
        if (crossing instanceof Crossing.Crossed c && c.outcome() == Outcome.NOT_SENT) {
            throw new IllegalStateException("cross_effect: the session ended before the arming was confirmed: nothing"
                    + " may be submitted; " + (c.recorded() ? "it was recorded not_sent" : "its not_sent could not be"
                    + " recorded, so the effect reads unknown") + ". Do not send");
        }
        throw new IllegalStateException("cross_effect: the crossing ended without arming and without a refusal: " + crossing);
    }

    /**
     * Reports the agent's outcome of the crossing and waits until the library has recorded it.
     *
     * @throws IllegalStateException naming what to do when there is no armed crossing to report on
     */
    Crossing.Crossed record(Outcome outcome, String evidence) throws InterruptedException {
        synchronized (this) {
            if (reported != null) {
                throw new IllegalStateException("record_outcome: the outcome of this crossing was already reported ("
                        + reported.outcome().wireName() + "); it is recorded once and cannot be changed");
            }
            requirePhase(Phase.ARMED, "record_outcome");
            reported = new Report(outcome, evidence);
            report.complete(reported);
        }
        return (Crossing.Crossed) await(crossed, "record_outcome");
    }

    /**
     * Ends the effect with the session: an armed crossing not yet reported is reported as
     * unknown; otherwise a call in progress is interrupted and the attempt closed (its lease
     * released). Idempotent; does not wait ({@link #awaitEnd}); {@link #endedUnreported} tells,
     * after the wait, whether this ended a crossing the agent never reported.
     */
    void end(String why) {
        synchronized (this) {
            if (phase == Phase.ENDED && owner.isShutdown()) {
                return;
            }
            if (phase == Phase.CROSSING) {
                // The arming write is in flight and cross_effect has not answered: the agent was never told it may
                // submit. If the write lands, the action hands nothing out and proves not_sent (deliver).
                endedWhileArming = true;
            } else if (phase == Phase.ARMED) {
                if (reported == null) {
                    reported = new Report(Outcome.SEND_STATUS_UNKNOWN, why + " before the agent reported the outcome of"
                            + " its crossing: it may have submitted");
                    report.complete(reported);
                    endedUnreported = true;
                }
            } else if (running != null) {
                running.cancel(true);
            }
            boolean closing = phase != Phase.CROSSING && phase != Phase.ARMED && phase != Phase.CROSSED;
            phase = Phase.ENDED;
            if (closing && !owner.isShutdown()) {
                owner.execute(() -> {
                    if (attempt != null) {
                        attempt.close();
                    }
                });
            }
            owner.shutdown();
        }
        entered.completeExceptionally(new CancellationException(why));
    }

    /**
     * Whether {@link #end} reported this effect's crossing as unknown and that crossing armed (or
     * is still under way, so may have): a crossing in flight at the end that the library then
     * refused armed nothing and recorded nothing. Call it after {@link #awaitEnd}.
     */
    synchronized boolean endedUnreported() {
        return endedUnreported && (armed.isDone() || !crossed.isDone());
    }

    /**
     * Whether this effect armed a crossing whose outcome is not (or may not be) recorded: the
     * library's cross came back {@code recorded=false}, or failed after arming. Such a key reads
     * {@code send_status_unknown}, whatever the agent reported.
     */
    boolean unrecorded() {
        if (!crossed.isDone()) {
            return false;
        }
        if (crossed.isCompletedExceptionally()) {
            return armed.isDone();
        }
        // A Crossed crossing armed, even one that handed nothing out (the session ended while it armed).
        return crossed.join() instanceof Crossing.Crossed c && !c.recorded();
    }

    /** Waits up to {@code limit} for {@link #end}'s work (an outcome write, a release) to finish. */
    boolean awaitEnd(Duration limit) throws InterruptedException {
        return owner.awaitTermination(limit.toMillis(), TimeUnit.MILLISECONDS);
    }

    /**
     * The boundary action: hands the armed context to cross_effect's caller, then waits for the report.
     * When the session ended while the arming was in flight ({@link #end}), it hands nothing out: the
     * agent was never told it may submit, so nothing was, and that is the proof of {@code not_sent}.
     */
    private ActionResult deliver(BoundaryAction.Context context) throws Exception {
        synchronized (this) {
            if (endedWhileArming) {
                throw new ProvenNotSentException("the MCP session ended while the arming write was in flight, before"
                        + " cross_effect answered: the agent was never told it may submit");
            }
            if (phase == Phase.CROSSING || phase == Phase.PROCEEDING) {
                phase = Phase.ARMED;
            }
        }
        armed.complete(context);
        Report r = report.get();
        return switch (r.outcome()) {
            case SENT_VERIFIED -> ActionResult.verified(r.evidence());
            case NOT_SENT -> throw new ProvenNotSentException(r.evidence());
            case SEND_STATUS_UNKNOWN -> ActionResult.unconfirmed(r.evidence());
        };
    }

    private synchronized void onDecision(Decision d, Phase ifProceeding) {
        decision = d;
        if (phase != Phase.ENTERING && phase != Phase.PROCEEDING) {
            // Ended, or a cross was asked for while this call ran (a checkpoint): the crossing decides from here
            // (its arming is refused if the lease was lost meanwhile), and the attempt is its until it ends.
            return;
        }
        phase = d.proceeds() ? ifProceeding : Phase.STOPPED;
        if (!d.proceeds()) {
            // A stop holds nothing: leave the election now, on this (the owner) thread.
            attempt.close();
            owner.shutdown();
        }
    }

    private synchronized void toPhase(Phase next) {
        if (phase != Phase.ENDED) {
            phase = next;
        }
    }

    private void requirePhase(Phase wanted, String tool) {
        if (phase == wanted) {
            return;
        }
        String why = switch (phase) {
            case ENTERING -> "check_effect has not decided yet for this effect: wait for its answer";
            case STOPPED -> "the latest decision for this effect is " + decision.kind() + ", not proceed: do not submit;"
                    + " call check_effect again to learn the current state";
            case PROCEEDING -> "you hold the lease but have not crossed: call cross_effect immediately before the submit"
                    + " control, and record_outcome after it";
            case CROSSING, ARMED -> "you already crossed this effect: do not submit again; call record_outcome with what"
                    + " happened";
            case CROSSED -> "this crossing is over and its outcome recorded: call check_effect to learn the current state;"
                    + " never submit without a new proceed from cross_effect";
            case ENDED -> "the session is ending: do not submit";
        };
        throw new IllegalStateException(tool + ": " + why);
    }

    private static <T> T await(CompletableFuture<T> future, String tool) throws InterruptedException {
        try {
            return future.get();
        } catch (ExecutionException e) {
            throw failure(tool, e.getCause());
        } catch (CancellationException e) {
            throw new IllegalStateException(tool + ": the session is ending (" + e.getMessage() + "): do not submit");
        }
    }

    private static RuntimeException failure(String tool, Throwable cause) {
        if (cause instanceof RuntimeException r) {
            return r;
        }
        if (cause instanceof InterruptedException || cause instanceof CancellationException) {
            return new IllegalStateException(tool + ": interrupted because the session is ending: do not submit", cause);
        }
        return new IllegalStateException(tool + ": " + cause, cause);
    }
}
