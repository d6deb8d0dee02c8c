package dev.oncegate;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.EnumSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

import org.apache.curator.CuratorConnectionLossException;
import org.apache.curator.framework.recipes.leader.LeaderLatch;
import org.apache.curator.framework.state.ConnectionState;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.Watcher;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One contender's attempt: the scope state machine as seen by one worker.
 *
 * <h2>Phases</h2>
 * <pre>
 *   CONTENDING ──lease CAS──▶ PROCEEDING ──arm multi──▶ ARMED ──outcome multi──▶ DONE
 *       │                        │  ▲ checkpoint CAS        │
 *       └──── stop ─────────────▶└──┴──── stop / fenced ────┴───────────────────▶ STOPPED
 *   any phase ──close()──▶ CLOSED  (PROCEEDING releases its lease with a CAS on close)
 * </pre>
 * Every change goes through {@link #transitionTo}, which refuses a change the diagram does not
 * show ({@link Phase}) and owns what a change does: the executor gauge, the lease release, leaving
 * the election. While contending, the loop reads the scope, asks {@link ContentionRules} for the next step and
 * performs it; the rules are pure, the ZooKeeper operations all live in {@link ScopeProtocol}.
 *
 * <h2>Invariants (SPEC §4)</h2>
 * <ul>
 *   <li>Decisions come from reads of ZooKeeper; authority comes only from conditional writes.
 *       {@code LeaderLatch.hasLeadership()} is a hint that this contender may try the lease CAS,
 *       never a permission to cross.</li>
 *   <li>Every write of the executor is conditional on its token (the scope znode's version) and
 *       bound to the scope's incarnation (its election node, the genesis id, its armed record):
 *       the lease CAS, each checkpoint's renewal, the arming multi and the outcome multi. The
 *       election node the lease CAS checks is read before the scope, so the CAS cannot land in a
 *       scope recreated after that read.</li>
 *   <li>Every lease write's zxid is compared with the rollback witness as it stood when the write
 *       was sent: an ensemble behind a zxid already seen stops the executor before it can arm.</li>
 *   <li>A contender that is interrupted (or fails closed) after its lease write was sent, before
 *       it decided, releases the lease: one whose reply it did not wait for is recognised first by
 *       a read on the same session. So a SIGTERM while a worker enters leaves the scope open, and
 *       the next contender need not wait out a TTL.</li>
 *   <li>The action runs only after the arming multi returned success on the raw handle, in the
 *       same session the lease was taken in, while connected, and while this thread was not
 *       interrupted. A connection loss during arming counts as armed and the action is never
 *       invoked; an interrupt before the write is sent arms nothing; an interrupt while the write
 *       is in flight waits for its result, and an armed scope whose action was never invoked is
 *       recorded {@code not_sent}.</li>
 *   <li>The action is never run on a Curator thread: the latch listener, the watcher and the
 *       connection listener only bump {@link #events} and notify the owner thread, which re-reads.</li>
 *   <li>Any doubt (an unparsable record, missing permission, a lost session, a write whose
 *       result is unknown) ends in {@code stop_unavailable}, never in a guess.</li>
 * </ul>
 *
 * <p>Not thread-safe except for the event entry points ({@link #onConnectionState},
 * {@link #onBackgroundError} and the watcher/latch callbacks), which only record and notify.
 */
final class DefaultAttempt implements Attempt {

    private static final Logger LOG = LoggerFactory.getLogger(DefaultAttempt.class);
    private static final int MAX_CHECKPOINT_NAME = 128;
    /** Waits beyond this are waits "forever"; the cap keeps deadline arithmetic from overflowing. */
    private static final Duration MAX_WAIT = Duration.ofDays(365L * 100);

    /**
     * The attempt's phases and the changes allowed between them ({@link #transitionTo} is the one
     * place a phase changes, and refuses any other change).
     */
    enum Phase {
        CONTENDING, PROCEEDING, ARMED, DONE, STOPPED, CLOSED;

        private static final Map<Phase, Set<Phase>> ALLOWED = new EnumMap<>(Phase.class);

        static {
            ALLOWED.put(CONTENDING, EnumSet.of(PROCEEDING, STOPPED, CLOSED));
            ALLOWED.put(PROCEEDING, EnumSet.of(ARMED, STOPPED, CLOSED));
            ALLOWED.put(ARMED, EnumSet.of(DONE, CLOSED));
            ALLOWED.put(DONE, EnumSet.of(CLOSED));
            ALLOWED.put(STOPPED, EnumSet.of(CLOSED));
            ALLOWED.put(CLOSED, EnumSet.noneOf(Phase.class));
        }

        /** Whether an attempt in this phase may change to {@code next}. */
        boolean mayBecome(Phase next) {
            return ALLOWED.get(this).contains(next);
        }

        /** @throws IllegalStateException when an attempt in this phase may not change to {@code next} */
        void requireMayBecome(Phase next) {
            if (!mayBecome(next)) {
                throw new IllegalStateException("an attempt cannot go from " + name().toLowerCase() + " to "
                        + next.name().toLowerCase() + " (allowed: " + ALLOWED.get(this) + ")");
            }
        }
    }

    private final DefaultGate gate;
    private final EffectKey key;
    private final String keyPath;
    /** This attempt's id: written into its records (its actor), so an operator can tell its writes apart. */
    private final String attemptId;
    private final ScopeProtocol protocol;
    /**
     * The paths this attempt set watches on: {@link #close} removes them. Concurrent: the close of
     * another attempt of the gate asks whether this one still watches a path ({@link #watches}).
     */
    private final Set<String> watched = ConcurrentHashMap.newKeySet();
    private final Watcher watcher = event -> signal();

    // Event state, written by Curator threads, read by the owner under the monitor.
    private final Object monitor = new Object();
    private long events;
    /** The part of {@link #events} that came from this attempt's election latch. */
    private long latchEvents;
    private Throwable backgroundError;
    private boolean sessionLost;

    // Owner-thread state.
    private Phase phase = Phase.CONTENDING;
    private Decision decision;
    private ZooKeeperOps.ElectionMember latch;
    private int latchScope = -1;
    /** The scope whose election container is known to exist (created with the key, or seen), or -1. */
    private int latchKnownFor = -1;
    /** Whether this attempt has given its election a moment to answer before watching the scope. */
    private boolean electionSettled;
    /** The scope this attempt created (with the key) or opened (from an authorization), or -1. */
    private int ownScope = -1;
    private boolean watchesSet;
    private volatile String scopePath;
    private ScopeView view;
    /** The highest scope whose chain of custody this attempt has checked ({@link ScopeReads#verifyChain}). */
    private int verifiedUpTo;
    /** The key znode's creation zxid, of the incarnation the lease was written in (set by takeLease): with the genesis id, its identity. */
    private long keyZxid;
    /** The secret the armed record commits to, revealed by the outcome; known to this executor alone. */
    private String secret;
    private FencingToken token;
    private Records.Scope leasedScope;
    private long leaseSession;
    /** The election node the lease was taken with: every later lease write and the arming check it. */
    private String leaseNode;
    /**
     * A lease write of this attempt's whose landing could not be learnt (its wait was interrupted, and
     * so was the read that asked): the release asks again before it is sent. Null otherwise.
     */
    private UnconfirmedLease unconfirmedLease;
    private final List<String> checkpoints = new ArrayList<>();

    DefaultAttempt(DefaultGate gate, EffectKey key) {
        this.gate = gate;
        this.key = key;
        this.keyPath = Layout.keyPath(gate.protocol.namespace(), key.key());
        this.attemptId = Records.newAttemptId();
        this.protocol = gate.protocol;
    }

    @Override
    public EffectKey key() {
        return key;
    }

    @Override
    public Decision decision() {
        return decision;
    }

    // ---- entering: CONTENDING → PROCEEDING | STOPPED ------------------------------------------

    void enter(Duration wait) throws InterruptedException {
        Instant started = gate.clock.instant();
        Decision d;
        try {
            d = gate.ns.witnessStop(keyPath, -1); // before anything is written: the key, its election
            if (d == null) {
                d = contend(started.plus(wait.compareTo(MAX_WAIT) > 0 ? MAX_WAIT : wait), !wait.isZero());
            }
            if (d.proceeds() && Thread.currentThread().isInterrupted()) {
                // The interrupt came while the lease write was answered, and ZooKeeper's client, which waits only
                // while no reply has come, returned the reply with the flag set: an interrupt before the decision.
                throw new InterruptedException("interrupted while taking the lease of scope " + view.scope() + " of key "
                        + key.key() + ": nothing was armed, the lease was released");
            }
        } catch (InterruptedException e) {
            // A lease taken (or learnt to have landed) just before: nothing was armed, so it is released, and the
            // next contender need not wait out its TTL.
            releaseLease(false);
            throw e;
        } catch (Exception e) {
            d = failClosed(e, scopePath != null ? scopePath : keyPath);
            releaseLease(false); // likewise
        }
        decide(d, Duration.between(started, gate.clock.instant()));
    }

    /**
     * The contention loop: read, ask the rules, and perform the step they name. The first read is
     * one read-only multi (genesis, buckets, key, latest scope); a contender that finds no key
     * creates it with its first scope and election container in one multi, and knows that scope
     * without reading it back. A scope at version 0 has never been written (open, no lease), in any
     * incarnation, so the creator, whose only news since then is its own election, need not read
     * it again before the lease CAS: a CAS at version 0 can only land on an open scope. (Others read
     * first: their view may be old, and a CAS bound to fail is still a logged transaction.)
     */
    private Decision contend(Instant deadline, boolean waited) throws Exception {
        if (!gate.zk.awaitConnected(gate.connectTimeout)) {
            return new Decision.StopUnavailable(StopReason.ZOOKEEPER_UNREACHABLE, Evidence.of(gate.protocol.namespace(), -1,
                    "no ZooKeeper connection within " + gate.connectTimeout.toMillis() + " ms (" + gate.zk.connectString()
                            + "): check that the ensemble is up and reachable"));
        }
        ScopeReads.KeyRead read = protocol.reads().readKey(key);
        Decision.Stop namespaceStop = gate.ns.checkGenesis(read.genesis());
        if (namespaceStop == null) {
            namespaceStop = gate.ns.rollbackKept(keyPath, -1);
        }
        if (namespaceStop != null) {
            return namespaceStop;
        }
        boolean created = false;
        for (int tries = 0; !read.exists(); tries++) {
            ExecutorWrites.KeyCreation creation = protocol.executor().createKey(key, gate.ns.genesisId(), read.firstBucket(),
                    read.secondBucket());
            if (creation == ExecutorWrites.KeyCreation.CREATED) {
                created = true;
                ownScope = 0;
                Records.Scope initial = new Records.Scope("initial", gate.clock.instant(), null, false, false);
                String path = Layout.scope(keyPath, 0);
                read = new ScopeReads.KeyRead(read.genesis(), true, true, 0, new ScopeReads.ScopeRead(
                        ScopeView.created(0, path, initial), AuthorizationView.absent(Layout.authorization(keyPath, 0), 0),
                        true));
            } else if (tries < 3) {
                read = protocol.reads().readKey(key); // a racing contender created it: read what it wrote
            } else {
                throw new UnreadableRecordException(keyPath, "the key keeps disappearing right after it is created");
            }
        }
        Contention contention = new Contention(read.scope(), created, deadline, waited);
        while (true) {
            Decision d = contention.read();
            if (d == null) {
                d = contention.perform(ContentionRules.next(contention.situation));
            }
            if (d != null) {
                return d;
            }
        }
    }

    /**
     * One contention loop's state: the scope it is at, what it observed, and the events it has
     * read up to, so that it reads again only when something may have changed. {@link #read}
     * builds the situation; the rules name a step; the method named after the step performs it.
     * A step that writes or waits returns null (read again); a step that only gathers a fact
     * (join the election, look up the holder) asks the rules again without reading; a stop or a
     * proceed ends the loop.
     */
    private final class Contention implements ContentionRules.Performer<Decision> {

        private final boolean created;
        private final Instant deadline;
        private final boolean waited;
        /**
         * However the rules wait, a contender never loops past this: a caller's deadline, or the two lease
         * TTLs an open scope may need for its election, and one more; and a poll after that, so that the
         * rules, which decide at the caller's deadline themselves (an armed scope: unknown), get that turn.
         */
        private final Instant giveUp;
        /** The key's read of the scope, until the first round uses it. */
        private ScopeReads.ScopeRead firstRead;
        private int n;
        private ContentionRules.Observations seen = ContentionRules.Observations.NONE;
        private long readAtEvents;
        private long readAtLatchEvents;
        private boolean watchedRead;
        // This round's.
        private long seenEvents;
        private Instant now;
        private boolean connected;
        private ContentionRules.Situation situation;

        Contention(ScopeReads.ScopeRead firstRead, boolean created, Instant deadline, boolean waited) {
            this.firstRead = firstRead;
            this.created = created;
            this.deadline = deadline;
            this.waited = waited;
            n = firstRead.view().scope();
            latchKnownFor = firstRead.latchExists() ? n : -1;
            readAtEvents = eventCount();
            readAtLatchEvents = latchEventCount();
            giveUp = max(deadline, gate.clock.instant().plus(gate.leaseTtl.multipliedBy(3))).plus(ContentionRules.NODE_POLL);
        }

        /** Reads scope {@code n} (unless nothing can have changed it) into {@link #situation}; or a stop. */
        Decision read() throws Exception {
            if (Thread.interrupted()) {
                throw new InterruptedException("interrupted while contending for key " + key.key() + ": nothing was armed");
            }
            if (!gate.clock.instant().isBefore(giveUp)) {
                return new Decision.StopBusy(StopReason.WAIT_EXPIRED, Evidence.of(scopePath != null ? scopePath : keyPath,
                        n, "no decision on scope " + n + " before " + giveUp + ": this contender gave up; enter again"));
            }
            seenEvents = eventCount();
            Throwable error = takeBackgroundError();
            if (error != null) {
                return failClosed(error, scopePath);
            }
            boolean joined = latch != null && latchScope == n;
            // Read before the scope: the lease CAS checks this node, which binds the CAS to the
            // incarnation of the scope that the read below sees (a recreated scope has no such node).
            String ourNode = joined ? latch.ourPath() : null;
            AuthorizationView authorization;
            long latchNews = latchEventCount() - readAtLatchEvents;
            boolean onlyElectionNews = latchNews > 0 && seenEvents - readAtEvents == latchNews;
            if (firstRead != null) {
                view = firstRead.view();
                authorization = view.state().consumed() ? firstRead.authorization() : null;
                firstRead = null;
            } else if (onlyElectionNews && created && (!watchesSet || watchedRead) && view.scope() == n
                    && view.version() == 0 && view.state() == ScopeState.OPEN) {
                authorization = null; // unwritten since read: still open (see contend)
                readAtEvents = seenEvents;
                readAtLatchEvents += latchNews;
            } else {
                readAtEvents = seenEvents;
                readAtLatchEvents = latchEventCount();
                watchedRead = watchesSet;
                if (watchesSet) {
                    ScopeReads.ScopeRead watchedOnce = protocol.reads().readScope(keyPath, n, watcher);
                    view = watchedOnce.view();
                    authorization = view.state().consumed() ? watchedOnce.authorization() : null;
                } else {
                    ScopeReads.ScopeRead once = protocol.reads().readScopeOnce(keyPath, n);
                    view = once.view();
                    n = view.scope();
                    authorization = view.state().consumed() ? once.authorization() : null;
                    if (once.latchExists()) {
                        latchKnownFor = n;
                    }
                }
            }
            scopePath = view.path();
            if (view.scope() > verifiedUpTo) {
                protocol.reads().verifyChain(keyPath, view); // once per scope: records never change once written
                verifiedUpTo = view.scope();
            }
            if (watchesSet) {
                watched.add(scopePath);
                watched.add(Layout.outcome(scopePath)); // readScope's exists watch
            }
            now = gate.clock.instant();
            connected = gate.zk.connected();
            seen = seen.observe(view, joined && connected && ourNode == null, now);
            situation = new ContentionRules.Situation(view, authorization,
                    new ContentionRules.Election(joined, joined && latch.hasLeadership(), ourNode), seen, null,
                    now, deadline, waited, gate.leaseTtl, ownScope == n);
            return null;
        }

        Decision perform(ContentionRules.Step step) throws Exception {
            return step.performWith(this);
        }

        @Override
        public Decision stop(ContentionRules.Stop step) {
            return step.stop();
        }

        @Override
        public Decision advance(ContentionRules.Advance step) {
            n++; // the not_sent outcome's multi created scope n+1 with it
            return null;
        }

        @Override
        public Decision openAuthorized(ContentionRules.OpenAuthorized open) throws Exception {
            String weakness = protocol.reads().authorizationsWeakness(keyPath);
            if (weakness != null) {
                return weakAuthorizations(keyPath, n, open.authorization().path(), weakness);
            }
            ExecutorWrites.Opening opening = protocol.executor().openAuthorizedScope(keyPath, view, open.authorization());
            if (opening != ExecutorWrites.Opening.CHANGED) {
                LOG.info("redelivery authorized by {} ({}): scope {} {}", open.authorization().record().by(),
                        open.authorization().path(), n + 1,
                        opening == ExecutorWrites.Opening.OPENED ? "opened" : "was opened by another contender");
                if (opening == ExecutorWrites.Opening.OPENED) {
                    ownScope = n + 1;
                }
                n++;
            }
            return null;
        }

        @Override
        public Decision join(ContentionRules.Join step) throws Exception {
            joinElection(n);
            seen = seen.observe(view, connected, now); // our node is being created
            situation = situation.withElection(new ContentionRules.Election(true, false, null), seen);
            return perform(ContentionRules.next(situation));
        }

        @Override
        public Decision checkHolder(ContentionRules.CheckHolder check) throws Exception {
            // Outside the election, watch the holder's node too: its end must wake this contender.
            boolean outside = !situation.election().joined();
            if (outside) {
                watched.add(check.electionNode());
            }
            situation = situation.withHolderPresent(protocol.reads().latchNodeExists(check.electionNode(),
                    outside ? watcher : null));
            return perform(ContentionRules.next(situation));
        }

        @Override
        public Decision probeElection(ContentionRules.ProbeElection step) throws Exception {
            String latchPath = Layout.latch(scopePath);
            if (!protocol.executor().mayJoinElection(latchPath, attemptId)) {
                return new Decision.StopUnavailable(StopReason.PERMISSION_DENIED, Evidence.of(latchPath, view.scope(),
                        "ZooKeeper refused this identity CREATE on the election znode " + latchPath
                                + " (NoAuth): it can never join the election; fix the ACLs or the worker's credentials"));
            }
            seen = seen.permitted(now);
            return null;
        }

        @Override
        public Decision takeLease(ContentionRules.TakeLease take) throws Exception {
            Decision d = DefaultAttempt.this.takeLease(take.takeoverCause(), take.electionNode());
            if (d == null) {
                readAtEvents = -1; // someone else wrote the scope first (or our election node changed): read again
            }
            return d;
        }

        @Override
        public Decision await(ContentionRules.Wait step) throws InterruptedException {
            Instant until = step.until();
            if (!watchesSet && latch != null && latchScope == n && !latch.hasLeadership() && !electionSettled) {
                // Just joined: give the election a moment to answer before watching the scope.
                // Uncontended, leadership comes in a few round trips and the scope needs no watch;
                // the key's creator is nearly always first, so it gives the election longer.
                electionSettled = true;
                // (The rules poll every NODE_POLL while the node is being created; the creator, which
                // is not probing for a missing node yet, may wait up to the grace before that.)
                awaitEvent(seenEvents, created ? now.plus(ContentionRules.ELECTION_NODE_GRACE)
                        : min(until, now.plus(ContentionRules.NODE_POLL)));
            } else {
                waitFor(seenEvents, until);
            }
            return null;
        }
    }

    private static Instant min(Instant a, Instant b) {
        return a.isBefore(b) ? a : b;
    }

    private static Instant max(Instant a, Instant b) {
        return a.isAfter(b) ? a : b;
    }

    /**
     * Transition CONTENDING → PROCEEDING: {@code multi(check electionNode, setData(scope, our lease,
     * version))}. Returns the proceed (or a rollback stop), or null when the CAS lost.
     */
    private Decision takeLease(String takeoverCause, String electionNode) throws Exception {
        long session = gate.zk.sessionId();
        KeyHistory.Lease previous = view.data().lease();
        KeyHistory.Takeover takeover = takeoverCause == null ? null
                : new KeyHistory.Takeover(takeoverCause, previous == null ? null : previous.holder());
        Records.Scope leased = view.data().withLease(new KeyHistory.Lease(actor(session), electionNode,
                gate.clock.instant().plus(gate.leaseTtl), takeover));
        long seenBeforeSend = gate.ns.highestZxid();
        ExecutorWrites.LeaseWrite write;
        try {
            write = protocol.executor().writeLease(scopePath, view.version(), leased, electionNode);
        } catch (InterruptedException e) {
            FencingToken landed = landedDespiteInterrupt(view.version(), leased, electionNode, "taking");
            if (landed != null) { // ours, for enter to release
                token = landed;
                leasedScope = leased;
                leaseSession = session;
                leaseNode = electionNode;
            }
            throw e;
        }
        if (!write.written()) {
            if (write.refusal() == ExecutorWrites.LeaseRefusal.ELECTION_NODE_GONE && latch != null
                    && electionNode.equals(latch.ourPath())) {
                // Deleted under a latch that does not know (an admin; the latch watches only its predecessor):
                // join again with a new node, instead of sending the same refused CAS in a loop.
                LOG.warn("this contender's election node {} is gone; joining the election again", electionNode);
                closeLatch();
            }
            return null;
        }
        token = write.token();
        // Ours from here on: whatever interrupts the contender below, the lease is released (see enter).
        leasedScope = leased;
        leaseSession = session;
        leaseNode = electionNode;
        // The key's creation zxid, of the incarnation this lease was written in (the action's idempotency key is
        // derived from it): scope 0 was created in the key's own multi, so its czxid is the key's; for a later
        // scope the key is asked. Not the zxid the first read saw: the key may have been deleted since (by an
        // admin, or a deleteall of the namespace under way) and created again, and this contender decided from
        // the new incarnation's records.
        keyZxid = view.scope() == 0 ? write.czxid() : protocol.reads().keyZxid(keyPath);
        synchronized (monitor) {
            sessionLost = false; // only a loss after the lease was taken concerns the executor
        }
        gate.ns.flushMarks();
        Decision.Stop rolledBack = rollbackStop(seenBeforeSend);
        if (rolledBack != null) {
            releaseLease(false);
            return rolledBack;
        }
        if (takeoverCause != null) {
            gate.metrics.takeover(takeoverCause);
            LOG.info("took over the lease of scope {} ({}) from {}", view.scope(), takeoverCause,
                    previous == null ? "an election whose leader did not act"
                            : "task " + previous.holder().task() + " attempt " + previous.holder().attempt());
        }
        return new Decision.Proceed(view.scope(), token);
    }

    /**
     * The lease write landed below a zxid seen for this namespace before it was sent: the ensemble
     * was rolled back. The mark is the one from before the send, not the one now: meanwhile other
     * threads' writes (this gate is shared) and other gates on the host raise it past this write
     * without any rollback. Nothing is lost by that: every zxid seen before the send was committed
     * before this write reached the leader, so an ensemble that kept its history gives this write
     * a higher one; a restored ensemble answers below a mark taken before the restore. Called after
     * the write's zxid was flushed, it also stops when that flush found the witness unreadable.
     */
    private Decision.Stop rollbackStop(long highest) {
        Decision.Stop blind = gate.ns.witnessStop(scopePath, view.scope());
        if (blind == null) {
            blind = gate.ns.rollbackKept(scopePath, view.scope()); // found meanwhile by another process of the host
        }
        if (blind != null || token.zxid() >= highest) {
            return blind;
        }
        gate.ns.rolledBack(highest, token.zxid()); // kept: every later attempt of this host stops before writing
        return new Decision.StopUnavailable(StopReason.ZOOKEEPER_ROLLED_BACK, Evidence.of(scopePath, view.scope(),
                "the lease write landed at zxid " + token.zxid() + " but zxid "
                        + highest + " was already seen for namespace " + gate.protocol.namespace()
                        + " (genesis " + gate.ns.genesisId() + "): the ensemble was restored from an older snapshot and may"
                        + " have forgotten outcomes; nothing was armed. This host's workers stop until the admin, having"
                        + " reconciled, runs `oncegate init --namespace " + gate.protocol.namespace() + " --accept-restore`"
                        + " (deploy/RUNBOOK.md, 'ZooKeeper data lost, or restored from a backup')"));
    }

    private void joinElection(int n) throws Exception {
        closeLatch();
        String latchPath = Layout.latch(Layout.scope(keyPath, n));
        // Created here (unless known to exist), synchronously and with its ACL, because a LeaderLatch
        // that cannot create it only logs: a missing permission must stop this contender, not leave it waiting.
        if (latchKnownFor != n) {
            protocol.executor().createElectionContainer(latchPath);
            latchKnownFor = n;
        }
        latch = gate.zk.joinElection(latchPath, attemptId, this::latchSignal);
        latchScope = n;
    }

    // ---- checkpoints: PROCEEDING → PROCEEDING | STOPPED ---------------------------------------

    @Override
    public Decision checkpoint(String name) throws InterruptedException {
        return inLogContext(() -> checkpointInContext(name));
    }

    private Decision checkpointInContext(String name) throws InterruptedException {
        Objects.requireNonNull(name, "name");
        if (name.isEmpty() || name.length() > MAX_CHECKPOINT_NAME) {
            throw new IllegalArgumentException("name: a checkpoint name has 1 to " + MAX_CHECKPOINT_NAME + " characters");
        }
        Records.requireWellFormed("name", name);
        if (phase == Phase.STOPPED) {
            return decision;
        }
        requirePhase(Phase.PROCEEDING, "checkpoint");
        Decision.Stop stop = connectionStop();
        if (stop == null) {
            KeyHistory.Lease held = leasedScope.lease();
            Records.Scope renewed = leasedScope.withLease(new KeyHistory.Lease(held.holder(), leaseNode,
                    gate.clock.instant().plus(gate.leaseTtl), held.takeover()));
            boolean passed = false;
            try {
                long seenBeforeSend = gate.ns.highestZxid();
                ExecutorWrites.LeaseWrite write = protocol.executor().writeLease(scopePath, token.version(), renewed, leaseNode);
                if (write.written()) {
                    token = write.token();
                    leasedScope = renewed;
                    gate.ns.flushMarks();
                    stop = rollbackStop(seenBeforeSend);
                    if (stop == null) {
                        checkpoints.add(name);
                        decision = new Decision.Proceed(view.scope(), token);
                        LOG.debug("checkpoint {} passed, token {}", name, token);
                        passed = true;
                    }
                } else {
                    stop = leaseRefused(write.refusal(), "checkpoint " + name);
                }
            } catch (InterruptedException e) {
                FencingToken landed = landedDespiteInterrupt(token.version(), renewed, leaseNode, "renewing");
                if (landed != null) { // the token moved: the release that closing the attempt sends must carry it
                    token = landed;
                    leasedScope = renewed;
                }
                throw e; // still PROCEEDING: closing the attempt releases the lease, renewed or not
            } catch (Exception e) {
                stop = failClosed(e, scopePath);
            }
            if (passed) {
                if (Thread.currentThread().isInterrupted()) {
                    // Interrupted while the renewal was answered (see enter): the same as during its flight.
                    throw new InterruptedException("interrupted while renewing the lease of scope " + view.scope()
                            + " at checkpoint " + name + ": the renewal landed (token " + token + "); closing the"
                            + " attempt releases the lease");
                }
                return decision;
            }
        }
        stopExecutor(stop);
        return stop;
    }

    private Decision.Stop leaseRefused(ExecutorWrites.LeaseRefusal refusal, String during) {
        return switch (refusal) {
            case VERSION_MOVED -> {
                gate.metrics.fenced("checkpoint");
                yield fencedStop(during);
            }
            case ELECTION_NODE_GONE -> electionNodeGone(during);
            case SCOPE_GONE -> scopeGone(during);
        };
    }

    private Decision.Stop electionNodeGone(String during) {
        return new Decision.StopUnavailable(StopReason.CONNECTION_LOST, Evidence.of(leaseNode, view.scope(),
                "this executor's election node is gone at " + during + " (its session ended, or the key was deleted"
                        + " and recreated): its lease is void; enter again"));
    }

    private Decision.Stop scopeGone(String during) {
        return new Decision.StopUnavailable(StopReason.UNREADABLE_RECORD, Evidence.of(scopePath, view.scope(),
                "the scope znode is gone at " + during + ": the key's history was deleted; nothing was armed."
                        + " An operator must check what was delivered"));
    }

    // ---- crossing: PROCEEDING → ARMED → DONE, or STOPPED -------------------------------------

    @Override
    public Crossing cross(BoundaryAction action) throws InterruptedException {
        Crossing crossing = inLogContext(() -> crossInContext(action));
        gate.ns.flushMarks(); // the outcome's zxid is on this host's file before the caller goes on
        return crossing;
    }

    private Crossing crossInContext(BoundaryAction action) throws InterruptedException {
        Objects.requireNonNull(action, "action");
        requirePhase(Phase.PROCEEDING, "cross");
        Decision.Stop stop = connectionStop();
        if (stop == null && (gate.isClosed() || !gate.zk.started())) {
            stop = new Decision.StopUnavailable(StopReason.CONNECTION_LOST, Evidence.of(scopePath, view.scope(),
                    "the gate or its ZooKeeper client was closed before arming; nothing was armed"));
        }
        if (stop == null && Thread.interrupted()) {
            // Checked right before the write is sent: an interrupted thread would have ZooKeeper
            // queue the multi and throw at once, leaving the scope armed and the action never run.
            stopExecutor(new Decision.StopUnavailable(StopReason.INTERRUPTED, Evidence.of(scopePath, view.scope(),
                    "interrupted before the arming write was sent: nothing was armed and the lease was released")));
            Thread.currentThread().interrupt();
            throw new InterruptedException("interrupted before arming scope " + view.scope() + " of key " + key.key()
                    + ": nothing was armed, the lease was released");
        }
        ExecutorWrites.Arming arming = null;
        if (stop == null) {
            Records.Scope armedScope = leasedScope.armedNow();
            KeyHistory.Armed armed = new KeyHistory.Armed(leasedScope.lease().holder(), token, checkpoints, gate.clock.instant());
            secret = Records.newSecret();
            try {
                arming = protocol.executor().arm(scopePath, token, leaseNode, gate.ns.genesisId(), armedScope, armed, secret,
                        armReplyBound());
                stop = armingStop(arming);
            } catch (Exception e) {
                stop = e instanceof KeeperException.ConnectionLossException || e instanceof CuratorConnectionLossException
                        ? new Decision.StopUnavailable(StopReason.WRITE_RESULT_UNKNOWN, Evidence.of(scopePath, view.scope(),
                        "the arming write could not be sent (" + e + "); nothing was invoked"))
                        : failClosed(e, scopePath);
            }
        }
        if (stop != null) {
            stopExecutor(stop);
            return new Crossing.Refused(stop);
        }
        transitionTo(Phase.ARMED);
        gate.ns.flushMarks(); // the arming's zxid is on this host's file before the boundary is crossed
        if (arming.interrupted()) {
            LOG.debug("armed with token {}, but interrupted meanwhile: the action is not invoked and the scope is"
                    + " recorded not_sent", token);
        } else {
            LOG.debug("armed with token {}; invoking the action", token);
        }
        return invokeAndRecord(action, arming.interrupted());
    }


    /** How long the arming write may wait for its reply: well past the session timeout. */
    private Duration armReplyBound() throws Exception {
        int session = gate.zk.sessionTimeoutMs();
        return Duration.ofMillis(Math.max(10_000L, 2L * session + gate.connectTimeout.toMillis()));
    }

    /** The stop an arming refusal means, or null when armed. */
    private Decision.Stop armingStop(ExecutorWrites.Arming arming) {
        if (arming.armed()) {
            return null;
        }
        return switch (arming.refusal()) {
            case RESULT_UNKNOWN -> new Decision.StopUnavailable(StopReason.WRITE_RESULT_UNKNOWN, Evidence.of(scopePath,
                    view.scope(), "the arming write's result is unknown (" + arming.code() + "); it counts as armed and"
                            + " the action was not invoked; `oncegate inspect` shows whether the scope was armed"));
            case NAMESPACE_REPLACED -> new Decision.StopUnavailable(StopReason.NAMESPACE_REPLACED, Evidence.of(
                    Layout.genesisMarker(gate.protocol.namespace(), gate.ns.genesisId()), view.scope(),
                    "the namespace's genesis " + gate.ns.genesisId() + " is gone: its data was wiped or re-initialised"
                            + " since this executor took its lease; nothing was armed"));
            case ELECTION_NODE_GONE -> electionNodeGone("arming");
            case FENCED -> {
                gate.metrics.fenced("arm");
                yield fencedStop("arming");
            }
            case SCOPE_GONE -> scopeGone("arming");
            case ALREADY_ARMED -> {
                gate.metrics.fenced("arm");
                yield fencedStop("arming, which found the scope armed already");
            }
            case ERROR -> arming.code() == KeeperException.Code.NOAUTH
                    ? new Decision.StopUnavailable(StopReason.PERMISSION_DENIED, Evidence.of(scopePath, view.scope(),
                    "ZooKeeper refused the arming write (NoAuth); nothing was armed"))
                    : new Decision.StopUnavailable(StopReason.ZOOKEEPER_ERROR, Evidence.of(scopePath, view.scope(),
                    "ZooKeeper refused the arming write (" + arming.code() + "); nothing was armed"));
        };
    }

    /**
     * The action, exactly once (or never, when interrupted while arming), then the outcome multi.
     * Recorded even when interrupted: the outcome matters more than a prompt return.
     */
    private Crossing invokeAndRecord(BoundaryAction action, boolean interruptedWhileArming) {
        Instant started = gate.clock.instant();
        Outcome outcome;
        String detail;
        boolean interrupted = interruptedWhileArming;
        if (interruptedWhileArming) {
            Thread.interrupted(); // cleared for the outcome write, restored below
            outcome = Outcome.NOT_SENT;
            detail = "the executor's thread was interrupted while arming: the action was never invoked";
        } else {
            try {
                ActionResult result = action.deliver(new BoundaryAction.Context(key, view.scope(), token, gate.taskId,
                        gate.ns.genesisId(), keyZxid));
                if (result == null) {
                    outcome = Outcome.SEND_STATUS_UNKNOWN;
                    detail = "the action returned null instead of an ActionResult";
                } else {
                    outcome = result.verified() ? Outcome.SENT_VERIFIED : Outcome.SEND_STATUS_UNKNOWN;
                    detail = result.detail();
                }
            } catch (ProvenNotSentException e) {
                outcome = Outcome.NOT_SENT;
                detail = e.evidence();
            } catch (InterruptedException e) {
                interrupted = true;
                outcome = Outcome.SEND_STATUS_UNKNOWN;
                detail = "the action was interrupted";
            } catch (Exception | Error e) {
                outcome = Outcome.SEND_STATUS_UNKNOWN;
                detail = "the action failed: " + e;
            }
        }
        Duration boundary = Duration.between(started, gate.clock.instant());
        interrupted |= Thread.interrupted();
        boolean recorded = false;
        KeyHistory.OutcomeRecord record = Records.outcomeRecord(outcome, detail, actor(leaseSession), token,
                gate.clock.instant());
        try {
            ExecutorWrites.OutcomeWrite write = protocol.executor().recordOutcome(keyPath, view.scope(), leaseNode, record,
                    secret);
            recorded = write == ExecutorWrites.OutcomeWrite.RECORDED;
            switch (write) {
                case RECORDED -> { }
                case ANOTHER_OUTCOME -> {
                    gate.metrics.fenced("outcome");
                    LOG.error("another outcome is already recorded for this scope (an operator's reconciliation, or a"
                            + " forged one); ours ({}) was not written: an operator must check the key (`oncegate inspect`)",
                            outcome.wireName());
                }
                case ARMED_RECORD_GONE -> {
                    gate.metrics.fenced("outcome");
                    LOG.error("outcome {} NOT recorded: its armed record is gone since this executor armed it (the key"
                            + " was deleted, maybe recreated); an operator must check the key (`oncegate inspect`)",
                            outcome.wireName());
                }
            }
        } catch (Exception e) {
            if (e instanceof InterruptedException) {
                interrupted = true;
            }
            LOG.error("gave up recording outcome {} ({}); the scope stays armed and reads as send_status_unknown to"
                    + " everyone", outcome.wireName(), e.toString());
        }
        if (interrupted) {
            Thread.currentThread().interrupt();
        }
        gate.metrics.outcome(outcome, recorded, boundary);
        LOG.info("outcome {} (recorded={}): {}", outcome.wireName(), recorded, detail);
        transitionTo(Phase.DONE);
        return new Crossing.Crossed(outcome, view.scope(), token, detail, recorded);
    }

    // ---- stops and fail-closed -----------------------------------------------------------------

    /** The executor's session must be the one it leased in, and connected right now. */
    private Decision.Stop connectionStop() {
        boolean lost;
        synchronized (monitor) {
            lost = sessionLost;
        }
        long session;
        try {
            session = gate.zk.sessionId();
        } catch (Exception e) {
            session = 0;
        }
        if (lost || session != leaseSession) {
            return new Decision.StopUnavailable(StopReason.CONNECTION_LOST, Evidence.of(scopePath, view.scope(),
                    "the ZooKeeper session this executor leased in (0x" + Long.toHexString(leaseSession)
                            + ") was lost; its lease may be taken over; enter again"));
        }
        if (!gate.zk.connected()) {
            return new Decision.StopUnavailable(StopReason.CONNECTION_LOST, Evidence.of(scopePath, view.scope(),
                    "not connected to ZooKeeper: the lease cannot be revalidated"));
        }
        return null;
    }

    /** The token no longer matches: say who holds the scope now. */
    private Decision.Stop fencedStop(String during) {
        try {
            ScopeView now = protocol.reads().readScope(keyPath, view.scope());
            return switch (now.state()) {
                case SENT_VERIFIED -> new Decision.StopSent(StopReason.SENT_VERIFIED, now.evidence("fenced during " + during));
                case SEND_STATUS_UNKNOWN, ARMED -> new Decision.StopUnknown(
                        now.state() == ScopeState.ARMED ? StopReason.ARMED_WITHOUT_OUTCOME : StopReason.SEND_STATUS_UNKNOWN,
                        now.evidence("fenced during " + during));
                // not_sent: the key is free again in the next scope; this executor just lost its turn.
                case OPEN, LEASED, NOT_SENT -> new Decision.StopBusy(StopReason.FENCED, now.evidence(
                        "fenced during " + during + ": token " + token + " was superseded"));
            };
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return new Decision.StopBusy(StopReason.FENCED, Evidence.of(scopePath, view.scope(),
                    "fenced during " + during + ": token " + token + " was superseded"));
        } catch (Exception e) {
            return failClosed(e, scopePath); // fenced, and what superseded it cannot be read: fail closed on it
        }
    }

    /** Maps any failure to reach or understand ZooKeeper to {@code stop_unavailable}. */
    private Decision.StopUnavailable failClosed(Throwable e, String path) {
        if (e instanceof StopException s) {
            return s.stop();
        }
        String where = path != null ? path : keyPath;
        int scope = view != null ? view.scope() : -1;
        StopReason reason;
        if (e instanceof UnreadableRecordException u) {
            reason = StopReason.UNREADABLE_RECORD;
            where = u.path();
        } else if (e instanceof KeeperException.NoAuthException || e instanceof KeeperException.AuthFailedException) {
            reason = StopReason.PERMISSION_DENIED;
        } else if (e instanceof KeeperException.ConnectionLossException || e instanceof KeeperException.SessionExpiredException
                || e instanceof KeeperException.OperationTimeoutException || e instanceof CuratorConnectionLossException
                || e instanceof KeeperException.SessionMovedException) {
            reason = StopReason.CONNECTION_LOST;
        } else {
            reason = StopReason.ZOOKEEPER_ERROR;
            LOG.error("unexpected failure, failing closed", e);
        }
        if (e instanceof KeeperException ke && ke.getPath() != null) {
            where = ke.getPath();
        }
        return new Decision.StopUnavailable(reason, Evidence.of(where, scope, e.getMessage() != null ? e.getMessage() : e.toString()));
    }

    /**
     * A lease write ({@code what}: taking or renewing) had its wait for the reply interrupted;
     * ZooKeeper had sent it, and the server may apply it. Asks, with a read that follows the write on
     * this session (ZooKeeper answers it after the write), whether {@code written} landed at
     * {@code expectedVersion + 1}: its token, or null when it did not land or that cannot be learnt
     * (then it is kept as {@link #unconfirmedLease}, checked with {@code electionNode}, for the release
     * to ask again). The interrupt flag is kept.
     */
    private FencingToken landedDespiteInterrupt(int expectedVersion, Records.Scope written, String electionNode, String what) {
        boolean flagged = Thread.interrupted(); // Curator sets it again; a flagged thread cannot ask ZooKeeper
        try {
            ExecutorWrites.LeaseWrite landed = protocol.executor().recogniseLease(scopePath, expectedVersion, written);
            return landed.written() ? landed.token() : null;
        } catch (InterruptedException again) {
            flagged = true;
            unconfirmedLease = new UnconfirmedLease(expectedVersion, written, electionNode);
            LOG.warn("interrupted twice while {} the lease of scope {}: the release asks again whether the write landed",
                    what, view.scope());
            return null;
        } catch (Exception e) {
            unconfirmedLease = new UnconfirmedLease(expectedVersion, written, electionNode);
            LOG.warn("interrupted while {} the lease of scope {}, and could not learn whether the write landed ({}): the"
                    + " release asks again", what, view.scope(), e.toString());
            return null;
        } finally {
            if (flagged) {
                Thread.currentThread().interrupt();
            }
        }
    }

    /**
     * Records a decision and moves to its phase (PROCEEDING or STOPPED); {@code waited} is the election
     * wait on entry, null for a later stop.
     */
    private void decide(Decision d, Duration waited) {
        decision = d;
        gate.metrics.decision(d, waited);
        transitionTo(d instanceof Decision.Proceed ? Phase.PROCEEDING : Phase.STOPPED);
    }

    /** An executor stopped before crossing ({@link #transitionTo} leaves the election and releases its lease). */
    private void stopExecutor(Decision.Stop stop) {
        decide(stop, null);
    }

    /**
     * Every phase change, and what it does (the way Failsafe's {@code CircuitBreakerImpl.transitionTo}
     * owns its state's changes): first what leaving the old phase takes, then what entering the new one
     * does. Called only by the owner thread.
     * <ul>
     *   <li>Leaving PROCEEDING without arming: the lease is released with a CAS on the token (unless the
     *       executor was fenced: someone else holds it), and the executor gauge drops.</li>
     *   <li>Leaving ARMED: the executor gauge drops.</li>
     *   <li>Entering PROCEEDING: the executor gauge rises.</li>
     *   <li>Entering STOPPED: the stop is logged and the election left (in turn with everyone when the
     *       scope was consumed).</li>
     *   <li>Entering DONE: the election is left.</li>
     *   <li>Entering CLOSED: the election is left, this attempt's watches removed, and the gate forgets it.</li>
     * </ul>
     *
     * @throws IllegalStateException when the change is not one {@link Phase} allows
     */
    private void transitionTo(Phase next) {
        Phase from = phase;
        from.requireMayBecome(next);
        if (from == Phase.PROCEEDING && next != Phase.ARMED) {
            StopReason reason = next == Phase.STOPPED ? ((Decision.Stop) decision).reason() : null;
            // The release is a CAS on our token: it fails harmlessly when someone took the lease
            // over, or when an ambiguous arming write was in fact applied (arming bumps the version).
            // Sent on a fence too: a refusal that reads as one may have left the lease ours (an armed
            // record forged under it, which an interrupted executor cannot read), and the fence was counted.
            releaseLease(reason != StopReason.WRITE_RESULT_UNKNOWN && reason != StopReason.FENCED);
            leasedScope = null;
            gate.metrics.executorEnded();
        } else if (from == Phase.ARMED) {
            gate.metrics.executorEnded();
        }
        phase = next;
        switch (next) {
            case PROCEEDING -> {
                gate.metrics.executorStarted();
                Decision.Proceed p = (Decision.Proceed) decision;
                LogContext.scope(p.scope());
                LOG.debug("proceed with token {}", p.token());
            }
            case STOPPED -> {
                Decision.Stop stop = (Decision.Stop) decision;
                LogContext.scope(stop.evidence().scope());
                LOG.info("{} ({}): {} at {}", stop.kind(), stop.reason().wireName(), stop.evidence().detail(),
                        stop.evidence().path());
                // A consumed scope ends every waiter's election at about the same moment: leave in turn.
                closeLatch(stop instanceof Decision.StopSent || stop instanceof Decision.StopUnknown);
            }
            case DONE -> closeLatch();
            case CLOSED -> {
                closeLatch();
                forgetWatches();
                gate.forget(this);
            }
            case CONTENDING, ARMED -> { }
        }
    }

    /** {@code multi(check electionNode, setData(scope, no lease, token))}: lets the next contender proceed at once. */
    private void releaseLease(boolean countFenced) {
        if (leasedScope == null && unconfirmedLease == null) {
            return;
        }
        // An interrupted executor still releases (the flag would make ZooKeeper's client throw at once, the
        // CAS sent or not): a bounded write, like the outcome's; the flag is restored for the caller.
        boolean flagged = Thread.interrupted();
        try {
            if (unconfirmedLease != null && !learnUnconfirmedLease()) {
                return; // it did not land, and no other lease of ours is held
            }
            Records.Scope released = leasedScope.withLease(null);
            ExecutorWrites.LeaseWrite write = protocol.executor().writeLease(scopePath, token.version(), released, leaseNode);
            if (write.written()) {
                LOG.debug("released the lease without arming");
            } else if (countFenced && write.refusal() == ExecutorWrites.LeaseRefusal.VERSION_MOVED) {
                gate.metrics.fenced("release");
            }
        } catch (InterruptedException e) {
            flagged = true;
            LOG.warn("interrupted while releasing the lease; it lapses after its TTL");
        } catch (Exception e) {
            LOG.warn("could not release the lease ({}); it lapses after its TTL", e.toString());
        } finally {
            if (flagged) {
                Thread.currentThread().interrupt();
            }
        }
        leasedScope = null;
    }

    /**
     * Asks whether {@link #unconfirmedLease} landed (on a thread whose flag is cleared), and takes its
     * token if it did; whether a lease of this attempt is held after that.
     */
    private boolean learnUnconfirmedLease() throws Exception {
        UnconfirmedLease u = unconfirmedLease;
        unconfirmedLease = null;
        ExecutorWrites.LeaseWrite landed = protocol.executor().recogniseLease(scopePath, u.expectedVersion(), u.written());
        if (landed.written()) {
            LOG.debug("the lease write whose landing was not learnt did land: token {}", landed.token());
            token = landed.token();
            leasedScope = u.written();
            leaseNode = u.electionNode();
        }
        return leasedScope != null;
    }

    /** A lease write not known to have landed: the version it expected, what it wrote, the election node it checked. */
    private record UnconfirmedLease(int expectedVersion, Records.Scope written, String electionNode) {
    }

    @Override
    public void close() {
        if (phase == Phase.CLOSED) {
            return;
        }
        try (LogContext ignored = logContext()) {
            transitionTo(Phase.CLOSED);
        }
    }

    /**
     * Removes this attempt's watches and no one else's ({@link ScopeReads#forgetWatches}): its
     * own watcher, and the session's watch at the server where no other attempt of the gate watches
     * the path. Each path leaves {@link #watched} before the others are asked, so of two attempts
     * closing at once the later one finds the path unwatched and removes the server's watch.
     */
    private void forgetWatches() {
        for (String path : List.copyOf(watched)) {
            watched.remove(path);
            try {
                protocol.reads().forgetWatches(path, watcher, gate.watchedByAnAttempt(path));
            } catch (Exception e) {
                LOG.debug("could not remove the watches on {} ({}); they go when it changes", path, e.toString());
            }
        }
    }

    /** Whether this attempt watches {@code path} and has not removed its watch yet. Any thread. */
    boolean watches(String path) {
        return watched.contains(path);
    }

    private void closeLatch() {
        closeLatch(false);
    }

    /**
     * Leaves the election ({@link ZooKeeperOps.ElectionMember#leave}); {@code withEveryone} when every contender of the
     * scope leaves at about the same moment (it was consumed), so a waiter leaves in its turn.
     */
    private void closeLatch(boolean withEveryone) {
        if (latch == null) {
            return;
        }
        ZooKeeperOps.ElectionMember closing = latch;
        latch = null;
        latchScope = -1;
        closing.leave(withEveryone);
    }

    // ---- events (Curator threads) --------------------------------------------------------------

    void onConnectionState(ConnectionState state) {
        synchronized (monitor) {
            if (state == ConnectionState.LOST) {
                sessionLost = true;
            }
            events++;
            monitor.notifyAll();
        }
    }

    void onBackgroundError(Throwable error) {
        synchronized (monitor) {
            backgroundError = error;
            events++;
            monitor.notifyAll();
        }
    }

    boolean concerns(String path) {
        return path.startsWith(keyPath);
    }

    private void signal() {
        synchronized (monitor) {
            events++;
            monitor.notifyAll();
        }
    }

    private void latchSignal() {
        synchronized (monitor) {
            latchEvents++;
            events++;
            monitor.notifyAll();
        }
    }

    private long eventCount() {
        synchronized (monitor) {
            return events;
        }
    }

    private long latchEventCount() {
        synchronized (monitor) {
            return latchEvents;
        }
    }

    private Throwable takeBackgroundError() {
        synchronized (monitor) {
            Throwable e = backgroundError;
            backgroundError = null;
            return e;
        }
    }

    /**
     * Waits for a change, but only once the scope is watched: the first time a contender must
     * wait, it re-reads at once with watches set instead (a watch is set before the read it
     * guards, so nothing is missed). A contender decided by its first read (a consumed key, an
     * immediate election) thus sets no watch and leaves none to remove.
     */
    private void waitFor(long seen, Instant until) throws InterruptedException {
        if (!watchesSet) {
            watchesSet = true;
            return;
        }
        awaitEvent(seen, until);
    }

    /**
     * Waits until an event arrives after {@code seen}, or {@code until} passes, or a safety
     * re-read is due (a quarter of the lease TTL, so a missed notification costs liveness
     * only briefly, never safety).
     */
    private void awaitEvent(long seen, Instant until) throws InterruptedException {
        long cap = Math.max(50, gate.leaseTtl.toMillis() / 4);
        synchronized (monitor) {
            long remaining = Math.min(cap, Duration.between(gate.clock.instant(), until).toMillis());
            if (events == seen && remaining > 0) {
                gate.zk.await(monitor, remaining);
            }
        }
    }

    /** This attempt's MDC entries (key, scope once known, task) for the duration of a public entry point. */
    private LogContext logContext() {
        return LogContext.of(key, view == null ? -1 : view.scope(), gate.taskId);
    }

    /** The work of an entry point that may be interrupted. */
    private interface Work<T> {
        T run() throws InterruptedException;
    }

    private <T> T inLogContext(Work<T> work) throws InterruptedException {
        try (LogContext ignored = logContext()) {
            return work.run();
        }
    }

    /** Who this attempt is, in the ZooKeeper session {@code session}: written into its records. */
    private Actor actor(long session) {
        return new Actor(gate.taskId, gate.host, gate.pid, Long.toHexString(session), attemptId);
    }

    private void requirePhase(Phase required, String operation) {
        if (phase != required) {
            throw new IllegalStateException(operation + ": this attempt is " + phase.name().toLowerCase()
                    + ", not " + required.name().toLowerCase() + " (decision: " + (decision == null ? "none" : decision.kind()) + ")");
        }
    }

    /**
     * The stop of a contender (and what {@code inspect} says one would get) on an authorization
     * under an {@code authorizations} znode where not only operators may create.
     */
    static Decision.StopUnavailable weakAuthorizations(String keyPath, int n, String authorizationPath, String weakness) {
        return new Decision.StopUnavailable(StopReason.UNREADABLE_RECORD, Evidence.of(Layout.authorizations(keyPath), n,
                "the redelivery authorization " + authorizationPath + " is under an authorizations znode where not only"
                        + " operators may create (" + weakness + "): it proves no operator's decision; an admin must delete"
                        + " the records there that no operator made (zkCli `delete`), then run `oncegate acl` (which gives"
                        + " the emptied znode its role ACL), and an operator authorize again"));
    }
}
