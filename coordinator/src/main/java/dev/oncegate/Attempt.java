package dev.oncegate;

/**
 * One contender's attempt at one effect, from {@link Gate#enter} to {@link #close}.
 *
 * <p>When {@link #decision()} is {@link Decision.Proceed}, this attempt is the scope's executor
 * and holds its lease. It may pass named checkpoints ({@link #checkpoint}), each of which
 * revalidates the lease with a conditional write and renews it, and then cross the boundary
 * once ({@link #cross}). Closing an attempt that never armed releases its lease, so the next
 * contender proceeds at once; closing after arming leaves the permanent records as they are.
 *
 * <p>Logging: while {@link Gate#enter}, {@link #checkpoint}, {@link #cross} (the action
 * included) and {@link #close} run, the slf4j MDC of the calling thread holds
 * {@code oncegate.key}, {@code oncegate.scope} (once known) and {@code oncegate.task}, so the
 * gate's lines and the action's own lines can be correlated with a pattern such as
 * {@code %X{oncegate.key}}; the previous values are restored afterwards. The entry decision is
 * logged at DEBUG when it is {@code proceed}, a stop and an outcome at INFO, one line each.
 *
 * <p>Not thread-safe: one attempt belongs to the thread that works on the effect. Internally
 * it reacts to ZooKeeper events on Curator's threads, but those only wake the owner thread.
 */
public interface Attempt extends AutoCloseable {

    /** The effect this attempt is about. */
    EffectKey key();

    /** The latest decision: the entry decision, or the stop a checkpoint or crossing ran into. */
    Decision decision();

    /**
     * Revalidates this executor's lease at a named point (e.g. before opening an attachment
     * picker) with a conditional write on its fencing token, and renews the lease. Any state
     * change since the last check (a takeover, a lost session, a suspended connection that did
     * not come back) stops the executor.
     *
     * @param name a short name recorded in the armed record's checkpoint trail (1–128 chars)
     * @return {@link Decision.Proceed} with the new token, or the stop; once stopped, every later
     *         checkpoint returns the same stop
     * @throws IllegalStateException when this attempt never proceeded, already crossed, or is closed
     * @throws InterruptedException when interrupted while the renewal was in flight (or its reply
     *     was being taken in): the attempt still proceeds, with whatever token the renewal left (it
     *     may have landed), and closing it releases the lease
     */
    Decision checkpoint(String name) throws InterruptedException;

    /**
     * Arms the scope (one atomic {@code multi} conditional on the fencing token), invokes the
     * action exactly once if and only if arming succeeded, and records its outcome in an
     * immutable znode: {@code sent_verified} for {@link ActionResult#verified}, {@code not_sent}
     * only for {@link ProvenNotSentException}, {@code send_status_unknown} for anything else.
     * A connection loss during arming counts as armed: the action is never invoked.
     *
     * @return what happened; {@link Crossing.Refused} means the action was not invoked
     * @throws IllegalStateException when this attempt is not a proceeding executor
     * @throws InterruptedException  when interrupted before the action was invoked
     */
    Crossing cross(BoundaryAction action) throws InterruptedException;

    /** Leaves the election; releases the lease if the scope was never armed. Idempotent. */
    @Override
    void close();
}
