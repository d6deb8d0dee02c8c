package dev.oncegate;

import java.time.Clock;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.Op;
import org.apache.zookeeper.OpResult;
import org.apache.zookeeper.data.ACL;
import org.apache.zookeeper.data.Stat;

/**
 * What an operator (or an admin) writes, and nothing else does: the namespace's genesis
 * ({@code oncegate init}), the roles it names ({@code oncegate acl}), redelivery authorizations,
 * reconciliations, retention's deletes ({@code oncegate gc}) and the health check's probe; beside them, the
 * backlog index's parents ({@link #createIndex}) and the entries these writes add or remove (hints, which
 * workers' writes keep too: {@link BacklogIndex}). Each is
 * decided by ZooKeeper, never by a clock: a create-once znode or a version check that exactly one
 * of two racing writers passes (SPEC §4.10). (The ACLs {@code oncegate acl} sets on every znode are
 * {@link AclWalk}'s.)
 *
 * <p>Stateless apart from its {@link ScopeProtocol}; thread-safe.
 */
final class OperatorWrites {

    private static final org.slf4j.Logger LOG = org.slf4j.LoggerFactory.getLogger(OperatorWrites.class);

    private final ScopeProtocol protocol;
    private final ZooKeeperOps zk;
    private final String namespace;
    private final Clock clock;

    OperatorWrites(ScopeProtocol protocol) {
        this.protocol = protocol;
        this.zk = protocol.zk;
        this.namespace = protocol.namespace();
        this.clock = protocol.clock;
    }

    // ---- the namespace: genesis and roles (admin) ------------------------------------------------

    /**
     * {@code create NS} (its parents persistent, with the client's own ACL), {@code multi(create
     * NS/genesis, create NS/genesis/ID)}, {@code create NS/keys}: each with its role ACL when
     * {@code roles} are given. An existing genesis is kept and returned (whatever roles it names),
     * and given its id marker and keys znode when it lacks them. Written as {@code oncegate init}
     * writes it: not {@link Genesis#automatic()}.
     */
    GenesisResult createGenesis(Genesis.Roles roles) throws Exception {
        return createGenesis(roles, false);
    }

    /** {@link #createGenesis(Genesis.Roles)}, written {@link Genesis#automatic()} when {@code automatic}. */
    GenesisResult createGenesis(Genesis.Roles roles, boolean automatic) throws Exception {
        Optional<Genesis> existing = protocol.reads().readGenesis();
        if (existing.isPresent()) {
            completeNamespace(existing.get());
            return new GenesisResult(existing.get(), false);
        }
        Genesis genesis = new Genesis(java.util.UUID.randomUUID().toString(), clock.instant(), roles, 0, null, automatic);
        Acls own = Acls.of(roles);
        String path = Layout.genesis(namespace);
        if (zk.exists(namespace, null) == null) {
            try {
                zk.create(namespace, null, CreateMode.PERSISTENT, own.forKind(Layout.Kind.NAMESPACE), null, true);
            } catch (KeeperException.NodeExistsException raced) {
                // created concurrently
            }
        }
        try {
            zk.multi(List.of(
                    zk.opCreate(path, Records.genesis(genesis), CreateMode.PERSISTENT, own.forKind(Layout.Kind.GENESIS)),
                    zk.opCreate(Layout.genesisMarker(namespace, genesis.id()), new byte[0], CreateMode.PERSISTENT,
                            own.forKind(Layout.Kind.GENESIS))));
        } catch (KeeperException.NodeExistsException e) {
            // Another init won the race (or our own create was applied before a lost reply).
            Genesis winner = protocol.reads().readGenesis().orElseThrow(() -> e);
            completeNamespace(winner);
            return new GenesisResult(winner, winner.id().equals(genesis.id()));
        }
        completeNamespace(genesis);
        return new GenesisResult(genesis, true);
    }

    /**
     * The genesis id marker, {@code NS/keys} and the backlog index, created when missing (namespaces from
     * older releases lack them).
     */
    private void completeNamespace(Genesis genesis) throws Exception {
        Acls own = Acls.of(genesis.roles());
        createIfAbsent(Layout.genesisMarker(namespace, genesis.id()), own.forKind(Layout.Kind.GENESIS));
        createIfAbsent(Layout.keys(namespace), own.forKind(Layout.Kind.KEYS));
        createIndex(own);
    }

