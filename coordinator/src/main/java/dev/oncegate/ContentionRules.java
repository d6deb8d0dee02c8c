package dev.oncegate;

import java.time.Duration;
import java.time.Instant;
import java.util.Objects;

/**
 * The contention rules: what a contender does next about one scope, decided from what it read
 * (the scope, and for a consumed scope the operator's authorization), what it observed itself
 * (since when it has seen the scope at this version, since when its election node is missing),
 * its election hint, and its own clock. Pure: no ZooKeeper, no threads, no wall clock. The
 * contention loop in {@link DefaultAttempt} reads, asks {@link #next}, performs the step, and
 * asks again — the split of Curator's {@code LockInternals} (read, decide by a separate rule,
 * wait).
 *
 * <p>Safety never rests on these rules: every step that changes ZooKeeper ({@link TakeLease},
 * {@link OpenAuthorized}) is a conditional write that fails when the state has moved on, and a
 * contender that loses reads again. The rules decide liveness (who tries, when, how long to
 * wait) and which stop a contender reports. Clocks appear only here, and only for liveness.
 *
 * <h2>The rules</h2>
 * <ul>
 *   <li>{@code not_sent}: the next scope (the outcome's multi created it).</li>
 *   <li>Consumed ({@code sent_verified}, {@code send_status_unknown}, armed without outcome): an
 *       authorization for exactly this scope, created after the scope was consumed, opens the
 *       next one; an unreadable one stops the contender (fail closed); otherwise armed is awaited
 *       until the deadline and the terminal states stop at once.</li>
 *   <li>Outside the election, a contender joins only when it may have to act: on an open scope
 *       (after a short grace when another contender just created or opened it and is joining
 *       itself), or to take a lease over; while a live holder acts it waits outside, watching the
 *       scope and the holder's election node. So a crowd on one key costs one LeaderLatch, not one
 *       per contender.</li>
 *   <li>Open: the election's leader takes the lease. If the scope stays open at one version for a
 *       whole lease TTL on this contender's own clock, any contender may try ({@code stalled_election});
 *       after two TTLs (or the caller's wait, if longer) it gives up busy.</li>
 *   <li>Leased: the holder is taken over when its lease lapsed by its own expiry
 *       ({@code lapsed}), when this contender has watched the same lease version for a whole TTL
 *       on its own clock — a holder whose clock runs fast cannot block everyone
 *       ({@code unrenewed}) —, or when this contender leads the election and the holder's
 *       election node is gone ({@code abandoned}). Otherwise wait, or stop busy.</li>
 *   <li>A contender whose own election node has been missing for {@link #ELECTION_NODE_GRACE}
 *       while connected asks ZooKeeper whether it may create it ({@link ProbeElection}); only
 *       ZooKeeper's NoAuth stops it, never elapsed time alone.</li>
 * </ul>
 *
 * <p>Stateless; thread-safe.
 */
final class ContentionRules {

    /** How long a contender's election node may be missing while connected before it asks ZooKeeper why. */
    static final Duration ELECTION_NODE_GRACE = Duration.ofSeconds(2);
    /** How often a contender re-checks while its election node is being created. */
    static final Duration NODE_POLL = Duration.ofMillis(100);

    static final String LAPSED = "lapsed";
    static final String UNRENEWED = "unrenewed";
    static final String ABANDONED = "abandoned";
    static final String STALLED_ELECTION = "stalled_election";

    private ContentionRules() {
    }

    /**
     * The contender's place in the scope's election.
     *
     * @param joined  whether it runs a latch for this scope
     * @param leader  the latch's (local) leadership flag: a hint to try the lease CAS, nothing more
     * @param ourNode its election node, read before the scope was (null while being created)
     */
    record Election(boolean joined, boolean leader, String ourNode) {
        static final Election NONE = new Election(false, false, null);
    }

    /**
     * What this contender observed itself, on its own clock.
     *
     * @param scope            the scope it last read
     * @param version          that scope's version when last read
     * @param since            when it first saw the scope at that version
     * @param nodeMissingSince since when its election node has been missing while connected (null: present or not joined)
     */
    record Observations(int scope, int version, Instant since, Instant nodeMissingSince) {

