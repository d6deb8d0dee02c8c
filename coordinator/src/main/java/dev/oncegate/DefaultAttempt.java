package dev.oncegate;

import java.io.IOException;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.UUID;

import org.apache.curator.CuratorConnectionLossException;
import org.apache.curator.framework.WatcherRemoveCuratorFramework;
import org.apache.curator.framework.recipes.leader.LeaderLatch;
import org.apache.curator.framework.recipes.leader.LeaderLatchListener;
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
 *
 * <h2>Invariants (SPEC §4)</h2>
 * <ul>
 *   <li>Decisions come from reads of ZooKeeper; authority comes only from conditional writes.
 *       {@code LeaderLatch.hasLeadership()} is a hint that this contender may try the lease CAS,
 *       never a permission to cross.</li>
 *   <li>Every write of the executor is conditional on its token (the scope znode's version):
 *       the lease CAS, each checkpoint's renewal, the arming multi and the outcome multi.</li>
 *   <li>The action runs only after the arming multi returned success on the raw handle, in the
 *       same session the lease was taken in, while connected. A connection loss during arming
 *       counts as armed and the action is never invoked.</li>
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
    /** How long a started latch may lack its node while connected before this contender fails closed. */
    private static final Duration ELECTION_NODE_GRACE = Duration.ofSeconds(2);

    private enum Phase { CONTENDING, PROCEEDING, ARMED, DONE, STOPPED, CLOSED }

    private final DefaultGate gate;
    private final EffectKey key;
    private final String keyPath;
    private final Records.Actor actor;
    private final WatcherRemoveCuratorFramework watching;
    private final Watcher watcher = event -> signal();
    private final LeaderLatchListener latchListener = new LeaderLatchListener() {
        @Override
        public void isLeader() {
            signal();
        }

        @Override
        public void notLeader() {
            signal();
        }
    };

    // Event state, written by Curator threads, read by the owner under the monitor.
    private final Object monitor = new Object();
    private long events;
    private Throwable backgroundError;
    private boolean sessionLost;

    // Owner-thread state.
    private Phase phase = Phase.CONTENDING;
    private Decision decision;
    private LeaderLatch latch;
    private int latchScope = -1;
    private Instant electionNodeMissingSince;
    private boolean watchesSet;
    private volatile String scopePath;
    private ScopeView view;
    private FencingToken token;
    private Records.Scope leasedScope;
    private long leaseSession;
    private final List<String> checkpoints = new ArrayList<>();

    DefaultAttempt(DefaultGate gate, EffectKey key) {
        this.gate = gate;
        this.key = key;
        this.keyPath = Layout.keyPath(gate.protocol.namespace(), key.key());
        this.actor = new Records.Actor(gate.taskId, gate.host, gate.pid, UUID.randomUUID().toString());
        this.watching = gate.client.newWatcherRemoveCuratorFramework();
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
            d = contend(started.plus(wait.compareTo(MAX_WAIT) > 0 ? MAX_WAIT : wait), !wait.isZero());
        } catch (InterruptedException e) {
            throw e;
        } catch (Exception e) {
            d = failClosed(e, scopePath != null ? scopePath : keyPath);
        }
        decide(d, Duration.between(started, gate.clock.instant()));
    }

    /** The contention loop: read, decide, and either act (a CAS) or wait for an event. */
    private Decision contend(Instant deadline, boolean waited) throws Exception {
        if (!gate.client.blockUntilConnected((int) Math.min(Integer.MAX_VALUE, gate.connectTimeout.toMillis()),
                java.util.concurrent.TimeUnit.MILLISECONDS)) {
            return new Decision.StopUnavailable(StopReason.ZOOKEEPER_UNREACHABLE, Evidence.of(gate.protocol.namespace(), -1,
                    "no ZooKeeper connection within " + gate.connectTimeout.toMillis() + " ms (" + gate.client.getZookeeperClient().getCurrentConnectionString()
                            + "): check that the ensemble is up and reachable"));
        }
        Decision.Stop namespaceStop = gate.checkGenesis();
        if (namespaceStop != null) {
            return namespaceStop;
        }
        gate.protocol.ensureKey(key);
        int n = gate.protocol.latestScope(keyPath);
        int openScope = -1;
        int openVersion = -1;
        Instant openSince = null;
        while (true) {
            long seen = eventCount();
            Throwable error = takeBackgroundError();
            if (error != null) {
                return failClosed(error, scopePath);
            }
            view = gate.protocol.readScope(keyPath, n, watchesSet ? watcher : null);
            scopePath = view.path();
            Instant now = gate.clock.instant();
            switch (view.state()) {
                case NOT_SENT -> {
                    n++; // the outcome multi created scope n+1 with it
                    continue;
                }
                case SENT_VERIFIED, SEND_STATUS_UNKNOWN -> {
                    if (openAuthorizedScope(n)) {
                        n++;
                        continue;
                    }
                    return view.state() == ScopeView.State.SENT_VERIFIED
                            ? new Decision.StopSent(StopReason.SENT_VERIFIED, view.evidence("key consumed"))
                            : new Decision.StopUnknown(StopReason.SEND_STATUS_UNKNOWN, view.evidence("key consumed"));
                }
                case ARMED -> {
                    // Armed without outcome is consumed (it reads as send_status_unknown), so an
                    // operator's authorization opens the next scope here too.
                    if (openAuthorizedScope(n)) {
                        n++;
                        continue;
                    }
                    if (now.isBefore(deadline)) {
                        waitFor(seen, deadline);
                        continue;
                    }
                    return new Decision.StopUnknown(StopReason.ARMED_WITHOUT_OUTCOME,
                            view.evidence("another executor crossed the boundary"));
                }
                case OPEN, LEASED -> {
                    Records.Lease lease = view.data().lease();
                    if (lease != null && !now.isBefore(deadline) && now.toEpochMilli() < lease.expires() && latch == null) {
                        // Busy and not waiting: no need to join the election just to leave it.
                        return new Decision.StopBusy(waited ? StopReason.WAIT_EXPIRED : StopReason.EXECUTOR_ACTIVE,
                                view.evidence("another executor is active"));
                    }
                    joinElection(n);
                    Decision.Stop noElectionNode = electionNodeStop(now);
                    if (noElectionNode != null) {
                        return noElectionNode;
                    }
                    if (lease == null && (openScope != n || openVersion != view.version())) {
                        openScope = n; // when this contender first saw the scope open at this version
                        openVersion = view.version();
                        openSince = now;
                    }
                    // An open scope belongs to the latch leader; but if it stays open a whole TTL (the
                    // leader hangs), any contender may try the CAS: the CAS, not the latch, is what is safe.
                    boolean stalled = lease == null && !now.isBefore(openSince.plus(gate.leaseTtl));
                    String takeover = lease != null ? takeoverCause(lease, now)
                            : stalled && !latch.hasLeadership() ? "stalled_election" : null;
                    if ((lease == null && latch.hasLeadership()) || takeover != null) {
                        if (latch.getOurPath() == null) {
                            waitFor(seen, now.plusMillis(100)); // our election node is still being created
                            continue;
                        }
                        Decision proceed = takeLease(takeover);
                        if (proceed != null) {
                            return proceed;
                        }
                        continue; // someone else wrote the scope first: re-read
                    }
                    if (lease != null) {
                        if (!now.isBefore(deadline)) {
                            return new Decision.StopBusy(waited ? StopReason.WAIT_EXPIRED : StopReason.EXECUTOR_ACTIVE,
                                    view.evidence("another executor is active"));
                        }
                        waitFor(seen, pollWhileNoElectionNode(now, min(deadline, Instant.ofEpochMilli(lease.expires()))));
                        continue;
                    }
                    Instant electionDeadline = max(deadline, openSince.plus(gate.leaseTtl.multipliedBy(2)));
                    if (!now.isBefore(electionDeadline)) {
                        return new Decision.StopBusy(StopReason.WAIT_EXPIRED, view.evidence("no executor took the open"
                                + " scope in the " + Duration.between(openSince, now).toMillis() + " ms this contender watched it"));
                    }
                    Instant stallAt = openSince.plus(gate.leaseTtl);
                    waitFor(seen, pollWhileNoElectionNode(now,
                            now.isBefore(stallAt) ? min(stallAt, electionDeadline) : electionDeadline));
                }
            }
        }
    }

    /** Opens scope {@code n + 1} from the oldest unused authorization of a consumed scope {@code n}, if any. */
    private boolean openAuthorizedScope(int n) throws Exception {
        Optional<String> auth = gate.protocol.unusedAuthorization(keyPath, n);
        if (auth.isEmpty()) {
            return false;
        }
        LOG.info("oncegate [key={} scope={} task={}] redelivery authorized by {}: opening scope {}",
                key.key(), n, gate.taskId, auth.get(), n + 1);
        gate.protocol.openAuthorizedScope(keyPath, n + 1, auth.get());
        return true;
    }

    /**
     * Why the current lease may be taken over, or null when its holder must be left alone:
     * {@code lapsed} when its TTL passed (any contender may fence a hung holder), or
     * {@code abandoned} when this contender leads the election and the holder's latch node is
     * gone (its session ended, or it left without releasing).
     */
    private String takeoverCause(Records.Lease lease, Instant now) throws Exception {
        if (now.toEpochMilli() >= lease.expires()) {
            return "lapsed";
        }
        if (latch.hasLeadership() && !gate.protocol.latchNodeExists(lease.latchNode())) {
            return "abandoned";
        }
        return null;
    }

    /**
     * Curator's LeaderLatch only logs when it cannot create its node (NoAuth, say): if ours has
     * been missing for {@link #ELECTION_NODE_GRACE} while connected, fail closed instead of
     * waiting for an election this contender can never join. The clock restarts whenever the node
     * exists again (a latch reset after a reconnect recreates it).
     */
    private Decision.Stop electionNodeStop(Instant now) {
        if (latch.getOurPath() != null || !gate.client.getZookeeperClient().isConnected()) {
            electionNodeMissingSince = null;
            return null;
        }
        if (electionNodeMissingSince == null) {
            electionNodeMissingSince = now;
            return null;
        }
        if (now.isBefore(electionNodeMissingSince.plus(ELECTION_NODE_GRACE))) {
            return null;
        }
        return new Decision.StopUnavailable(StopReason.PERMISSION_DENIED, Evidence.of(Layout.latch(scopePath), view.scope(),
                "this contender's election node was not created within " + ELECTION_NODE_GRACE.toMillis()
                        + " ms while connected (missing CREATE permission on the latch znode?)"));
    }

    /** While our election node is missing, re-check often so {@link #electionNodeStop} is prompt. */
    private Instant pollWhileNoElectionNode(Instant now, Instant until) {
        return electionNodeMissingSince == null ? until : min(until, now.plusMillis(100));
    }

    /** Transition CONTENDING → PROCEEDING: {@code setData(scope, our lease, version)}. */
    private Decision takeLease(String takeoverCause) throws Exception {
        String latchNode = latch.getOurPath();
        long session = gate.client.getZookeeperClient().getZooKeeper().getSessionId();
        Records.Scope leased = new Records.Scope(view.data().opened(), view.data().at(),
                new Records.Lease(actor, Long.toHexString(session), latchNode,
                        gate.clock.millis() + gate.leaseTtl.toMillis()), false);
        try {
            token = gate.protocol.writeLease(scopePath, view.version(), leased);
        } catch (KeeperException.BadVersionException | KeeperException.NoNodeException raced) {
            return null;
        }
        leasedScope = leased;
        leaseSession = session;
        synchronized (monitor) {
            sessionLost = false; // only a loss after the lease was taken concerns the executor
        }
        if (takeoverCause != null) {
            gate.metrics.takeover(takeoverCause);
            Records.Lease previous = view.data().lease();
            LOG.info("oncegate [key={} scope={} task={}] took over the lease ({}) from {}", key.key(), view.scope(),
                    gate.taskId, takeoverCause, previous == null ? "an election whose leader did not act"
                            : "task " + previous.holder().task() + " attempt " + previous.holder().attempt());
        }
        return new Decision.Proceed(view.scope(), token);
    }

    private void joinElection(int n) throws Exception {
        if (latch != null && latchScope == n) {
            return;
        }
        closeLatch();
        String latchPath = Layout.latch(Layout.scope(keyPath, n));
        // Created here, synchronously, because a LeaderLatch that cannot create it only logs:
        // a missing permission must stop this contender, not leave it waiting.
        gate.client.createContainers(latchPath);
        latch = new LeaderLatch(gate.client, latchPath, actor.attempt(), LeaderLatch.CloseMode.SILENT);
        latch.addListener(latchListener);
        latchScope = n;
        electionNodeMissingSince = null;
        latch.start();
    }

    // ---- checkpoints: PROCEEDING → PROCEEDING | STOPPED ---------------------------------------

    @Override
    public Decision checkpoint(String name) throws InterruptedException {
        if (name == null) {
            throw new NullPointerException("name");
        }
        if (name.isEmpty() || name.length() > MAX_CHECKPOINT_NAME) {
            throw new IllegalArgumentException("name: a checkpoint name has 1 to " + MAX_CHECKPOINT_NAME + " characters");
        }
        if (phase == Phase.STOPPED) {
            return decision;
        }
        requirePhase(Phase.PROCEEDING, "checkpoint");
        Decision.Stop stop = connectionStop();
        if (stop == null) {
            Records.Scope renewed = new Records.Scope(leasedScope.opened(), leasedScope.at(),
                    new Records.Lease(actor, leasedScope.lease().session(), leasedScope.lease().latchNode(),
                            gate.clock.millis() + gate.leaseTtl.toMillis()), false);
            try {
                token = gate.protocol.writeLease(scopePath, token.version(), renewed);
                leasedScope = renewed;
                checkpoints.add(name);
                decision = new Decision.Proceed(view.scope(), token);
                LOG.debug("oncegate [key={} scope={} task={}] checkpoint {} passed, token {}",
                        key.key(), view.scope(), gate.taskId, name, token);
                return decision;
            } catch (KeeperException.BadVersionException e) {
                gate.metrics.fenced("checkpoint");
                stop = fencedStop("checkpoint " + name);
            } catch (InterruptedException e) {
                throw e;
            } catch (Exception e) {
                stop = failClosed(e, scopePath);
            }
        }
        stopExecutor(stop);
        return stop;
    }

    // ---- crossing: PROCEEDING → ARMED → DONE, or STOPPED -------------------------------------

    @Override
    public Crossing cross(BoundaryAction action) throws InterruptedException {
        if (action == null) {
            throw new NullPointerException("action");
        }
        requirePhase(Phase.PROCEEDING, "cross");
        Decision.Stop stop = connectionStop();
        int armedVersion = -1;
        if (stop == null) {
            Records.Scope armedScope = new Records.Scope(leasedScope.opened(), leasedScope.at(), leasedScope.lease(), true);
            Records.Armed armed = new Records.Armed(actor, leasedScope.lease().session(), token,
                    List.copyOf(checkpoints), gate.clock.instant());
            try {
                armedVersion = gate.protocol.arm(scopePath, token, armedScope, armed);
            } catch (KeeperException.BadVersionException e) {
                gate.metrics.fenced("arm");
                stop = fencedStop("arming");
            } catch (KeeperException.ConnectionLossException | KeeperException.SessionExpiredException
                     | KeeperException.OperationTimeoutException | KeeperException.SessionMovedException e) {
                stop = new Decision.StopUnavailable(StopReason.WRITE_RESULT_UNKNOWN, Evidence.of(scopePath, view.scope(),
                        "the arming write's result is unknown (" + e.code() + "); it counts as armed and the action"
                                + " was not invoked; `oncegate inspect` shows whether the scope was armed"));
            } catch (KeeperException.NoNodeException e) {
                stop = new Decision.StopUnavailable(StopReason.NAMESPACE_NOT_INITIALISED, Evidence.of(e.getPath() != null
                        ? e.getPath() : scopePath, view.scope(), "the namespace's genesis or the scope vanished before"
                        + " arming: the ZooKeeper data was lost or replaced; nothing was armed"));
            } catch (InterruptedException e) {
                stop = new Decision.StopUnavailable(StopReason.WRITE_RESULT_UNKNOWN, Evidence.of(scopePath, view.scope(),
                        "interrupted during the arming write; it counts as armed and the action was not invoked"));
                stopExecutor(stop);
                throw e;
            } catch (Exception e) {
                stop = failClosed(e, scopePath);
            }
        }
        if (stop != null) {
            stopExecutor(stop);
            return new Crossing.Refused(stop);
        }
        phase = Phase.ARMED;
        LOG.info("oncegate [key={} scope={} task={}] armed with token {}; invoking the action",
                key.key(), view.scope(), gate.taskId, token);
        return invokeAndRecord(action, armedVersion);
    }

    /** The action, exactly once, then the outcome multi. */
    private Crossing invokeAndRecord(BoundaryAction action, int armedVersion) {
        Instant started = gate.clock.instant();
        Outcome outcome;
        String detail;
        boolean interrupted = false;
        try {
            ActionResult result = action.deliver(new BoundaryAction.Context(key, view.scope(), token, gate.taskId));
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
        Duration boundary = Duration.between(started, gate.clock.instant());
        // Record even when interrupted: the outcome matters more than a prompt return.
        interrupted |= Thread.interrupted();
        boolean recorded = false;
        Records.OutcomeRecord record = new Records.OutcomeRecord(outcome, detail, actor, token, gate.clock.instant());
        try {
            recorded = gate.protocol.recordOutcome(keyPath, view.scope(), armedVersion, record);
            if (!recorded) {
                LOG.error("oncegate [key={} scope={} task={}] another outcome is already recorded for this scope;"
                        + " ours ({}) was not written", key.key(), view.scope(), gate.taskId, outcome.wireName());
            }
        } catch (Exception e) {
            if (e instanceof InterruptedException) {
                interrupted = true;
            }
            LOG.error("oncegate [key={} scope={} task={}] gave up recording outcome {} ({}); the scope stays armed and"
                            + " reads as send_status_unknown to everyone", key.key(), view.scope(), gate.taskId,
                    outcome.wireName(), e.toString());
        }
        if (interrupted) {
            Thread.currentThread().interrupt();
        }
        gate.metrics.outcome(outcome, recorded, boundary);
        LOG.info("oncegate [key={} scope={} task={}] outcome {} (recorded={}): {}", key.key(), view.scope(),
                gate.taskId, outcome.wireName(), recorded, detail);
        phase = Phase.DONE;
        gate.metrics.executorEnded();
        closeLatch();
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
            session = gate.client.getZookeeperClient().getZooKeeper().getSessionId();
        } catch (Exception e) {
            session = 0;
        }
        if (lost || session != leaseSession) {
            return new Decision.StopUnavailable(StopReason.CONNECTION_LOST, Evidence.of(scopePath, view.scope(),
                    "the ZooKeeper session this executor leased in (0x" + Long.toHexString(leaseSession)
                            + ") was lost; its lease may be taken over; enter again"));
        }
        if (!gate.client.getZookeeperClient().isConnected()) {
            return new Decision.StopUnavailable(StopReason.CONNECTION_LOST, Evidence.of(scopePath, view.scope(),
                    "not connected to ZooKeeper: the lease cannot be revalidated"));
        }
        return null;
    }

    /** The token no longer matches: say who holds the scope now. */
    private Decision.Stop fencedStop(String during) {
        try {
            ScopeView now = gate.protocol.readScope(keyPath, view.scope(), null);
            return switch (now.state()) {
                case SENT_VERIFIED -> new Decision.StopSent(StopReason.SENT_VERIFIED, now.evidence("fenced during " + during));
                case SEND_STATUS_UNKNOWN, ARMED -> new Decision.StopUnknown(
                        now.state() == ScopeView.State.ARMED ? StopReason.ARMED_WITHOUT_OUTCOME : StopReason.SEND_STATUS_UNKNOWN,
                        now.evidence("fenced during " + during));
                // not_sent: the key is free again in the next scope; this executor just lost its turn.
                case OPEN, LEASED, NOT_SENT -> new Decision.StopBusy(StopReason.FENCED, now.evidence(
                        "fenced during " + during + ": token " + token + " was superseded"));
            };
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (Exception e) {
            LOG.warn("oncegate [key={} scope={} task={}] could not read the scope after being fenced: {}",
                    key.key(), view.scope(), gate.taskId, e.toString());
        }
        return new Decision.StopBusy(StopReason.FENCED, Evidence.of(scopePath, view.scope(),
                "fenced during " + during + ": token " + token + " was superseded"));
    }

    /** Maps any failure to reach or understand ZooKeeper to {@code stop_unavailable}. */
    private Decision.StopUnavailable failClosed(Throwable e, String path) {
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
            LOG.error("oncegate [key={} task={}] unexpected failure, failing closed", key.key(), gate.taskId, e);
        }
        if (e instanceof KeeperException ke && ke.getPath() != null) {
            where = ke.getPath();
        }
        return new Decision.StopUnavailable(reason, Evidence.of(where, scope, e.getMessage() != null ? e.getMessage() : e.toString()));
    }

    /** Records a decision; {@code waited} is the election wait on entry, null for a later stop. */
    private void decide(Decision d, Duration waited) {
        decision = d;
        gate.metrics.decision(d, waited);
        if (d instanceof Decision.Proceed p) {
            phase = Phase.PROCEEDING;
            gate.metrics.executorStarted();
            LOG.info("oncegate [key={} scope={} task={}] proceed with token {}", key.key(), p.scope(), gate.taskId, p.token());
            return;
        }
        Decision.Stop stop = (Decision.Stop) d;
        phase = Phase.STOPPED;
        if (stop instanceof Decision.StopUnavailable) {
            gate.metrics.failClosed(stop.reason());
            LOG.warn("oncegate [key={} task={}] {} ({}): {} at {}", key.key(), gate.taskId, stop.kind(),
                    stop.reason().wireName(), stop.evidence().detail(), stop.evidence().path());
        } else {
            LOG.info("oncegate [key={} scope={} task={}] {} ({}): {}", key.key(), stop.evidence().scope(), gate.taskId,
                    stop.kind(), stop.reason().wireName(), stop.evidence().detail());
        }
        closeLatch();
    }

    /** An executor stopped before crossing: leave the election; its lease lapses or is released. */
    private void stopExecutor(Decision.Stop stop) {
        boolean wasExecutor = phase == Phase.PROCEEDING;
        if (wasExecutor) {
            // The release is a CAS on our token: it fails harmlessly when someone took the lease
            // over, or when an ambiguous arming write was in fact applied (arming bumps the version).
            if (stop.reason() != StopReason.FENCED) {
                releaseLease(stop.reason() != StopReason.WRITE_RESULT_UNKNOWN);
            }
            leasedScope = null;
            gate.metrics.executorEnded();
        }
        decide(stop, null);
    }

    /** {@code setData(scope, no lease, token)}: lets the next contender proceed at once. */
    private void releaseLease(boolean countFenced) {
        if (leasedScope == null) {
            return;
        }
        Records.Scope released = new Records.Scope(leasedScope.opened(), leasedScope.at(), null, false);
        try {
            gate.protocol.writeLease(scopePath, token.version(), released);
            LOG.info("oncegate [key={} scope={} task={}] released the lease without arming", key.key(), view.scope(), gate.taskId);
        } catch (KeeperException.BadVersionException e) {
            if (countFenced) {
                gate.metrics.fenced("release");
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (Exception e) {
            LOG.warn("oncegate [key={} scope={} task={}] could not release the lease ({}); it lapses after its TTL",
                    key.key(), view.scope(), gate.taskId, e.toString());
        }
        leasedScope = null;
    }

    @Override
    public void close() {
        if (phase == Phase.CLOSED) {
            return;
        }
        if (phase == Phase.PROCEEDING) {
            releaseLease(true);
            gate.metrics.executorEnded();
        } else if (phase == Phase.ARMED) {
            gate.metrics.executorEnded();
        }
        phase = Phase.CLOSED;
        closeLatch();
        watching.removeWatchers();
        gate.forget(this);
    }

    private void closeLatch() {
        if (latch == null) {
            return;
        }
        LeaderLatch closing = latch;
        latch = null;
        latchScope = -1;
        closing.removeListener(latchListener);
        try {
            closing.close();
        } catch (IOException | IllegalStateException e) {
            LOG.warn("oncegate [key={} task={}] could not close the election latch cleanly ({}); its ephemeral node"
                    + " goes with the session", key.key(), gate.taskId, e.toString());
        }
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

    private long eventCount() {
        synchronized (monitor) {
            return events;
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
                monitor.wait(remaining);
            }
        }
    }

    private void requirePhase(Phase required, String operation) {
        if (phase != required) {
            throw new IllegalStateException(operation + ": this attempt is " + phase.name().toLowerCase()
                    + ", not " + required.name().toLowerCase() + " (decision: " + (decision == null ? "none" : decision.kind()) + ")");
        }
    }

    private static Instant max(Instant a, Instant b) {
        return a.isAfter(b) ? a : b;
    }

    private static Instant min(Instant a, Instant b) {
        return a.isBefore(b) ? a : b;
    }
}