    /**
     * {@code multi(create NS/backlog, create NS/backlog/KIND…, create NS/backlog/KIND/H…)}: the backlog index's
     * parents in one transaction, so that its root exists only with every bucket ({@link BacklogIndex}); nothing
     * when the root exists. On a namespace that already holds keys, entries for what happened before appear as
     * the exporter's walk meets them ({@link DefaultOperator#checkIndex}).
     *
     * @return whether this call created it
     */
    boolean createIndex(Acls own) throws Exception {
        if (zk.exists(BacklogIndex.root(namespace), null) != null) {
            protocol.indexSeen(true);
            return false;
        }
        List<Op> ops = new ArrayList<>();
        for (String path : BacklogIndex.skeleton(namespace)) {
            ops.add(zk.opCreate(path, new byte[0], CreateMode.PERSISTENT, own.forPath(namespace, path)));
        }
        try {
            zk.multi(ops);
            protocol.indexSeen(true);
            return true;
        } catch (KeeperException.NodeExistsException raced) {
            protocol.indexSeen(true);
            return false; // another init made it
        } catch (KeeperException.NoAuthException denied) {
            // Never a reason to fail: the namespace works without it, as before the index.
            LOG.warn("oncegate namespace {} has no backlog index and this identity may not create it: run `oncegate init`"
                    + " as the admin to add it (until then list and the exporter walk every key)", namespace);
            return false;
        }
    }

    /**
     * {@code exists NS/backlog}: whether this namespace has a backlog index now (told to the protocol, so
     * that the operator's next writes carry entry ops or not). An identity that may not read it sees none.
     */
    boolean indexExists() throws Exception {
        boolean present;
        try {
            present = zk.exists(BacklogIndex.root(namespace), null) != null;
        } catch (KeeperException.NoAuthException e) {
            present = false;
        }
        protocol.indexSeen(present);
        return present;
    }

    /** The removals of those of {@code entries} that exist now, when the namespace has an index. */
    private List<Op> removals(List<String> entries) throws Exception {
        if (!indexExists()) {
            return List.of();
        }
        List<Op> ops = new ArrayList<>();
        for (String entry : BacklogIndex.present(zk, entries)) {
            ops.add(BacklogIndex.delete(protocol, entry));
        }
        return ops;
    }

    /** The key (its 64 hex characters) of a key path. */
    private static String keyName(String keyPath) {
        return keyPath.substring(keyPath.lastIndexOf('/') + 1);
    }

    private void createIfAbsent(String path, List<ACL> acl) throws Exception {
        if (zk.exists(path, null) != null) {
            return;
        }
        try {
            zk.create(path, new byte[0], CreateMode.PERSISTENT, acl, null, false);
        } catch (KeeperException.NodeExistsException present) {
            // created concurrently
        }
    }

    record GenesisResult(Genesis genesis, boolean created) {
    }

    /**
     * {@code setData NS/genesis} naming {@code roles}, at {@code version} (the version {@code genesis}
     * was read at): the roles epoch moves ({@code oncegate acl}), and every gate follows it.
     *
     * @return the genesis' new version: the new roles epoch
     * @throws KeeperException.BadVersionException when the genesis changed since it was read
     */
    int nameRoles(Genesis genesis, int version, Genesis.Roles roles) throws Exception {
        return zk.setData(Layout.genesis(namespace), Records.genesis(genesis.withRoles(roles)), version).getVersion();
    }

    /**
     * {@code setData NS/genesis} counting one more accepted restore, at {@code version} (the version
     * {@code genesis} was read at): the roles epoch moves too, and every host's rollback witness
     * starts afresh for the namespace ({@link Genesis#witnessLife()}).
     *
     * @return the genesis as written
     * @throws KeeperException.BadVersionException when the genesis changed since it was read
     */
    Genesis acceptRestore(Genesis genesis, int version) throws Exception {
        Genesis accepted = genesis.accepting(java.util.UUID.randomUUID().toString());
        zk.setData(Layout.genesis(namespace), Records.genesis(accepted), version);
        return accepted;
    }

