package dev.oncegate;

import java.time.Clock;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.LongConsumer;
import java.util.function.ObjIntConsumer;
import java.util.function.Supplier;

import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.utils.ZKPaths;
import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.Op;
import org.apache.zookeeper.OpResult;
import org.apache.zookeeper.Watcher;
import org.apache.zookeeper.data.ACL;
import org.apache.zookeeper.data.Stat;

/**
 * Every ZooKeeper operation of the protocol, in one place. Each method names the operation it
 * performs; each write is conditional (a create that fails on an existing node, or a versioned
 * {@code setData}/{@code check}); the fencing token is the scope znode's version and is never
 * -1. Stateless apart from its collaborators and the last genesis it decoded (an immutable pair of
 * bytes and record, replaced atomically); thread-safe.
 *
 * <h2>Incarnations</h2>
 * ZooKeeper compares versions only, and a deleted and recreated znode starts again at version 0:
 * after an operator's {@code deleteall} of a key, or a namespace wiped and re-initialised, an
 * executor's old token can match the new znode. So each executor write also checks a path that
 * exists only in the incarnation the write was decided in: the executor's own election node
 * (created under the scope before the read that the lease CAS relies on, and gone with the scope),
 * the namespace's genesis id, and for the outcome its election node again (or, once that is
 * gone with its session, its own armed record, read and recognised by its commitment).
 *
 * <p>What a read concludes from these records is {@link Custody}'s: readers never trust a field a
 * worker credential may write (the scope's data) for a safety decision.
 *
 * <h2>Writes, in protocol order</h2>
 * <ol>
 *   <li>{@link #createGenesis}: {@code multi(create NS/genesis, create NS/genesis/ID)} once.</li>
 *   <li>{@link #createKey}: {@code multi(check NS/genesis/ID, check(NS/genesis, roles epoch), [create BUCKET1,]
 *       [create BUCKET2,] create KEY, create KEY/authorizations, create KEY/0, create KEY/0/latch (container))}, the
 *       bucket levels that the key's read found missing; a bucket that appeared or vanished since is sent again or
 *       left out; a roles epoch that moved since is read and the multi sent again with its ACLs.</li>
 *   <li>{@link #writeLease}: {@code multi(check ELECTION-NODE, setData(scope, v))} to take, renew or release.</li>
 *   <li>{@link #arm}: {@code multi(check NS/genesis/ID, check ELECTION-NODE, setData(scope armed, v),
 *       create KEY/n/armed, create KEY/n/armed/outcome (empty))}, sent once on the raw ZooKeeper handle,
 *       never retried: a connection loss here counts as armed. The create-once armed record is the
 *       barrier: one arming per scope.</li>
 *   <li>{@link #recordOutcome}: {@code multi(check ELECTION-NODE, setData(armed/outcome, 0) [, create
 *       KEY/n+1])}, retried by Curator; a retry that finds the outcome written recognises its own secret.</li>
 *   <li>{@link #authorize}: {@code create KEY/authorizations/after-n} (an operator's).</li>
 *   <li>{@link #openAuthorizedScope}: {@code multi(check after-n, setData(scope n, v), create KEY/n+1)}.</li>
 *   <li>{@link #reconcile}: {@code multi(check(scope n, v), setData(armed/outcome, 0) | check(armed/outcome, 1),
 *       create KEY/authorizations/reconciled-n)} (an operator's).</li>
 * </ol>
 * Permanent records are plain persistent znodes: never TTL, ephemeral or container children.
 * Every zxid a read or write reveals goes to the rollback witness.
 */
final class ScopeProtocol {

    private final ZooKeeperOps zk;
    private final String namespace;
    private final Clock clock;
    private final LongConsumer zxids;
    private final Supplier<Acls> acls;
    private final ObjIntConsumer<Genesis> genesisSeen;
    /** The genesis bytes last decoded and their record: every enter reads the genesis, which rarely changes. */
    private final AtomicReference<DecodedGenesis> lastGenesis = new AtomicReference<>();

    private record DecodedGenesis(byte[] data, Genesis genesis) {
    }

    /** A protocol on a Curator client that tells nobody of the genesis versions it reads (initialisation, tests). */
    ScopeProtocol(CuratorFramework client, String namespace, Clock clock, LongConsumer zxids, Supplier<Acls> acls) {
        this(new CuratorOps(client, "protocol"), namespace, clock, zxids, acls);
    }

    /** A protocol that tells nobody of the genesis versions it reads (initialisation, tests). */
    ScopeProtocol(ZooKeeperOps zk, String namespace, Clock clock, LongConsumer zxids, Supplier<Acls> acls) {
        this(zk, namespace, clock, zxids, acls, (genesis, version) -> { });
    }

    /**
     * @param zxids       told every zxid a read or write reveals (a lower bound of the ensemble's
     *                    progress), for rollback detection
     * @param acls        the ACLs of the namespace's roles, once its genesis was read ({@link Acls#OPEN} before),
     *                    with the roles epoch they were read at
     * @param genesisSeen told every genesis a read returns, with its data version (its roles epoch), so
     *                    that {@code acls} can follow the roles the genesis names now
     */
    ScopeProtocol(ZooKeeperOps zk, String namespace, Clock clock, LongConsumer zxids, Supplier<Acls> acls,
                  ObjIntConsumer<Genesis> genesisSeen) {
        this.zk = zk;
        this.namespace = namespace;
        this.clock = clock;
        this.zxids = zxids;
        this.acls = acls;
        this.genesisSeen = genesisSeen;
    }

    /** The ACL of a znode of this kind under the namespace's roles. */
    private List<ACL> acl(Layout.Kind kind) {
        return acls.get().forKind(kind);
    }

    String namespace() {
        return namespace;
    }

    private void saw(Stat stat) {
        if (stat != null) {
            zxids.accept(Math.max(stat.getMzxid(), Math.max(stat.getPzxid(), stat.getCzxid())));
        }
    }

    /** A read returned the genesis: its zxids to the witness, the genesis and its roles epoch to {@code genesisSeen}. */
    private void sawGenesis(Genesis genesis, Stat stat) {
        saw(stat);
        genesisSeen.accept(genesis, stat.getVersion());
    }

    /**
     * {@link Records#decodeGenesis}, skipped when the bytes are those decoded last time (the same
     * bytes decode to the same record; decoding, its time above all, cost an enter a tenth of its CPU).
     */
    private Genesis decodeGenesis(String path, byte[] data) {
        DecodedGenesis last = lastGenesis.get();
        if (last != null && Arrays.equals(last.data(), data)) {
            return last.genesis();
        }
        Genesis genesis = Records.decodeGenesis(path, data);
        lastGenesis.set(new DecodedGenesis(data, genesis));
        return genesis;
    }

    // ---- namespace ------------------------------------------------------------------------

