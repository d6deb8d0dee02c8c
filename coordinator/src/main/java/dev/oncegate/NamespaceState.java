package dev.oncegate;

import java.time.Clock;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;

import org.apache.curator.framework.CuratorFramework;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What a gate and an operator share about one namespace on one client: the protocol, the
 * genesis they first saw (its id is the namespace life they work in), the ACL of every record
 * they write, and the rollback witness that every zxid a read or write reveals goes to.
 *
 * <h2>The ACLs follow the genesis</h2>
 * The ACLs come from the roles the genesis names, and {@code oncegate acl} may rewrite them while
 * gates run (turning access control on, or rotating identities). Every rewrite moves the genesis
 * znode's version, the <em>roles epoch</em>. Every read of the genesis (each contender's first
 * read returns it with its version) is told to {@link #sawGenesis}: a newer version of the same
 * genesis id replaces the ACLs this process writes with, atomically with the epoch they belong to
 * ({@link Acls#epoch()}), which the key-creation multi checks. So a gate started before
 * {@code acl} writes its next key, and from then on every record, with the new roles' ACLs. Versions
 * of another genesis id are ignored: {@link #checkGenesis} stops those readers (namespace_replaced).
 *
 * <p>Thread-safe: the genesis and the current ACLs are atomic references (the ACLs only move to a
 * newer epoch), the genesis read before the first one was pinned a volatile, the marks thread-safe.
 */
final class NamespaceState {

    private static final Logger LOG = LoggerFactory.getLogger(NamespaceState.class);
    /** "ACLs are off" is said once per process, not once per gate. */
    private static final AtomicBoolean SAID_ACLS_OFF = new AtomicBoolean();

    final ZooKeeperOps zk;
    final String namespace;
    final Clock clock;
    final ScopeProtocol protocol;
    private final ZxidMarks marks;
    private final boolean initialize;
    private final AtomicReference<Genesis> genesis = new AtomicReference<>();
    /** The newest version of the first-seen genesis read so far, with its roles' ACLs; null before the first. */
    private final AtomicReference<Current> current = new AtomicReference<>();
    /** The genesis last read before one was pinned, so that pinning it knows its roles epoch without another read. */
    private volatile Current unpinned;
    /**
     * How many accepted restores of the pinned genesis this host's marks knew when it was pinned (see
     * {@link #acceptancesKnown}): while the newest genesis read counts fewer, the gate's attempts stop.
     */
    private final AtomicInteger acceptedKnown = new AtomicInteger();
    /**
     * The lives of other geneses of the namespace this host's marks knew when it pinned a genesis
     * written automatically and never accepted ({@link Genesis#automatic()}): while the newest genesis
     * read is still unaccepted, the gate's attempts stop (its data was lost, not a fresh start).
     */
    private final AtomicReference<List<String>> otherLives = new AtomicReference<>();

    /**
     * One read of the genesis: the record, and the ACLs of its roles bound to its version. The newer
     * of two is the one at the higher version (the roles epoch only moves on), or, whatever their
     * versions, the one just read when they count accepted restores differently: a genesis
     * version goes back with a restore, and the admin's acceptance after it may land at a version
     * already seen.
     */
    private record Current(Genesis genesis, Acls acls) {
        static Current newer(Current held, Current seen) {
            if (held == null || seen.acls().epoch() > held.acls().epoch()) {
                return seen;
            }
            Genesis h = held.genesis();
            Genesis s = seen.genesis();
            boolean otherAcceptance = h.id().equals(s.id()) && (h.restoresAccepted() != s.restoresAccepted()
                    || !Objects.equals(h.acceptance(), s.acceptance()));
            return otherAcceptance && seen.acls().epoch() != Acls.NO_EPOCH ? seen : held;
        }
    }

    NamespaceState(CuratorFramework client, String namespace, Clock clock, ZxidMarks marks, boolean initialize) {
        this(new CuratorOps(client, "operator"), namespace, clock, marks, initialize);
    }

    NamespaceState(ZooKeeperOps zk, String namespace, Clock clock, ZxidMarks marks, boolean initialize) {
        this.zk = zk;
        this.namespace = namespace;
        this.clock = clock;
        this.marks = marks;
        this.initialize = initialize;
        this.protocol = new ScopeProtocol(zk, namespace, clock, this::observed, this::acls, this::sawGenesis);
    }

    /**
     * The Curator client under {@link #zk}, for the ACL walk (its reads run in Curator's background
     * and are not part of the simulated protocol).
     *
     * @throws UnsupportedOperationException when the namespace is not on a Curator client (a simulation)
     */
    CuratorFramework curator() {
        if (zk instanceof CuratorOps curator) {
            return curator.client();
        }
        throw new UnsupportedOperationException("the ACL walk needs a Curator client; this namespace runs on " + zk);
    }

    /**
     * Checks the namespace's genesis: present (or created, when allowed), carrying its id marker,
     * and the same as the first one seen here. Returns null when fine, else the stop.
     */
    Decision.StopUnavailable checkGenesis() throws Exception {
        return checkGenesis(protocol.reads().readGenesis());
    }

    /** {@link #checkGenesis()} on a genesis the caller read already (in the same round trip as the key). */
    Decision.StopUnavailable checkGenesis(Optional<Genesis> read) throws Exception {
        String path = Layout.genesis(namespace);
        if (read.isEmpty() && initialize) {
            Set<String> lives = marks.lives(namespace);
            if (!lives.isEmpty()) {
                return new Decision.StopUnavailable(StopReason.NAMESPACE_NOT_INITIALISED, Evidence.of(path, -1,
                        "namespace " + namespace + " has no genesis record, but this host saw it before (genesis "
                                + String.join(", ", new TreeSet<>(lives)) + ", in its zxid marks): its data was lost or"
                                + " restored from an old snapshot, and even a gate allowed to initialise namespaces must"
                                + " not take that for a fresh start; establish what happened, then run `oncegate init"
                                + " --namespace " + namespace + "` deliberately"));
            }
            read = Optional.of(protocol.operator().createGenesis(null, true).genesis());
        }
        if (read.isEmpty()) {
            return new Decision.StopUnavailable(StopReason.NAMESPACE_NOT_INITIALISED, Evidence.of(path, -1,
                    "namespace " + namespace + " has no genesis record: if this is a new namespace run `oncegate init"
                            + " --namespace " + namespace + "`; if it held keys before, its data was lost or restored"
                            + " from an old snapshot and must not be taken for a fresh start"));
        }
        Genesis seen = read.get();
        Genesis first = genesis.get();
        if (first == null) {
            if (!protocol.reads().genesisMarkerExists(seen.id())) {
                return new Decision.StopUnavailable(StopReason.NAMESPACE_NOT_INITIALISED, Evidence.of(
                        Layout.genesisMarker(namespace, seen.id()), -1, "namespace " + namespace + "'s genesis " + seen.id()
                                + " has no id marker (it was written by an older oncegate): run `oncegate init --namespace "
                                + namespace + "` once, which adds it and changes nothing else"));
            }
            // What the gate's attempts stop on (an operator's reads do not), known before the genesis is pinned:
            // another thread of a shared gate that finds it pinned must find these too.
            Set<String> lives = marks.lives(namespace); // the file read once
            acceptedKnown.accumulateAndGet(acceptancesKnown(lives, seen.id()), Math::max);
            otherLives.compareAndSet(null, seen.automatic() && seen.restoresAccepted() == 0 ? otherLives(lives, seen.id())
                    : List.of());
            if (genesis.compareAndSet(null, seen)) {
                Current before = unpinned;
                current.accumulateAndGet(before != null && before.genesis().id().equals(seen.id()) ? before
                        : new Current(seen, Acls.of(seen.roles())), Current::newer); // no epoch: a key creation reads it
                if (seen.roles() == null && SAID_ACLS_OFF.compareAndSet(false, true)) {
                    LOG.warn("oncegate namespace {}: no ACLs (its genesis names no worker, operator and admin identities):"
                            + " any client that reaches the ensemble may rewrite or delete the records; fine for"
                            + " single-team development only (`oncegate init --worker … --operator … --admin …`)", namespace);
                }
            }
            first = genesis.get();
        }
        if (!first.id().equals(seen.id())) {
            return new Decision.StopUnavailable(StopReason.NAMESPACE_REPLACED, Evidence.of(path, -1,
                    "namespace " + namespace + " now has genesis " + seen.id() + " but this process started with "
                            + first.id() + ": its data was replaced; restart the worker after an operator checked it"));
        }
        return null;
    }

    /** The lives among {@code lives} (this host's marks') of geneses other than {@code id}, in order. */
    private static List<String> otherLives(Set<String> lives, String id) {
        List<String> out = new ArrayList<>();
        for (String life : new TreeSet<>(lives)) {
            if (Genesis.restoresAcceptedIn(life, id) < 0) {
                out.add(life);
            }
        }
        return List.copyOf(out);
    }

    /**
     * The highest count of accepted restores of genesis {@code id} among {@code lives} (this host's
     * marks', {@link Genesis#witnessLife()}: {@code ID#N-ACCEPTANCE}), or 0.
     */
    private static int acceptancesKnown(Set<String> lives, String id) {
        int known = 0;
        for (String life : lives) {
            known = Math.max(known, Genesis.restoresAcceptedIn(life, id));
        }
        return known;
    }

    /**
     * The stop of every attempt at {@code path} once this host caught the ensemble rolled back in
     * the namespace life it works in (kept by the witness until the admin accepts the restore), or
     * null: nothing is written first, so however far the restored ensemble's own writes move its
     * zxids on, this host's workers do not deliver what it may have forgotten.
     */
    Decision.StopUnavailable rollbackKept(String path, int scope) {
        Genesis g = currentGenesis();
        if (g == null) {
            return null;
        }
        List<String> before = otherLives.get();
        if (before != null && !before.isEmpty() && g.restoresAccepted() == 0) {
            return new Decision.StopUnavailable(StopReason.NAMESPACE_REPLACED, Evidence.of(path, scope, "namespace "
                    + namespace + " has genesis " + g.id() + ", written automatically (by `oncegate server` on an empty"
                    + " data directory, or a gate allowed to initialise), but this host worked in another life of it ("
                    + String.join(", ", before) + ", in its zxid marks): its data was lost, and a new genesis is not a"
                    + " fresh start; every worker of this host stops before writing. Restore the data if you can; else"
                    + " reconcile with the destinations' owners, then run `oncegate init --namespace " + namespace
                    + " --accept-restore` (deploy/RUNBOOK.md, 'ZooKeeper data lost, or restored from a backup')"));
        }
        int known = acceptedKnown.get();
        if (g.restoresAccepted() < known) {
            return new Decision.StopUnavailable(StopReason.ZOOKEEPER_ROLLED_BACK, Evidence.of(path, scope, "the genesis"
                    + " of namespace " + namespace + " counts " + g.restoresAccepted() + " accepted restores, but this host"
                    + " worked after the admin had accepted " + known + " (its zxid marks): the ensemble was restored from a"
                    + " snapshot older than that and may have forgotten outcomes; every worker of this host stops before"
                    + " writing. Restore the latest data if you can; else reconcile, then run `oncegate init --namespace "
                    + namespace + " --accept-restore` (deploy/RUNBOOK.md, 'ZooKeeper data lost, or restored from a"
                    + " backup')"));
        }
        return marks.rolledBack(namespace, g.witnessLife()).map(r -> new Decision.StopUnavailable(
                StopReason.ZOOKEEPER_ROLLED_BACK, Evidence.of(path, scope, "this host found namespace " + namespace
                        + "'s ensemble restored from an older snapshot (at " + r.at() + ": a write landed at zxid " + r.zxid()
                        + " after zxid " + r.mark() + " had been seen) and may have forgotten outcomes; every worker of"
                        + " this host stops before writing until the admin, having reconciled, runs `oncegate init"
                        + " --namespace " + namespace + " --accept-restore` (deploy/RUNBOOK.md, 'ZooKeeper data lost, or"
                        + " restored from a backup')"))).orElse(null);
    }

    /**
     * Keeps, in the witness (flushed now), that a write landed at {@code zxid} below {@code mark}, the
     * highest zxid seen for the namespace life: from now on {@link #rollbackKept} stops every attempt.
     */
    void rolledBack(long mark, long zxid) {
        Genesis g = currentGenesis();
        if (g != null) {
            marks.rolledBack(namespace, g.witnessLife(), new ZxidMarks.Rollback(mark, zxid, clock.instant()));
            marks.flush();
        }
    }

    /** {@link #checkGenesis()} for operator commands: an unknown namespace is an error, not an empty answer. */
    void requireGenesis() throws Exception {
        Decision.StopUnavailable stop = checkGenesis();
        if (stop != null) {
            throw new StopException(stop);
        }
    }

    /** The genesis first seen (null before the first {@link #checkGenesis}). */
    Genesis genesis() {
        return genesis.get();
    }

    /**
     * The newest version of the first-seen genesis read so far: the roles it names now (null
     * before the first {@link #checkGenesis}).
     */
    Genesis currentGenesis() {
        Current c = current.get();
        return c == null ? genesis.get() : c.genesis();
    }

    /** The ACLs every record is written with: of the roles the newest genesis read names, with its epoch. */
    Acls acls() {
        Current c = current.get();
        return c == null ? Acls.OPEN : c.acls();
    }

    /**
     * A read returned {@code seen} at data version {@code version}: when it is the genesis this
     * process works in, at a newer version than the ACLs it writes with, its roles' ACLs replace them.
     */
    void sawGenesis(Genesis seen, int version) {
        Current read = new Current(seen, Acls.of(seen.roles(), version));
        Genesis first = genesis.get();
        if (first == null) {
            unpinned = read;
            return;
        }
        if (!first.id().equals(seen.id())) {
            return; // another namespace life: checkGenesis stops whoever read it
        }
        Current before = current.getAndAccumulate(read, Current::newer);
        // A process that saw an acceptance stops when a later read counts fewer (a restore to before it); raised
        // after the genesis it counts is current, so that no attempt meanwhile finds itself behind for nothing.
        acceptedKnown.accumulateAndGet(seen.restoresAccepted(), Math::max);
        if (before != null && before.acls().epoch() != Acls.NO_EPOCH && version > before.acls().epoch()
                && !Objects.equals(before.genesis().roles(), seen.roles())) {
            Genesis.Roles r = seen.roles();
            LOG.info("oncegate namespace {}: its genesis names other roles now (roles epoch {}: {}); records are written"
                    + " with their ACLs from now on", namespace, version, r == null ? "none"
                    : "worker " + user(r.worker()) + ", operator " + user(r.operator()) + ", admin " + user(r.admin()));
        }
    }

    private static String user(String digestId) {
        int colon = digestId.indexOf(':');
        return colon < 0 ? digestId : digestId.substring(0, colon);
    }

    /** The genesis id first seen (null before the first {@link #checkGenesis}). */
    String genesisId() {
        Genesis g = genesis.get();
        return g == null ? null : g.id();
    }

    /**
     * The namespace life the witness keeps this process's marks under: the newest genesis read's
     * {@link Genesis#witnessLife()} (null before the first {@link #checkGenesis}).
     */
    private String witnessLife() {
        Genesis g = currentGenesis();
        return g == null ? null : g.witnessLife();
    }

    /** A zxid a read or write revealed: the ensemble has reached at least this far. */
    void observed(long zxid) {
        String life = witnessLife();
        if (life != null && zxid > 0) {
            marks.observe(namespace, life, zxid);
        }
    }

    /** The highest zxid the witness has seen for this namespace life. */
    long highestZxid() {
        String life = witnessLife();
        return life == null ? 0 : marks.highest(namespace, life);
    }

    /**
     * The stop of an attempt at {@code path} while the witness cannot be read ({@link ZxidMarks#unreadable()}),
     * or null when it can: a rollback would go unseen.
     */
    Decision.StopUnavailable witnessStop(String path, int scope) {
        return marks.unreadable().map(why -> new Decision.StopUnavailable(StopReason.MARKS_UNREADABLE,
                Evidence.of(path, scope, why))).orElse(null);
    }

    /** Persists the witness (after each lease write and crossing, so that a killed process leaves it behind). */
    void flushMarks() {
        marks.flush();
    }
}