        static final Observations NONE = new Observations(-1, -1, null, null);

        /** After a read: the version clock restarts when the scope or its version changed. */
        Observations observe(ScopeView view, boolean nodeMissing, Instant now) {
            boolean same = view.scope() == scope && view.version() == version;
            Instant missing = !nodeMissing ? null : nodeMissingSince != null ? nodeMissingSince : now;
            return new Observations(view.scope(), view.version(), same ? since : now, missing);
        }

        /** ZooKeeper said the election node may be created: give Curator another grace period. */
        Observations permitted(Instant now) {
            return new Observations(scope, version, since, nodeMissingSince == null ? null : now);
        }
    }

    /**
     * Everything the rules look at.
     *
     * @param view          the scope as read
     * @param authorization for a consumed scope, its {@code after-n} authorization as read (else null)
     * @param election      the election hint
     * @param seen          this contender's own observations, already updated with {@code view}
     * @param holderPresent whether the lease holder's election node exists (null: not looked up)
     * @param now           this contender's clock
     * @param deadline      until when the caller is willing to wait for an active executor
     * @param waited        whether the caller asked to wait at all (for the stop's reason)
     * @param leaseTtl      the gate's lease TTL
     * @param ownScope      whether this contender created the scope (with its key, or from an
     *                      authorization), and so is the one expected to join its election first
     */
    record Situation(ScopeView view, AuthorizationView authorization, Election election, Observations seen,
                     Boolean holderPresent, Instant now, Instant deadline, boolean waited, Duration leaseTtl,
                     boolean ownScope) {

        Situation {
            Objects.requireNonNull(view, "view");
            Objects.requireNonNull(election, "election");
            Objects.requireNonNull(seen, "seen");
            Objects.requireNonNull(now, "now");
            Objects.requireNonNull(deadline, "deadline");
            Objects.requireNonNull(leaseTtl, "leaseTtl");
        }

        Situation withHolderPresent(boolean present) {
            return new Situation(view, authorization, election, seen, present, now, deadline, waited, leaseTtl, ownScope);
        }

        Situation withElection(Election e, Observations o) {
            return new Situation(view, authorization, e, o, holderPresent, now, deadline, waited, leaseTtl, ownScope);
        }
    }

    /**
     * What to do next. A step is performed by handing it to a {@link Performer}, which has one
     * method per kind of step: the exhaustive switch over the sealed step types that Java 17
     * cannot write yet (a new kind of step does not compile until every performer performs it).
     */
    sealed interface Step permits Stop, Advance, OpenAuthorized, Join, CheckHolder, ProbeElection, TakeLease, Wait {

        /** Calls the method of {@code performer} named after this step. */
        <R> R performWith(Performer<R> performer) throws Exception;
    }

    /**
     * Performs the steps: the contention loop's side of the rules ({@link DefaultAttempt}), one
     * method per kind of step.
     *
     * @param <R> what performing a step gives the loop
     */
    interface Performer<R> {

        R stop(Stop step) throws Exception;

        R advance(Advance step) throws Exception;

        R openAuthorized(OpenAuthorized step) throws Exception;

        R join(Join step) throws Exception;

        R checkHolder(CheckHolder step) throws Exception;

        R probeElection(ProbeElection step) throws Exception;

        R takeLease(TakeLease step) throws Exception;

        R await(Wait step) throws Exception;
    }

    /** Stop with this decision. */
    record Stop(Decision.Stop stop) implements Step {
        @Override
        public <R> R performWith(Performer<R> performer) throws Exception {
            return performer.stop(this);
        }
    }

    /** Read the next scope (this one ended {@code not_sent}, which opened the next). */
    record Advance() implements Step {
        @Override
        public <R> R performWith(Performer<R> performer) throws Exception {
            return performer.advance(this);
        }
    }

