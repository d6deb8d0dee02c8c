package dev.oncegate;

import java.time.Clock;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;

import org.apache.curator.framework.CuratorFramework;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What a gate and an operator share about one namespace on one client: the protocol, the
 * genesis they first saw (and, from its roles, the ACL of every record they write), and the
 * rollback witness that every zxid a read or write reveals goes to.
 *
 * <p>Thread-safe: the genesis is an atomic reference, the ACLs a volatile, the marks thread-safe.
 */
final class NamespaceState {

    private static final Logger LOG = LoggerFactory.getLogger(NamespaceState.class);
    /** "ACLs are off" is said once per process, not once per gate. */
    private static final AtomicBoolean SAID_ACLS_OFF = new AtomicBoolean();

    final CuratorFramework client;
    final String namespace;
    final Clock clock;
    final ScopeProtocol protocol;
    private final ZxidMarks marks;
    private final boolean initialize;
    private final AtomicReference<Genesis> genesis = new AtomicReference<>();
    private volatile Acls acls = Acls.OPEN;

    NamespaceState(CuratorFramework client, String namespace, Clock clock, ZxidMarks marks, boolean initialize) {
        this.client = client;
        this.namespace = namespace;
        this.clock = clock;
        this.marks = marks;
        this.initialize = initialize;
        this.protocol = new ScopeProtocol(client, namespace, clock, this::observed, () -> acls);
    }

    /**
     * Checks the namespace's genesis: present (or created, when allowed), carrying its id marker,
     * and the same as the first one seen here. Returns null when fine, else the stop.
     */
    Decision.StopUnavailable checkGenesis() throws Exception {
        return checkGenesis(protocol.readGenesis());
    }

    /** {@link #checkGenesis()} on a genesis the caller read already (in the same round trip as the key). */
    Decision.StopUnavailable checkGenesis(Optional<Genesis> read) throws Exception {
        if (read.isEmpty() && initialize) {
            read = Optional.of(protocol.createGenesis(null).genesis());
        }
        String path = Layout.genesis(namespace);
        if (read.isEmpty()) {
            return new Decision.StopUnavailable(StopReason.NAMESPACE_NOT_INITIALISED, Evidence.of(path, -1,
                    "namespace " + namespace + " has no genesis record: if this is a new namespace run `oncegate init"
                            + " --namespace " + namespace + "`; if it held keys before, its data was lost or restored"
                            + " from an old snapshot and must not be taken for a fresh start"));
        }
        Genesis seen = read.get();
        Genesis first = genesis.get();
        if (first == null) {
            if (!protocol.genesisMarkerExists(seen.id())) {
                return new Decision.StopUnavailable(StopReason.NAMESPACE_NOT_INITIALISED, Evidence.of(
                        Layout.genesisMarker(namespace, seen.id()), -1, "namespace " + namespace + "'s genesis " + seen.id()
                                + " has no id marker (it was written by an older oncegate): run `oncegate init --namespace "
                                + namespace + "` once, which adds it and changes nothing else"));
            }
            if (genesis.compareAndSet(null, seen)) {
                acls = Acls.of(seen.roles());
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

    /** {@link #checkGenesis()} for operator commands: an unknown namespace is an error, not an empty answer. */
    void requireGenesis() throws Exception {
        Decision.StopUnavailable stop = checkGenesis();
        if (stop != null) {
            throw new StopException(stop);
        }
    }

    /** The ACLs of the namespace's roles ({@link Acls#OPEN} without roles, or before the genesis was read). */
    Acls acls() {
        return acls;
    }

    /** The genesis first seen (null before the first {@link #checkGenesis}). */
    Genesis genesis() {
        return genesis.get();
    }

    /** The genesis id first seen (null before the first {@link #checkGenesis}). */
    String genesisId() {
        Genesis g = genesis.get();
        return g == null ? null : g.id();
    }

    /** A zxid a read or write revealed: the ensemble has reached at least this far. */
    void observed(long zxid) {
        String id = genesisId();
        if (id != null && zxid > 0) {
            marks.observe(namespace, id, zxid);
        }
    }

    /** The highest zxid the witness has seen for this namespace life. */
    long highestZxid() {
        String id = genesisId();
        return id == null ? 0 : marks.highest(namespace, id);
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