    /** {@code getData NS/genesis}; empty when the namespace was never initialised. */
    Optional<Genesis> readGenesis() throws Exception {
        String path = Layout.genesis(namespace);
        try {
            Stat stat = new Stat();
            Genesis genesis = Records.decodeGenesis(path, zk.getData(path, stat, null));
            sawGenesis(genesis, stat);
            return Optional.of(genesis);
        } catch (KeeperException.NoNodeException e) {
            return Optional.empty();
        }
    }

    /** {@code exists NS/genesis/ID}: whether the genesis carries its id as a path (namespaces from before 0.2 do not). */
    boolean genesisMarkerExists(String genesisId) throws Exception {
        return zk.exists(Layout.genesisMarker(namespace, genesisId), null) != null;
    }

    /**
     * {@code create NS} (its parents persistent, with the client's own ACL), {@code multi(create
     * NS/genesis, create NS/genesis/ID)}, {@code create NS/keys}: each with its role ACL when
     * {@code roles} are given. An existing genesis is kept and returned (whatever roles it names),
     * and given its id marker and keys znode when it lacks them.
     */
    GenesisResult createGenesis(Genesis.Roles roles) throws Exception {
        Optional<Genesis> existing = readGenesis();
        if (existing.isPresent()) {
            completeNamespace(existing.get());
            return new GenesisResult(existing.get(), false);
        }
        Genesis genesis = new Genesis(java.util.UUID.randomUUID().toString(), clock.instant(), roles);
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
            Genesis winner = readGenesis().orElseThrow(() -> e);
            completeNamespace(winner);
            return new GenesisResult(winner, winner.id().equals(genesis.id()));
        }
        completeNamespace(genesis);
        return new GenesisResult(genesis, true);
    }

    /** The genesis id marker and {@code NS/keys}, created when missing (namespaces from older pre-releases lack them). */
    private void completeNamespace(Genesis genesis) throws Exception {
        Acls own = Acls.of(genesis.roles());
        createIfAbsent(Layout.genesisMarker(namespace, genesis.id()), own.forKind(Layout.Kind.GENESIS));
        createIfAbsent(Layout.keys(namespace), own.forKind(Layout.Kind.KEYS));
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

    // ---- key --------------------------------------------------------------------------------

    /**
     * {@link #readKey} and, when the key is absent, {@link #createKey}: the key exists afterwards
     * (created here or by a racing contender) and names this effect.
     *
     * @throws StopException namespace_replaced when the genesis id is gone
     */
    void ensureKey(EffectKey key, String genesisId) throws Exception {
        KeyRead read = readKey(key);
        if (!read.exists()) {
            createKey(key, genesisId, read.firstBucket(), read.secondBucket());
        }
    }

    /** What {@link #createKey} did. */
    enum KeyCreation {
        /** This contender created the key, its first scope (open, version 0) and the scope's election container. */
        CREATED,
        /** The key exists already: a racing contender created it (or our own create, retried after a lost reply). */
        EXISTS
    }

    /**
     * {@code multi(check NS/genesis/ID, check(NS/genesis, epoch), [create bucket], [create bucket],
     * create KEY, create KEY/authorizations, create KEY/0, create KEY/0/latch)}: the key with its first
     * scope and that scope's election container (a container: the server reaps it once its election is
     * over), the missing bucket levels in the same transaction (no probing create that fails but is
     * still a logged transaction), and never in a namespace other than the one this gate started in.
     * {@code firstBucket}/{@code secondBucket} say which bucket levels the caller saw; when another
     * contender created one meanwhile, the multi is sent again without it; when one was removed, with both.
     *
     * <p><b>Roles epoch.</b> Every znode of the new key gets the ACL of the roles the genesis names,
     * and the multi checks that the genesis is still at the version (the roles epoch, {@link Acls})
     * those roles were read at. {@code oncegate acl} rewrites the genesis <em>before</em> it walks the
     * namespace, so a key is either created before that rewrite (and the walk, which starts after it,
     * finds it) or with the new roles' ACLs: never with stale ACLs beneath a znode the walk has
     * passed. A gate whose ACLs are stale meets BadVersion on that check; it then reads the genesis
     * (the same id: its roles and epoch are adopted for this gate's later writes too; another id:
     * namespace_replaced) and sends the multi again. The gate's other creates (scope n+1, armed,
     * outcome, election nodes) check no epoch: they use the newest roles this gate has read, and
     * {@code acl}'s later passes give whatever an attempt in flight created with older ones its role ACL.
     *
     * @throws StopException namespace_replaced when the genesis id is gone; zookeeper_rolled_back when
     *                       the genesis' version went back (a restore from an older snapshot)
     */
    KeyCreation createKey(EffectKey key, String genesisId, boolean firstBucket, boolean secondBucket) throws Exception {
        String keyPath = Layout.keyPath(namespace, key.key());
        String bucket2 = Layout.bucket(namespace, key.key());
        String bucket1 = ZKPaths.getPathAndNode(bucket2).getPath();
        boolean have1 = firstBucket || secondBucket;
        boolean have2 = secondBucket;
        Acls roles = rolesEpoch(key, genesisId, Acls.NO_EPOCH);
        for (int tries = 0; ; tries++) {
            Instant now = clock.instant();
            byte[] scope0 = Records.scope(new Records.Scope("initial", now, null, false, false));
            List<Op> ops = new ArrayList<>();
            ops.add(zk.opCheck(Layout.genesisMarker(namespace, genesisId), 0));
            ops.add(zk.opCheck(Layout.genesis(namespace), roles.epoch()));
            int b1 = -1;
            int b2 = -1;
            if (!have1) {
                b1 = ops.size();
                ops.add(zk.opCreate(bucket1, new byte[0], CreateMode.PERSISTENT, roles.forKind(Layout.Kind.KEYS)));
            }
            if (!have2) {
                b2 = ops.size();
                ops.add(zk.opCreate(bucket2, new byte[0], CreateMode.PERSISTENT, roles.forKind(Layout.Kind.KEYS)));
            }
            int keyOp = ops.size();
            ops.add(zk.opCreate(keyPath, Records.key(key, now), CreateMode.PERSISTENT, roles.forKind(Layout.Kind.KEY)));
            ops.add(zk.opCreate(Layout.authorizations(keyPath), new byte[0], CreateMode.PERSISTENT, roles.forKind(Layout.Kind.AUTHORIZATIONS)));
            ops.add(zk.opCreate(Layout.scope(keyPath, 0), scope0, CreateMode.PERSISTENT, roles.forKind(Layout.Kind.SCOPE)));
            ops.add(zk.opCreate(Layout.latch(Layout.scope(keyPath, 0)), new byte[0], CreateMode.CONTAINER,
                    roles.forKind(Layout.Kind.LATCH)));
            try {
                saw(results(zk.multi(ops)));
                return KeyCreation.CREATED;
            } catch (KeeperException e) {
                int failed = failedOp(e);
                KeeperException.Code code = failedCode(e);
                if (failed == 0 && code == KeeperException.Code.NONODE) {
                    throw namespaceReplaced(genesisId, "creating key " + key.key());
                }
                if (tries >= 3) {
                    throw e;
                }
                if (failed == 1 && code == KeeperException.Code.BADVERSION) {
                    roles = rolesEpoch(key, genesisId, roles.epoch()); // stale ACLs: read the roles named now
                } else if (failed == b1 && code == KeeperException.Code.NODEEXISTS) {
                    have1 = true; // a racing contender made the bucket: send the rest again
                } else if (failed == b2 && code == KeeperException.Code.NODEEXISTS) {
                    have1 = true;
                    have2 = true;
                } else if (failed == keyOp && code == KeeperException.Code.NODEEXISTS) {
                    return KeyCreation.EXISTS;
                } else if (failed == keyOp && code == KeeperException.Code.NONODE) {
                    // The second level is gone (an admin removed it), so the first may be too: create both
                    // again; a first level that exists meets NodeExists above and is left out next time.
                    have1 = false;
                    have2 = false;
                } else {
                    throw e;
                }
            }
        }
    }

    /**
     * The ACLs a key creation is sent with and the roles epoch it checks: this gate's, when newer
     * than {@code stale}; else {@code getData NS/genesis} now, whose roles and version are also told
     * to {@code genesisSeen} (so the gate's other writes follow them).
     *
     * @param stale the epoch the creation met BadVersion on, or {@link Acls#NO_EPOCH} before the first send
     */
    private Acls rolesEpoch(EffectKey key, String genesisId, int stale) throws Exception {
        Acls shared = acls.get();
        if (shared.epoch() > stale) {
            return shared;
        }
        String path = Layout.genesis(namespace);
        Stat stat = new Stat();
        Genesis genesis;
        try {
            genesis = decodeGenesis(path, zk.getData(path, stat, null));
        } catch (KeeperException.NoNodeException e) {
            throw namespaceReplaced(genesisId, "creating key " + key.key());
        }
        if (!genesis.id().equals(genesisId)) {
            throw namespaceReplaced(genesisId, "creating key " + key.key());
        }
        sawGenesis(genesis, stat);
        if (stat.getVersion() <= stale) {
            throw new StopException(new Decision.StopUnavailable(StopReason.ZOOKEEPER_ROLLED_BACK, Evidence.of(path, -1,
                    "the roles epoch of namespace " + namespace + " (the version of " + path + ") went back from " + stale
                            + " to " + stat.getVersion() + " while creating key " + key.key() + ": the ensemble was restored"
                            + " from an older snapshot; nothing was written (deploy/RUNBOOK.md, 'ZooKeeper data lost, or"
                            + " restored from a backup')")));
        }
        return Acls.of(genesis.roles(), stat.getVersion());
    }

    private StopException namespaceReplaced(String genesisId, String during) {
        String marker = Layout.genesisMarker(namespace, genesisId);
        return new StopException(new Decision.StopUnavailable(StopReason.NAMESPACE_REPLACED, Evidence.of(marker, -1,
                "namespace " + namespace + " no longer carries genesis " + genesisId + " (" + marker + " is gone) while "
                        + during + ": its data was wiped or re-initialised; nothing was written. Restart the worker"
                        + " once an operator has checked what was delivered")));
    }

    private static void checkKeyRecord(EffectKey key, String keyPath, byte[] data) {
        KeyHistory.KeyRecord r = Records.decodeKey(keyPath, data);
        if (!r.sha256().equals(key.sha256()) || !r.provider().equals(key.destination().provider())
                || !r.identity().equals(key.destination().identity().wireName())
                || !r.destination().equals(key.destination().id())) {
            throw new UnreadableRecordException(keyPath, "the key record names another effect");
        }
    }

    // ---- reading ----------------------------------------------------------------------------

    /**
     * What one read-only {@code multi} told a contender about a key.
     *
     * @param genesis      the namespace's genesis, if any
     * @param firstBucket  whether the key's first bucket level exists
     * @param secondBucket whether its second bucket level exists
     * @param keyZxid      the key znode's creation zxid (0 when it does not exist): with the genesis
     *                     id, the identity of this incarnation of the key
     * @param scope        the key's latest scope, or null when the key does not exist
     */
    record KeyRead(Optional<Genesis> genesis, boolean firstBucket, boolean secondBucket, long keyZxid, ScopeRead scope) {
        boolean exists() {
            return scope != null;
        }
    }

    /**
     * One scope as one read saw it.
     *
     * @param view          the scope, judged ({@link Custody#judge})
     * @param authorization its {@code after-n} authorization (absent, present or unreadable)
     * @param latchExists   whether its election container exists
     */
    record ScopeRead(ScopeView view, AuthorizationView authorization, boolean latchExists) {
    }

    /** Whether a not_sent without a commitment (schema 3 or older) is believed: only without roles ({@link Custody}). */
    private boolean legacyTrusted() {
        return !acls.get().on();
    }

    /**
     * Everything a contender needs to decide about a key, in one round trip where possible: a
     * read-only {@code multi} of the genesis, both bucket levels, the key record (whose child
     * count gives the latest scope: {@code authorizations} and scopes {@code 0…n}) and scope 0
     * as {@link #readScopeOnce} reads it. A key whose latest scope is not 0 costs a second round
     * trip for that scope; its chain of custody is the caller's to check ({@link #verifyChain}).
     */
    KeyRead readKey(EffectKey key) throws Exception {
        String keyPath = Layout.keyPath(namespace, key.key());
        String bucket2 = Layout.bucket(namespace, key.key());
        String genesisPath = Layout.genesis(namespace);
        List<Op> ops = new ArrayList<>(List.of(getDataOp(genesisPath), getDataOp(ZKPaths.getPathAndNode(bucket2).getPath()),
                getDataOp(bucket2), getDataOp(keyPath)));
        ops.addAll(scopeOps(keyPath, 0));
        List<OpResult> r = multiRead(ops);
        OpResult.GetDataResult genesisResult = dataOrNull(r.get(0), genesisPath);
        Optional<Genesis> genesis = Optional.empty();
        if (genesisResult != null) {
            genesis = Optional.of(decodeGenesis(genesisPath, genesisResult.getData()));
            sawGenesis(genesis.get(), genesisResult.getStat());
        }
        boolean first = dataOrNull(r.get(1), ZKPaths.getPathAndNode(bucket2).getPath()) != null;
        boolean second = dataOrNull(r.get(2), bucket2) != null;
        OpResult.GetDataResult keyResult = dataOrNull(r.get(3), keyPath);
        if (keyResult == null) {
            return new KeyRead(genesis, first, second, 0, null);
        }
        checkKeyRecord(key, keyPath, keyResult.getData());
        saw(keyResult.getStat());
        // This first read may come before the gate knows the namespace's roles: judge by the genesis read with it.
        boolean trusted = genesis.map(g -> g.roles() == null).orElse(false) && legacyTrusted();
        // Children of a key: authorizations and the scopes 0…n, each created once, none deleted.
        int latest = keyResult.getStat().getNumChildren() - 2;
        ScopeRead scope = latest == 0 ? scopeRead(keyPath, 0, r.subList(4, r.size()), trusted) : null;
        if (scope == null) {
            scope = readScopeOnce(keyPath, latest >= 0 ? latest : latestScope(keyPath), trusted);
        }
        return new KeyRead(genesis, first, second, keyResult.getStat().getCzxid(), scope);
    }

    /**
     * Scope {@code n} in one read-only {@code multi} ({@link #scopeOps}), plus its armed record
     * when judging needs it. When the key's child count misled (a scope missing), the scopes are
     * listed instead; a scope missing <em>below</em> the latest one (a not_sent whose next scope is
     * gone: a partial clean-up or restore) is unreadable, never a reason to read again.
     */
    ScopeRead readScopeOnce(String keyPath, int n) throws Exception {
        return readScopeOnce(keyPath, n, legacyTrusted());
    }

    private ScopeRead readScopeOnce(String keyPath, int n, boolean trusted) throws Exception {
        ScopeRead read = scopeRead(keyPath, n, multiRead(scopeOps(keyPath, n)), trusted);
        if (read == null) {
            int latest = latestScope(keyPath);
            if (latest < n) {
                throw missingScope(keyPath, n, latest);
            }
            read = scopeRead(keyPath, latest, multiRead(scopeOps(keyPath, latest)), trusted);
            if (read == null) {
                throw new UnreadableRecordException(Layout.scope(keyPath, latest), "the key lists scope " + latest
                        + " but it cannot be read");
            }
        }
        return read;
    }

    private static UnreadableRecordException missingScope(String keyPath, int n, int latest) {
        return new UnreadableRecordException(Layout.scope(keyPath, n), "scope " + n + " is missing (the key's latest"
                + " scope is " + latest + "): scope " + (n - 1) + " proved not_sent, or was authorized, and the scope after"
                + " it was removed (a partial clean-up or restore); an operator must repair the key");
    }

    /** {@link #readScopeOnce}'s view alone. */
    ScopeView readScope(String keyPath, int n) throws Exception {
        return readScopeOnce(keyPath, n).view();
    }

    /**
     * Scope {@code n}, watched: {@code getData scope} and {@code getChildren scope} with
     * {@code watcher} (a lease change, the arming, the outcome and a reconciliation each fire one
     * of them), then {@link #readScopeOnce}'s read. So a waiter learns each change without polling.
     *
     * @throws UnreadableRecordException when the scope does not exist
     */
    ScopeRead readScope(String keyPath, int n, Watcher watcher) throws Exception {
        String scopePath = Layout.scope(keyPath, n);
        try {
            zk.getData(scopePath, null, watcher);
            zk.getChildren(scopePath, watcher);
        } catch (KeeperException.NoNodeException e) {
            throw missingScope(keyPath, n, latestScope(keyPath));
        }
        ScopeRead read = scopeRead(keyPath, n, multiRead(scopeOps(keyPath, n)), legacyTrusted());
        if (read == null) {
            throw missingScope(keyPath, n, latestScope(keyPath));
        }
        return read;
    }

    /**
     * The read of scope {@code n}, in the reverse order of the protocol's writes: its outcome (and
     * where records before schema 4 kept it), the scope znode, the scope's children (its armed
     * record's name, its election container), its armed record, its {@code after-n} authorization
     * and its reconciliation.
     */
    private List<Op> scopeOps(String keyPath, int n) {
        String scopePath = Layout.scope(keyPath, n);
        return List.of(getDataOp(Layout.outcome(scopePath)), getDataOp(Layout.legacyOutcome(scopePath)),
                getDataOp(scopePath), zk.opGetChildren(scopePath),
                getDataOp(Layout.armed(scopePath)), getDataOp(Layout.authorization(keyPath, n)),
                getDataOp(Layout.reconciliation(keyPath, n)));
    }

    /**
     * Scope {@code n} from the results of {@link #scopeOps}, decoded and judged by the one
     * {@link ScopeDecoder} (the first contradiction thrown: a worker fails closed on it); null when
     * the scope does not exist.
     */
    private ScopeRead scopeRead(String keyPath, int n, List<OpResult> r, boolean trusted) throws Exception {
        String scopePath = Layout.scope(keyPath, n);
        OpResult.GetDataResult outcomeResult = dataOrNull(r.get(0), Layout.outcome(scopePath));
        OpResult.GetDataResult legacyResult = dataOrNull(r.get(1), Layout.legacyOutcome(scopePath));
        OpResult.GetDataResult scopeResult = dataOrNull(r.get(2), scopePath);
        List<String> children = childrenOrNull(r.get(3), scopePath);
        if (scopeResult == null || children == null) {
            return null;
        }
        OpResult.GetDataResult armedResult = dataOrNull(r.get(4), Layout.armed(scopePath));
        OpResult.GetDataResult authResult = dataOrNull(r.get(5), Layout.authorization(keyPath, n));
        OpResult.GetDataResult reconciliationResult = dataOrNull(r.get(6), Layout.reconciliation(keyPath, n));
        for (OpResult.GetDataResult seen : Arrays.asList(scopeResult, authResult, armedResult, outcomeResult)) {
            if (seen != null) {
                saw(seen.getStat());
            }
        }
        ScopeDecoder.Decoded decoded = ScopeDecoder.decode(new ScopeDecoder.Raw(n, scopePath, znode(scopeResult), children,
                znode(armedResult), znode(outcomeResult), znode(legacyResult), znode(authResult), true,
                znode(reconciliationResult)), trusted, false, this::fetch).orThrow();
        return new ScopeRead(decoded.view(), decoded.authorization(), children.contains(Layout.LATCH));
    }

    private static ScopeDecoder.Znode znode(OpResult.GetDataResult result) {
        return result == null ? null
                : new ScopeDecoder.Znode(result.getData() == null ? new byte[0] : result.getData(), result.getStat());
    }

    /** {@code getData} of one more znode for the decoder (an armed record before schema 4); null when it does not exist. */
    private ScopeDecoder.Znode fetch(String path) throws Exception {
        Stat stat = new Stat();
        try {
            byte[] data = zk.getData(path, stat, null);
            saw(stat);
            return new ScopeDecoder.Znode(data == null ? new byte[0] : data, stat);
        } catch (KeeperException.NoNodeException e) {
            return null;
        }
    }

    /**
     * The chain of custody below {@code latest}: each scope 1…latest was legitimately opened
     * ({@link Custody#opening}), checked against scopes 0…latest−1 read in one read-only
     * {@code multi} (plus their armed records where needed, and {@code KEY/authorizations}'s ACL
     * when a link rests on an authorization). Records never change once written, so a caller
     * checks a scope once.
     *
     * @throws UnreadableRecordException naming the first scope that was not legitimately opened
     */
    void verifyChain(String keyPath, ScopeView latest) throws Exception {
        int top = latest.scope();
        if (top == 0) {
            return;
        }
        List<Op> ops = new ArrayList<>();
        for (int m = 0; m < top; m++) {
            ops.addAll(scopeOps(keyPath, m));
        }
        List<OpResult> r = multiRead(ops);
        boolean trusted = legacyTrusted();
        int width = scopeOps(keyPath, 0).size();
        ScopeRead previous = null;
        for (int m = 0; m <= top; m++) {
            ScopeRead read = m == top ? new ScopeRead(latest, null, false)
                    : scopeRead(keyPath, m, r.subList(m * width, (m + 1) * width), trusted);
            if (read == null) {
                throw new UnreadableRecordException(Layout.scope(keyPath, m), "scope " + m + " is missing below scope "
                        + top + ": the key's history is incomplete (a partial clean-up or restore)");
            }
            if (previous != null) {
                Custody.Opening opening = Custody.opening(previous.view(), read.view(), previous.authorization());
                String weakness = opening == Custody.Opening.AUTHORIZATION ? authorizationsWeakness(keyPath) : null;
                Custody.requireOpened(previous.view(), read.view(), opening, weakness);
            }
            previous = read;
        }
    }

    /**
     * Why {@code KEY/authorizations} lets someone other than an operator create an authorization
     * ({@code getACL}; {@link Acls#authorizationsWeakness}, with its limit), or null when it does not,
     * or when roles are off.
     */
    String authorizationsWeakness(String keyPath) throws Exception {
        Acls roles = acls.get();
        return roles.on() ? roles.authorizationsWeakness(zk.getAcl(Layout.authorizations(keyPath), null)) : null;
    }

    private Op getDataOp(String path) {
        return zk.opGetData(path);
    }

    /**
     * A read-only {@code multi} (one request, answered by the server the session is connected to,
     * each op on its own), retried by Curator's retry policy like any other read.
     */
    private List<OpResult> multiRead(List<Op> ops) throws Exception {
        return zk.multi(ops);
    }

    /** A read-only multi's getData result, or null for NoNode; any other error is thrown, naming the path. */
    private static OpResult.GetDataResult dataOrNull(OpResult result, String path) throws KeeperException {
        if (result instanceof OpResult.GetDataResult data) {
            return data;
        }
        int err = ((OpResult.ErrorResult) result).getErr();
        if (err == KeeperException.Code.NONODE.intValue()) {
            return null;
        }
        throw KeeperException.create(KeeperException.Code.get(err), path);
    }

    /** A read-only multi's getChildren result, or null for NoNode; any other error is thrown, naming the path. */
    private static List<String> childrenOrNull(OpResult result, String path) throws KeeperException {
        if (result instanceof OpResult.GetChildrenResult children) {
            return children.getChildren();
        }
        int err = ((OpResult.ErrorResult) result).getErr();
        if (err == KeeperException.Code.NONODE.intValue()) {
            return null;
        }
        throw KeeperException.create(KeeperException.Code.get(err), path);
    }

    /** {@code getChildren KEY}: the highest scope number (the key's current scope). */
    int latestScope(String keyPath) throws Exception {
        int latest = -1;
        for (String child : zk.getChildren(keyPath, null)) {
            latest = Math.max(latest, Layout.scopeNumber(child));
        }
        if (latest < 0) {
            throw new UnreadableRecordException(keyPath, "the key has no scope 0");
        }
        return latest;
    }

    /**
     * {@code getData KEY/authorizations/after-n}: the operator's authorization to redeliver after
     * scope {@code n}, if any. An unparsable one is reported, not thrown: the caller decides.
     */
    AuthorizationView readAuthorization(String keyPath, int n) throws Exception {
        String path = Layout.authorization(keyPath, n);
        Stat stat = new Stat();
        byte[] data;
        try {
            data = zk.getData(path, stat, null);
        } catch (KeeperException.NoNodeException e) {
            return AuthorizationView.absent(path, n);
        }
        saw(stat);
        return ScopeDecoder.authorization(path, n, stat, data);
    }

    /**
     * Drops an attempt's watches on {@code path}, in the background, without taking a watch that
     * anyone else of the same client relies on. Attempts of a gate share their client, and so its
     * session, with each other and with their LeaderLatches; a latch watches its predecessor's
     * election node and reacts only to its deletion, so a watch taken from it leaves its member
     * unaware that it leads until a lease TTL has passed.
     * <ul>
     *   <li>{@code shared}, or an election node: {@code removeWatches(path, watcher, Any)} — only
     *       {@code watcher}, in the client. The server keeps the session's watch (ZooKeeper's
     *       per-watcher removal only checks it) until the path changes: on an election node, which a
     *       latch of this client may watch, until its holder leaves (it is ephemeral); on a scope or
     *       outcome another attempt watches, until that attempt closes.</li>
     *   <li>Otherwise {@code removeAllWatches(path, Any)} — the session's watches on the path at the
     *       server and in the client, so a closed waiter leaves none behind. An attempt that set its
     *       watch just now (after {@code shared} was decided) gets a "watch removed" event, reads
     *       again and watches anew, as it does for any event.</li>
     * </ul>
     * Failures are harmless (the watch goes when the path changes or the session ends) and only logged.
     *
     * @param watcher the attempt's own watcher
     * @param shared  whether another attempt of the gate may watch {@code path}
     */
    void forgetWatches(String path, Watcher watcher, boolean shared) {
        boolean onlyOurs = shared || Layout.kind(namespace, path) == Layout.Kind.ELECTION_NODE;
        zk.removeWatches(path, onlyOurs ? watcher : null);
    }

    /**
     * {@code create} the scope's election container (a container: the server reaps it once empty)
     * with its ACL; an existing one is fine. Done before starting a LeaderLatch, whose own
     * {@code creatingParentContainersIfNeeded} would only log a NoAuth.
     */
    void createElectionContainer(String latchPath) throws Exception {
        try {
            zk.create(latchPath, null, CreateMode.CONTAINER, acl(Layout.Kind.LATCH), null, false);
        } catch (KeeperException.NodeExistsException present) {
            // the election is under way
        }
    }

    /**
     * {@code exists} on a latch node: whether a lease holder is still in the election; watched
     * when a watcher is given (it fires when the holder leaves).
     */
    boolean latchNodeExists(String latchNode, Watcher watcher) throws Exception {
        return (watcher == null ? zk.exists(latchNode, null)
                : zk.exists(latchNode, watcher)) != null;
    }

    /**
     * Whether ZooKeeper lets this identity join the election under {@code latchPath}, asked of
     * ZooKeeper itself: {@code create} an ephemeral probe node there and {@code delete} it. Curator's
     * LeaderLatch only logs a failed create, so a contender whose election node does not appear
     * asks this instead of guessing from elapsed time (a blocked event thread delays the node too).
     * The probe's name sorts after every election node, so it never takes the lead.
     *
     * @return false when the create was refused with NoAuth
     */
    boolean mayJoinElection(String latchPath, String attempt) throws Exception {
        String probe = latchPath + "/" + attempt + "-latch-~probe";
        try {
            zk.create(probe, null, CreateMode.EPHEMERAL, acl(Layout.Kind.ELECTION_NODE), null, false);
        } catch (KeeperException.NoAuthException denied) {
            return false;
        } catch (KeeperException.NodeExistsException leftOver) {
            // an earlier probe of ours whose delete failed: permitted all the same
        }
        try {
            zk.delete(probe, -1);
        } catch (KeeperException.NoNodeException | KeeperException.NoAuthException e) {
            // gone already, or deletes not permitted: it goes with the session
        }
        return true;
    }

    // ---- lease ------------------------------------------------------------------------------

    /** Why a lease write did not happen. */
    enum LeaseRefusal {
        /** Someone wrote the scope first (the caller was fenced, or lost a race). */
        VERSION_MOVED,
        /** The caller's election node is gone: its session ended, or the key was deleted (another incarnation). */
        ELECTION_NODE_GONE,
        /** The scope znode is gone. */
        SCOPE_GONE
    }

    /**
     * A lease write's result: the new token, or why there is none.
     *
     * @param czxid the scope znode's creation zxid (its incarnation, which names its armed record); 0 when refused
     */
    record LeaseWrite(FencingToken token, long czxid, LeaseRefusal refusal) {
        boolean written() {
            return token != null;
        }
    }

    /**
     * {@code multi(check(electionNode, 0), setData(scope, lease, version))}: takes, renews or
     * releases the lease with a compare-and-set on the scope znode's version, in the incarnation
     * of the scope that holds {@code electionNode}. A retry after a connection loss that finds
     * BadVersion re-reads: if the znode now holds exactly our lease at {@code version + 1}, the
     * write was ours.
     */
    LeaseWrite writeLease(String scopePath, int expectedVersion, Records.Scope scope, String electionNode) throws Exception {
        byte[] data = Records.scope(scope);
        try {
            List<OpResult> results = zk.multi(List.of(
                    zk.opCheck(electionNode, 0),
                    zk.opSetData(scopePath, data, expectedVersion)));
            Stat stat = statOf(results.get(1));
            saw(stat);
            return new LeaseWrite(new FencingToken(stat.getVersion(), stat.getMzxid()), stat.getCzxid(), null);
        } catch (KeeperException e) {
            int failed = failedOp(e);
            KeeperException.Code code = failedCode(e);
            if (failed == 0 && code == KeeperException.Code.NONODE) {
                return new LeaseWrite(null, 0, LeaseRefusal.ELECTION_NODE_GONE);
            }
            if (code == KeeperException.Code.NONODE) {
                return new LeaseWrite(null, 0, LeaseRefusal.SCOPE_GONE);
            }
            if (code != KeeperException.Code.BADVERSION) {
                throw e;
            }
            Stat stat = new Stat();
            byte[] now = zk.getData(scopePath, stat, null);
            saw(stat);
            if (stat.getVersion() == expectedVersion + 1 && Arrays.equals(now, data)) {
                return new LeaseWrite(new FencingToken(stat.getVersion(), stat.getMzxid()), stat.getCzxid(), null); // our own, retried
            }
            return new LeaseWrite(null, 0, LeaseRefusal.VERSION_MOVED);
        }
    }

    // ---- arming -----------------------------------------------------------------------------

    /** Why arming did not happen, or that its result is unknown. */
    enum ArmRefusal {
        /** The namespace's genesis id is gone: wiped or re-initialised. */
        NAMESPACE_REPLACED,
        /** The executor's election node is gone: its session ended or the key was deleted. */
        ELECTION_NODE_GONE,
        /** The scope's version moved: the lease was taken over. */
        FENCED,
        /** The scope znode is gone. */
        SCOPE_GONE,
        /**
         * The scope's armed record exists already: someone else armed it (only a forged record, made
         * with the worker credential, can be there while this executor holds the lease).
         */
        ALREADY_ARMED,
        /** No reply (connection loss, session expiry, timeout): it counts as armed. */
        RESULT_UNKNOWN,
        /** ZooKeeper refused for another reason (permission, say). */
        ERROR
    }

    /**
     * The arming write's result.
     *
     * @param armedVersion the scope's version after arming, or -1
     * @param refusal      null when armed
     * @param code         ZooKeeper's error code when refused or unknown
     * @param interrupted  whether the calling thread was interrupted while it waited for the reply
     *                     (the flag is restored)
     */
    record Arming(int armedVersion, long zxid, ArmRefusal refusal, KeeperException.Code code, boolean interrupted) {
        boolean armed() {
            return refusal == null;
        }
    }

    /**
     * The linearization point: one {@code multi} that checks the namespace's genesis id and the
     * executor's election node (this incarnation), moves the scope znode from the executor's
     * token to "armed" (a versioned {@code setData}: the token is checked, and no lease takeover
     * can slip in afterwards), and creates the immutable armed record {@code KEY/n/armed} with its
     * child {@code armed/outcome} (empty until the outcome is written). The armed record is created
     * once: only one arming can ever succeed, whatever anyone wrote into the scope's data
     * ({@link Custody}); and with a child it can never be removed. It commits to {@code secret},
     * which the outcome reveals. Sent once, asynchronously, on the raw ZooKeeper handle: Curator
     * would retry it, and a connection loss here must count as armed (the caller never invokes the
     * action then). The reply is awaited even through an interrupt, so the caller always learns
     * whether it armed: an interrupt cannot turn a successful arming into an unknown one.
     *
     * @param replyBound how long to wait for a reply before giving up (it counts as armed then)
     */
    Arming arm(String scopePath, FencingToken token, String electionNode, String genesisId, Records.Scope armedScope,
               KeyHistory.Armed armed, String secret, java.time.Duration replyBound) throws Exception {
        // Sent once, never retried (ZooKeeperOps.multiOnce).
        List<Op> ops = List.of(
                zk.opCheck(Layout.genesisMarker(namespace, genesisId), 0),
                zk.opCheck(electionNode, 0),
                zk.opSetData(scopePath, Records.scope(armedScope), token.version()),
                zk.opCreate(Layout.armed(scopePath), Records.armed(armed, secret), CreateMode.PERSISTENT, acl(Layout.Kind.ARMED)),
                zk.opCreate(Layout.outcome(scopePath), new byte[0], CreateMode.PERSISTENT, acl(Layout.Kind.OUTCOME)));
        ZooKeeperOps.MultiReply reply = zk.multiOnce(ops, replyBound);
        Arming result = arming(reply.rc(), reply.results());
        boolean interrupted = reply.interrupted();
        if (interrupted) {
            Thread.currentThread().interrupt();
        }
        if (result.armed()) {
            zxids.accept(result.zxid());
        }
        return new Arming(result.armedVersion(), result.zxid(), result.refusal(), result.code(), interrupted);
    }

    private static Arming arming(int rc, List<OpResult> results) {
        KeeperException.Code code = KeeperException.Code.get(rc);
        if (code == KeeperException.Code.OK) {
            Stat stat = ((OpResult.SetDataResult) results.get(2)).getStat();
            return new Arming(stat.getVersion(), stat.getMzxid(), null, code, false);
        }
        int failed = failedOp(results);
        KeeperException.Code opCode = failed < 0 ? code
                : KeeperException.Code.get(((OpResult.ErrorResult) results.get(failed)).getErr());
        ArmRefusal refusal;
        if (code == KeeperException.Code.CONNECTIONLOSS || code == KeeperException.Code.SESSIONEXPIRED
                || code == KeeperException.Code.OPERATIONTIMEOUT || code == KeeperException.Code.SESSIONMOVED
                || code == KeeperException.Code.REQUESTTIMEOUT) {
            refusal = ArmRefusal.RESULT_UNKNOWN;
        } else if (failed == 0 && opCode == KeeperException.Code.NONODE) {
            refusal = ArmRefusal.NAMESPACE_REPLACED;
        } else if (failed == 1 && opCode == KeeperException.Code.NONODE) {
            refusal = ArmRefusal.ELECTION_NODE_GONE;
        } else if (failed == 2 && opCode == KeeperException.Code.BADVERSION) {
            refusal = ArmRefusal.FENCED;
        } else if (failed == 2 && opCode == KeeperException.Code.NONODE) {
            refusal = ArmRefusal.SCOPE_GONE;
        } else if (failed == 3 && opCode == KeeperException.Code.NODEEXISTS) {
            refusal = ArmRefusal.ALREADY_ARMED;
        } else {
            refusal = ArmRefusal.ERROR;
        }
        return new Arming(-1, 0, refusal, opCode, false);
    }

    // ---- outcome ----------------------------------------------------------------------------

    /** What became of an outcome write. */
    enum OutcomeWrite {
        /** Written (or found already written by our own retried attempt). */
        RECORDED,
        /**
         * Another outcome is there: an operator's reconciliation took the scope's outcome first
         * (or one was forged with the worker credential); ours was not written.
         */
        ANOTHER_OUTCOME,
        /** Our armed record is gone: the key was deleted (and maybe recreated); ours was not written. */
        ARMED_RECORD_GONE
    }

    /**
     * {@code multi(check(electionNode, 0), setData(armed/outcome, outcome, 0) [, create KEY/n+1])}:
     * the outcome's one write (version 0 → 1: a reconciliation or any other write that came first
     * makes it fail), revealing the secret this executor's armed record committed to (so every
     * reader can tell it from a forgery), and for {@code not_sent} the next scope in the same
     * transaction, so waiters move on at once (that the outcome's write created the next scope is
     * what proves the next scope's opening). The check of the executor's election node binds the
     * write to the incarnation it armed (a recreated scope has no such node). When that node is gone
     * (the session ended, or the key was deleted), the armed record is read and must be this
     * executor's own (its commitment) before the write is sent without the check. The scope znode's
     * data is not checked: it decides nothing once armed, and a worker credential may rewrite it.
     * When an authorization already opened the next scope, the outcome is written without it.
     * Retried by Curator; a retry that finds the outcome written recognises its own secret.
     */
    OutcomeWrite recordOutcome(String keyPath, int scope, String electionNode, KeyHistory.OutcomeRecord outcome,
                               String secret) throws Exception {
        String scopePath = Layout.scope(keyPath, scope);
        String outcomePath = Layout.outcome(scopePath);
        boolean openNext = outcome.outcome() == Outcome.NOT_SENT;
        String bindTo = electionNode;
        while (true) {
            List<Op> ops = new ArrayList<>();
            if (bindTo != null) {
                ops.add(zk.opCheck(bindTo, 0));
            }
            int write = ops.size();
            ops.add(zk.opSetData(outcomePath, Records.outcome(outcome, secret), 0));
            if (openNext) {
                byte[] next = Records.scope(new Records.Scope("not_sent:" + scope, clock.instant(), null, false, false));
                ops.add(zk.opCreate(Layout.scope(keyPath, scope + 1), next, CreateMode.PERSISTENT, acl(Layout.Kind.SCOPE)));
            }
            try {
                saw(results(zk.multi(ops)));
                return OutcomeWrite.RECORDED;
            } catch (KeeperException e) {
                int failed = failedOp(e);
                if (bindTo != null && failed == 0) {
                    if (!armedByUs(scopePath, secret)) {
                        return OutcomeWrite.ARMED_RECORD_GONE;
                    }
                    bindTo = null; // our session's election node is gone, but the armed record is ours
                    continue;
                }
                if (failed == write && e instanceof KeeperException.NoNodeException) {
                    return OutcomeWrite.ARMED_RECORD_GONE;
                }
                if (failed == write && e instanceof KeeperException.BadVersionException) {
                    byte[] found = zk.getData(outcomePath, null, null);
                    return Records.decodeOutcome(outcomePath, found) instanceof Records.ExecutorOutcome mine
                            && secret.equals(mine.secret()) ? OutcomeWrite.RECORDED : OutcomeWrite.ANOTHER_OUTCOME;
                }
                if (failed == write + 1 && e instanceof KeeperException.NodeExistsException) {
                    openNext = false; // an authorization opened scope n+1 already: record the outcome alone
                    continue;
                }
                throw e;
            }
        }
    }

    /** {@code getData KEY/n/armed}: whether the scope's armed record is the one that committed to {@code secret}. */
    private boolean armedByUs(String scopePath, String secret) throws Exception {
        try {
            Records.ArmedData armed = Records.decodeArmed(Layout.armed(scopePath), zk.getData(Layout.armed(scopePath), null, null));
            return Records.commitment(secret).equals(armed.commitment());
        } catch (KeeperException.NoNodeException gone) {
            return false;
        }
    }

    // ---- redelivery authorizations -------------------------------------------------------

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
            Stat stat = new Stat();
            zk.create(path, Records.authorization(authorization), CreateMode.PERSISTENT, acl(Layout.Kind.AUTHORIZATION), stat,
                    false);
            saw(stat);
            return new Authorizing(path, true, null);
        } catch (KeeperException.NodeExistsException e) {
            AuthorizationView existing = readAuthorization(keyPath, n);
            boolean ours = existing.record() != null && existing.record().actor() != null
                    && authorization.actor().attempt().equals(existing.record().actor().attempt());
            return new Authorizing(path, ours, ours ? null : existing);
        }
    }

    /** What became of an attempt to open the next scope from an authorization. */
    enum Opening {
        /** This contender opened scope n+1. */
        OPENED,
        /** Scope n+1 exists already (another contender, or a not_sent outcome, opened it). */
        ALREADY_OPEN,
        /** The authorization or scope n changed since they were read: read again. */
        CHANGED
    }

    /**
     * {@code multi(check(after-n, its version), setData(scope n, as read, its version), create
     * KEY/n+1)}: the next scope, opened by the authorization for the consumed scope n, bound to both
     * as read (so an authorization of another incarnation of the key, or a scope changed since,
     * opens nothing). Moving scope n's version is what an operator's reconciliation of scope n
     * meets: exactly one of the two lands ({@link #reconcile}).
     */
    Opening openAuthorizedScope(String keyPath, ScopeView consumed, AuthorizationView authorization) throws Exception {
        int n = consumed.scope();
        byte[] data = Records.scope(new Records.Scope(Layout.AFTER_PREFIX + n, clock.instant(), null, false, false));
        try {
            saw(results(zk.multi(List.of(
                    zk.opCheck(authorization.path(), authorization.version()),
                    zk.opSetData(consumed.path(), Records.scope(consumed.data()), consumed.version()),
                    zk.opCreate(Layout.scope(keyPath, n + 1), data, CreateMode.PERSISTENT, acl(Layout.Kind.SCOPE))))));
            return Opening.OPENED;
        } catch (KeeperException e) {
            if (failedOp(e) == 2 && e instanceof KeeperException.NodeExistsException) {
                return Opening.ALREADY_OPEN;
            }
            if (e instanceof KeeperException.BadVersionException || e instanceof KeeperException.NoNodeException) {
                return Opening.CHANGED;
            }
            throw e;
        }
    }

    // ---- operators: reconciliation and retention ------------------------------------------

    /**
     * An operator's verdict that a consumed-unknown scope was delivered, decided by ZooKeeper
     * against everything that could race it. For a scope armed without outcome: {@code
     * multi(check(scope, version), setData(armed/outcome, sent_verified marker, 0), create
     * KEY/authorizations/reconciled-n)}: the outcome is written once (version 0 → 1), so either this
     * multi or the executor's own outcome lands, never both (a late {@code not_sent} can no longer
     * reopen the key; a {@code not_sent} that came first makes this one fail, and the scope is then
     * no longer consumed). For a {@code send_status_unknown} scope: {@code multi(check(scope,
     * version), check(armed/outcome, its version), create KEY/authorizations/reconciled-n)}. The scope version
     * check is what an authorization opening scope n+1 moves ({@link #openAuthorizedScope}): a
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
            outcomeOp = zk.opCreate(outcomePath, Records.reconciledMarker(scope.scope()), CreateMode.PERSISTENT, acl(Layout.Kind.RECORD));
        }
        try {
            saw(results(zk.multi(List.of(
                    zk.opCheck(scope.path(), scope.version()),
                    outcomeOp,
                    zk.opCreate(Layout.reconciliation(Layout.keyOfScope(scope.path()), scope.scope()),
                            Records.reconciliation(reconciliation), CreateMode.PERSISTENT, acl(Layout.Kind.RECORD))))));
            return true;
        } catch (KeeperException.BadVersionException | KeeperException.NoNodeException | KeeperException.NodeExistsException e) {
            return false;
        }
    }

    /**
     * {@code multi(check(latest scope, version), delete …)}: removes a consumed key's whole
     * subtree at once (children first), provided its latest scope is still what was read. Fails
     * (and removes nothing) when anything changed or someone is in an election under it.
     *
     * @param paths every znode of the key, children before parents, the key last
     * @return false when the key changed or is in use (nothing was removed)
     */
    boolean deleteKey(String latestScope, int latestVersion, List<String> paths) throws Exception {
        List<Op> ops = new ArrayList<>();
        ops.add(zk.opCheck(latestScope, latestVersion));
        for (String p : paths) {
            ops.add(zk.opDelete(p, -1));
        }
        try {
            zk.multi(ops);
            return true;
        } catch (KeeperException.BadVersionException | KeeperException.NoNodeException | KeeperException.NotEmptyException e) {
            return false;
        }
    }

    // ---- health check (oncegate doctor) ------------------------------------------------------

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
        String path = zk.create(Layout.probe(namespace), new byte[0], CreateMode.EPHEMERAL_SEQUENTIAL, acl(Layout.Kind.KEYS),
                stat, false);
        Instant received = clock.instant();
        saw(stat);
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

    /** {@code getACL PATH}; null when the znode does not exist. */
    List<ACL> readAcl(String path) throws Exception {
        try {
            return zk.getAcl(path, null);
        } catch (KeeperException.NoNodeException e) {
            return null;
        }
    }

    /** {@code getChildren PATH}, sorted; empty when the znode does not exist. */
    List<String> children(String path) throws Exception {
        try {
            List<String> names = new ArrayList<>(zk.getChildren(path, null));
            names.sort(null);
            return names;
        } catch (KeeperException.NoNodeException e) {
            return List.of();
        }
    }

    // ---- multi results ---------------------------------------------------------------------

    /** The highest zxid a successful multi reveals (from its setData/check stats; creates carry none). */
    private static Stat results(List<OpResult> results) {
        Stat best = null;
        for (OpResult r : results) {
            Stat stat = statOf(r);
            if (stat != null && (best == null || stat.getMzxid() > best.getMzxid())) {
                best = stat;
            }
        }
        return best;
    }

    /** The stat an op's result carries: a setData's, a create's (when the server sent one); null for the others. */
    private static Stat statOf(OpResult r) {
        if (r instanceof OpResult.SetDataResult set) {
            return set.getStat();
        }
        return r instanceof OpResult.CreateResult created ? created.getStat() : null;
    }

    /** The index of the op that made a multi fail, or -1 when the exception carries no results. */
    static int failedOp(KeeperException e) {
        return e.getResults() == null ? -1 : failedOp(e.getResults());
    }

    private static int failedOp(List<OpResult> results) {
        if (results == null) {
            return -1;
        }
        for (int i = 0; i < results.size(); i++) {
            if (results.get(i) instanceof OpResult.ErrorResult err) {
                int code = err.getErr();
                if (code != KeeperException.Code.OK.intValue()
                        && code != KeeperException.Code.RUNTIMEINCONSISTENCY.intValue()) {
                    return i;
                }
            }
        }
        return -1;
    }

    private static KeeperException.Code failedCode(KeeperException e) {
        int failed = failedOp(e);
        return failed < 0 ? e.code()
                : KeeperException.Code.get(((OpResult.ErrorResult) e.getResults().get(failed)).getErr());
    }
}