    /** Open the next scope from this authorization (a conditional multi), then read it. */
    record OpenAuthorized(AuthorizationView authorization) implements Step {
        @Override
        public <R> R performWith(Performer<R> performer) throws Exception {
            return performer.openAuthorized(this);
        }
    }

    /** Join this scope's election, then decide again. */
    record Join() implements Step {
        @Override
        public <R> R performWith(Performer<R> performer) throws Exception {
            return performer.join(this);
        }
    }

    /**
     * Look up whether the lease holder's election node still exists, then decide again (a
     * contender outside the election also watches it, so the holder's end wakes it).
     */
    record CheckHolder(String electionNode) implements Step {
        @Override
        public <R> R performWith(Performer<R> performer) throws Exception {
            return performer.checkHolder(this);
        }
    }

    /** Ask ZooKeeper whether this contender may create its election node, then decide again. */
    record ProbeElection() implements Step {
        @Override
        public <R> R performWith(Performer<R> performer) throws Exception {
            return performer.probeElection(this);
        }
    }

    /**
     * Try the lease CAS, bound to {@code electionNode} (read before the scope was).
     *
     * @param takeoverCause null when elected on an open scope, else why the holder may be superseded
     */
    record TakeLease(String takeoverCause, String electionNode) implements Step {
        @Override
        public <R> R performWith(Performer<R> performer) throws Exception {
            return performer.takeLease(this);
        }
    }

    /** Wait for a change (a watch fires) until {@code until}, then read again. */
    record Wait(Instant until) implements Step {
        @Override
        public <R> R performWith(Performer<R> performer) throws Exception {
            return performer.await(this);
        }
    }

    /** The next step. */
    static Step next(Situation s) {
        ScopeView view = s.view();
        return switch (view.state()) {
            case NOT_SENT -> new Advance();
            case SENT_VERIFIED, SEND_STATUS_UNKNOWN, ARMED -> consumed(s);
            case OPEN, LEASED -> contend(s);
        };
    }

    private static Step consumed(Situation s) {
        ScopeView view = s.view();
        AuthorizationView auth = s.authorization();
        if (auth != null && auth.presence() == AuthorizationView.Presence.UNREADABLE) {
            return new Stop(new Decision.StopUnavailable(StopReason.UNREADABLE_RECORD, Evidence.of(auth.path(), view.scope(),
                    "the redelivery authorization for scope " + view.scope() + " cannot be read (" + auth.problem()
                            + "): an operator must repair it (see `oncegate inspect`); nothing was delivered")));
        }
        if (auth != null && auth.honours(view)) {
            return new OpenAuthorized(auth);
        }
        return switch (view.state()) {
            case SENT_VERIFIED -> new Stop(new Decision.StopSent(StopReason.SENT_VERIFIED, view.evidence("key consumed")));
            case SEND_STATUS_UNKNOWN -> new Stop(new Decision.StopUnknown(StopReason.SEND_STATUS_UNKNOWN,
                    view.evidence("key consumed")));
            default -> s.now().isBefore(s.deadline()) ? new Wait(s.deadline())
                    : new Stop(new Decision.StopUnknown(StopReason.ARMED_WITHOUT_OUTCOME,
                    view.evidence("another executor crossed the boundary")));
        };
    }