    /**
     * {@code setACL NS/genesis} to its role ACL under {@code acls}, unless it has it already (the
     * last step of {@code oncegate acl}, after {@link AclWalk} gave every other znode its own).
     *
     * @return whether the ACL was set
     */
    boolean giveGenesisItsAcl(Acls acls) throws Exception {
        String path = Layout.genesis(namespace);
        if (Acls.same(zk.getAcl(path, null), acls.forKind(Layout.Kind.GENESIS))) {
            return false;
        }
        zk.setAcl(path, acls.forKind(Layout.Kind.GENESIS), -1);
        return true;
    }

    // ---- redelivery authorizations --------------------------------------------------------------

    /** What became of an operator's authorization. */
    record Authorizing(String path, boolean created, AuthorizationView existing) {
    }

    /**
     * {@code create KEY/authorizations/after-n}: one authorization per consumed scope. A create
     * retried after a lost reply meets NodeExists and recognises its own attempt id; an existing
     * record of someone else (a second paste, a racing operator) is left as it is and returned.
     */
    Authorizing authorize(String keyPath, int n, Records.Authorization authorization) throws Exception {
        String path = Layout.authorization(keyPath, n);
        try {
            List<Op> index = indexExists() ? List.of(BacklogIndex.create(protocol,
                    BacklogIndex.entry(namespace, BacklogIndex.Kind.AUTHORIZED, keyName(keyPath), n))) : List.of();
            List<OpResult> results = protocol.multiWithIndex(List.of(zk.opCreate(path, Records.authorization(authorization),
                    CreateMode.PERSISTENT, protocol.acl(Layout.Kind.AUTHORIZATION))), index);
            Stat stat = ScopeProtocol.statOf(results.get(0));
            // A create inside a multi answers with no stat: read the record's back for the rollback witness.
            protocol.saw(stat != null ? stat : zk.exists(path, null));
            return new Authorizing(path, true, null);
        } catch (KeeperException.NodeExistsException e) {
            AuthorizationView existing = protocol.reads().readAuthorization(keyPath, n);
            boolean ours = existing.record() != null && existing.record().actor() != null
                    && authorization.actor().attempt().equals(existing.record().actor().attempt());
            return new Authorizing(path, ours, ours ? null : existing);
        }
    }

    // ---- reconciliation -------------------------------------------------------------------------

    /**
     * An operator's verdict that a consumed-unknown scope was delivered, decided by ZooKeeper
     * against everything that could race it. For a scope armed without outcome: {@code
     * multi(check(scope, version), setData(armed/outcome, sent_verified marker, 0), create
     * KEY/authorizations/reconciled-n)}: the outcome is written once (version 0 → 1), so either this
     * multi or the executor's own outcome lands, never both (a late {@code not_sent} can no longer
     * reopen the key; a {@code not_sent} that came first makes this one fail, and the scope is then
     * no longer consumed). For a {@code send_status_unknown} scope: {@code multi(check(scope,
     * version), check(armed/outcome, its version), create KEY/authorizations/reconciled-n)}. The scope version
     * check is what an authorization opening scope n+1 moves ({@link ExecutorWrites#openAuthorizedScope}): a
     * reconciliation never lands on a scope that is no longer the latest. The original records stay
     * beside it. (Scopes armed before schema 4 keep their outcome at {@code KEY/n/outcome}: created
     * there, or checked there.)
     *
     * @return false when the scope changed since it was read (read again)
     */
    boolean reconcile(ScopeView scope, KeyHistory.Reconciliation reconciliation) throws Exception {
        boolean current = Layout.ARMED.equals(scope.armedName());
        String outcomePath = current ? Layout.outcome(scope.path()) : Layout.legacyOutcome(scope.path());
        Op outcomeOp;
        if (scope.outcome() != null) {
            outcomeOp = zk.opCheck(outcomePath, scope.outcomeVersion());
        } else if (current) {
            outcomeOp = zk.opSetData(outcomePath, Records.reconciledMarker(scope.scope()), 0);
        } else {
            outcomeOp = zk.opCreate(outcomePath, Records.reconciledMarker(scope.scope()), CreateMode.PERSISTENT, protocol.acl(Layout.Kind.RECORD));
        }
        String key = keyName(Layout.keyOfScope(scope.path()));
        List<Op> index = removals(List.of(BacklogIndex.entry(namespace, BacklogIndex.Kind.ARMED, key, scope.scope()),
                BacklogIndex.entry(namespace, BacklogIndex.Kind.UNKNOWN, key, scope.scope())));
        String reconciliationPath = Layout.reconciliation(Layout.keyOfScope(scope.path()), scope.scope());
        try {
            Stat stat = ScopeProtocol.results(protocol.multiWithIndex(List.of(
                    zk.opCheck(scope.path(), scope.version()),
                    outcomeOp,
                    zk.opCreate(reconciliationPath, Records.reconciliation(reconciliation), CreateMode.PERSISTENT,
                            protocol.acl(Layout.Kind.RECORD))),
                    index));
            // Checks and creates answer with no stat (a send_status_unknown scope): read the record's back
            // for the rollback witness.
            protocol.saw(stat != null ? stat : zk.exists(reconciliationPath, null));
            return true;
        } catch (KeeperException.BadVersionException | KeeperException.NoNodeException | KeeperException.NodeExistsException e) {
            return false;
        }
    }