    private static Step contend(Situation s) {
        ScopeView view = s.view();
        KeyHistory.Lease lease = view.data().lease();
        Election election = s.election();
        Instant now = s.now();
        Observations seen = s.seen();
        Instant unchangedUntil = seen.since().plus(s.leaseTtl());
        boolean unchangedForTtl = !now.isBefore(unchangedUntil);
        if (!election.joined()) {
            return outside(s, lease, unchangedUntil, unchangedForTtl);
        }
        boolean take;
        String cause = null;
        if (lease != null) {
            if (!now.isBefore(lease.expires())) {
                cause = LAPSED;
            } else if (unchangedForTtl) {
                cause = UNRENEWED;
            } else if (election.leader()) {
                if (s.holderPresent() == null) {
                    return new CheckHolder(lease.electionNode());
                }
                cause = s.holderPresent() ? null : ABANDONED;
            }
            take = cause != null;
        } else {
            take = election.leader() || unchangedForTtl;
            cause = election.leader() ? null : STALLED_ELECTION;
        }
        // (A member.) How long this contender stays: the caller's wait; but on an open scope, or while it may
        // take the scope and only waits for its own election node, at least two TTLs (one for the
        // elected leader to act, one for anyone to take the stalled scope over).
        Instant stayUntil = lease != null && !take ? s.deadline()
                : max(s.deadline(), seen.since().plus(s.leaseTtl().multipliedBy(2)));
        if (seen.nodeMissingSince() != null && !now.isBefore(seen.nodeMissingSince().plus(ELECTION_NODE_GRACE))
                && now.isBefore(stayUntil)) {
            return new ProbeElection();
        }
        if (take && election.ourNode() != null) {
            return new TakeLease(cause, election.ourNode());
        }
        if (!now.isBefore(stayUntil)) {
            return lease != null ? busy(s, "another executor is active")
                    : new Stop(new Decision.StopBusy(StopReason.WAIT_EXPIRED, view.evidence("no executor took the open"
                    + " scope in the " + Duration.between(seen.since(), now).toMillis() + " ms this contender watched it")));
        }
        if (take) {
            return new Wait(min(stayUntil, now.plus(NODE_POLL))); // our election node is still being created
        }
        Instant until = lease != null ? min(lease.expires(), unchangedUntil) : unchangedUntil;
        return new Wait(poll(s, min(until, stayUntil)));
    }

    /**
     * A contender outside the election joins it only when it may have to act: the election is
     * what picks the next executor, and each member costs a LeaderLatch (and Curator's thread for
     * its start). So it waits outside — watching the scope — while a live holder acts, and while
     * the contender that just created the scope is joining; it joins on an open scope, or to take
     * a lease over (lapsed, unrenewed, or abandoned: the holder's election node gone).
     */
    private static Step outside(Situation s, KeyHistory.Lease lease, Instant unchangedUntil, boolean unchangedForTtl) {
        Instant now = s.now();
        if (lease == null) {
            ScopeView view = s.view();
            String opened = view.data().opened();
            boolean someoneJoining = !s.ownScope() && view.version() == 0
                    && (opened.equals("initial") || opened.startsWith(Layout.AFTER_PREFIX));
            Instant graceUntil = s.seen().since().plus(ELECTION_NODE_GRACE);
            if (someoneJoining && now.isBefore(graceUntil)) {
                // Its creator is joining and about to take the lease: watch rather than crowd the election
                // (also when not waiting: the grace is what it takes to learn whether the key is busy).
                return new Wait(graceUntil);
            }
            return new Join();
        }
        boolean lapsed = !now.isBefore(lease.expires());
        if (lapsed || unchangedForTtl) {
            return new Join(); // to take it over, as the rules for members say
        }
        if (!now.isBefore(s.deadline())) {
            // Busy and not waiting: no need to join the election just to leave it.
            return busy(s, "another executor is active");
        }
        if (s.holderPresent() == null) {
            return new CheckHolder(lease.electionNode());
        }
        if (!s.holderPresent()) {
            return new Join(); // the holder's session is gone: join, and take it over as the election's leader
        }
        return new Wait(min(min(lease.expires(), unchangedUntil), s.deadline()));
    }

    private static Stop busy(Situation s, String detail) {
        return new Stop(new Decision.StopBusy(s.waited() ? StopReason.WAIT_EXPIRED : StopReason.EXECUTOR_ACTIVE,
                s.view().evidence(detail)));
    }

    /** While the election node is missing, re-check often so the probe comes on time. */
    private static Instant poll(Situation s, Instant until) {
        return s.seen().nodeMissingSince() == null ? until : min(until, s.now().plus(NODE_POLL));
    }

    private static Instant max(Instant a, Instant b) {
        return a.isAfter(b) ? a : b;
    }

    private static Instant min(Instant a, Instant b) {
        return a.isBefore(b) ? a : b;
    }
}