    // ---- retention (gc) -------------------------------------------------------------------------

    /**
     * {@code multi(check(latest scope, version), delete …)}: removes a consumed key's whole
     * subtree at once (children first), provided its latest scope is still what was read. Fails
     * (and removes nothing) when anything changed or someone is in an election under it.
     *
     * <p>A multi whose reply was lost may have been applied: the client's retry then meets the key
     * gone (NoNode on the check). A key that no longer exists is reported removed, as it is (open
     * again), not as kept.
     *
     * @param paths every znode of the key, children before parents, the key last
     * @return false when the key changed or is in use (nothing was removed); true when it is gone
     */
    boolean deleteKey(String latestScope, int latestVersion, List<String> paths) throws Exception {
        List<Op> ops = new ArrayList<>();
        ops.add(zk.opCheck(latestScope, latestVersion));
        for (String p : paths) {
            ops.add(zk.opDelete(p, -1));
        }
        String keyPath = Layout.keyOfScope(latestScope);
        List<Op> index = removals(BacklogIndex.allOf(namespace, keyName(keyPath),
                Layout.scopeNumber(latestScope.substring(latestScope.lastIndexOf('/') + 1))));
        try {
            protocol.multiWithIndex(ops, index);
            return true;
        } catch (KeeperException.NoNodeException e) {
            return zk.exists(keyPath, null) == null; // gone: removed by this multi before its reply was lost, or by another gc
        } catch (KeeperException.BadVersionException | KeeperException.NotEmptyException e) {
            return false;
        }
    }

    // ---- health check (oncegate doctor, and gc's server clock) ----------------------------------

    /**
     * What a health check's probe create left.
     *
     * @param path     the probe's znode (ephemeral: gone with the session)
     * @param stat     its stat: the server's clock as {@code ctime}, the ensemble's progress as {@code czxid}
     * @param sent     this process's clock when the create was sent
     * @param received this process's clock when its reply came
     */
    record Probe(String path, Stat stat, Instant sent, Instant received) {
    }

    /**
     * {@code create -e -s NS/keys/doctor-}: an ephemeral, sequential probe under the keys (where
     * a worker may create), for the server's clock and the create permission. Not a bucket (bucket
     * names are two hex digits), so key walks find no key under it; it goes with the session.
     */
    Probe probe() throws Exception {
        Stat stat = new Stat();
        Instant sent = clock.instant();
        String path = zk.create(Layout.probe(namespace), new byte[0], CreateMode.EPHEMERAL_SEQUENTIAL, protocol.acl(Layout.Kind.KEYS),
                stat, false);
        Instant received = clock.instant();
        protocol.saw(stat);
        return new Probe(path, stat, sent, received);
    }

    /** {@code delete} of a probe {@link #probe} made (it would go with the session anyway). */
    void deleteProbe(String path) throws Exception {
        try {
            zk.delete(path, -1);
        } catch (KeeperException.NoNodeException gone) {
            // gone with its session already
        }
    }
}
