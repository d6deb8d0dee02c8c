package dev.oncegate;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Optional;

import org.apache.curator.utils.ZKPaths;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.Op;
import org.apache.zookeeper.OpResult;
import org.apache.zookeeper.Watcher;
import org.apache.zookeeper.data.ACL;
import org.apache.zookeeper.data.Stat;

/**
 * The protocol's reads (the genesis, a key, a scope, the chain of custody below it, an
 * authorization, an election node) and the reader's side of the one scope decoder: each read
 * hands the znodes it got to {@link ScopeDecoder}, which decodes them and has {@link Custody} judge
 * them; a worker's read stops on the first contradiction. Every zxid a read reveals goes to the
 * rollback witness. Writes nothing (apart from removing an attempt's watches).
 *
 * <p>Stateless apart from its {@link ScopeProtocol}; thread-safe.
 */
final class ScopeReads {

    private final ScopeProtocol protocol;
    private final ZooKeeperOps zk;
    private final String namespace;

    ScopeReads(ScopeProtocol protocol) {
        this.protocol = protocol;
        this.zk = protocol.zk;
        this.namespace = protocol.namespace();
    }

    // ---- namespace ------------------------------------------------------------------------------

    /** {@code getData NS/genesis}; empty when the namespace was never initialised. */
    Optional<Genesis> readGenesis() throws Exception {
        String path = Layout.genesis(namespace);
        try {
            Stat stat = new Stat();
            Genesis genesis = Records.decodeGenesis(path, zk.getData(path, stat, null));
            protocol.sawGenesis(genesis, stat);
            return Optional.of(genesis);
        } catch (KeeperException.NoNodeException e) {
            return Optional.empty();
        }
    }

    /** {@code exists NS/genesis/ID}: whether the genesis carries its id as a path (namespaces from before 0.2 do not). */
    boolean genesisMarkerExists(String genesisId) throws Exception {
        return zk.exists(Layout.genesisMarker(namespace, genesisId), null) != null;
    }

    // ---- key and scope --------------------------------------------------------------------------

    private static void checkKeyRecord(EffectKey key, String keyPath, byte[] data) {
        KeyHistory.KeyRecord r = Records.decodeKey(keyPath, data);
        if (!r.sha256().equals(key.sha256()) || !r.provider().equals(key.destination().provider())
                || !r.identity().equals(key.destination().identity().wireName())
                || !r.destination().equals(key.destination().id())) {
            throw new UnreadableRecordException(keyPath, "the key record names another effect");
        }
    }

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
        return !protocol.acls.get().on();
    }

    /**
     * Everything a contender needs to decide about a key, in one round trip where possible: a
     * read-only {@code multi} of the genesis, both bucket levels, the key record (whose child
     * count gives the latest scope: {@code authorizations} and scopes {@code 0…n}) and scope 0
     * as {@link #readScopeOnce} reads it, and (last, a hint for this gate's writes only) whether the
     * namespace has a backlog index ({@link BacklogIndex}). A key whose latest scope is not 0 costs a second round
     * trip for that scope; its chain of custody is the caller's to check ({@link #verifyChain}).
     */
    KeyRead readKey(EffectKey key) throws Exception {
        String keyPath = Layout.keyPath(namespace, key.key());
        String bucket2 = Layout.bucket(namespace, key.key());
        String genesisPath = Layout.genesis(namespace);
        List<Op> ops = new ArrayList<>(List.of(getDataOp(genesisPath), getDataOp(ZKPaths.getPathAndNode(bucket2).getPath()),
                getDataOp(bucket2), getDataOp(keyPath)));
        ops.addAll(scopeOps(keyPath, 0));
        ops.add(getDataOp(BacklogIndex.root(namespace))); // last: a hint for this gate's writes, never for a decision
        List<OpResult> r = multiRead(ops);
        protocol.indexSeen(r.get(r.size() - 1) instanceof OpResult.GetDataResult);
        r = r.subList(0, r.size() - 1);
        OpResult.GetDataResult genesisResult = dataOrNull(r.get(0), genesisPath);
        Optional<Genesis> genesis = Optional.empty();
        if (genesisResult != null) {
            genesis = Optional.of(protocol.decodeGenesis(genesisPath, genesisResult.getData()));
            protocol.sawGenesis(genesis.get(), genesisResult.getStat());
        }
        boolean first = dataOrNull(r.get(1), ZKPaths.getPathAndNode(bucket2).getPath()) != null;
        boolean second = dataOrNull(r.get(2), bucket2) != null;
        OpResult.GetDataResult keyResult = dataOrNull(r.get(3), keyPath);
        if (keyResult == null) {
            return new KeyRead(genesis, first, second, 0, null);
        }
        checkKeyRecord(key, keyPath, keyResult.getData());
        protocol.saw(keyResult.getStat());
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
     * Scope {@code n}, watched, then {@link #readScopeOnce}'s read, so that a waiter learns each
     * change without polling: {@code getData scope} (a lease change), {@code getChildren scope} (the
     * arming, an outcome before schema 4) and {@code exists armed/outcome} (the outcome, which is a
     * write below the scope's children: the executor's, a reconciliation's marker, and with a
     * {@code not_sent} the opening of scope n+1 in the same multi). An authorization changes none of
     * them: the waiter's periodic re-read finds it.
     *
     * @throws UnreadableRecordException when the scope does not exist
     */
    ScopeRead readScope(String keyPath, int n, Watcher watcher) throws Exception {
        String scopePath = Layout.scope(keyPath, n);
        try {
            zk.getData(scopePath, null, watcher);
            zk.getChildren(scopePath, watcher);
            zk.exists(Layout.outcome(scopePath), watcher);
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
                protocol.saw(seen.getStat());
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
            protocol.saw(stat);
            return new ScopeDecoder.Znode(data == null ? new byte[0] : data, stat);
        } catch (KeeperException.NoNodeException e) {
            return null;
        }
    }

    // ---- chain of custody -----------------------------------------------------------------------

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
        Acls roles = protocol.acls.get();
        return roles.on() ? roles.authorizationsWeakness(zk.getAcl(Layout.authorizations(keyPath), null)) : null;
    }

    // ---- read-only multis -----------------------------------------------------------------------

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

    // ---- the key's scopes and authorizations ----------------------------------------------------

    /** {@code exists KEY}: the key znode's creation zxid, or 0 when it does not exist. */
    long keyZxid(String keyPath) throws Exception {
        Stat stat = zk.exists(keyPath, null);
        if (stat == null) {
            return 0;
        }
        protocol.saw(stat);
        return stat.getCzxid();
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
        protocol.saw(stat);
        return ScopeDecoder.authorization(path, n, stat, data);
    }

    // ---- election nodes and watches -------------------------------------------------------------

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
     * {@code exists} on a latch node: whether a lease holder is still in the election; watched
     * when a watcher is given (it fires when the holder leaves).
     */
    boolean latchNodeExists(String latchNode, Watcher watcher) throws Exception {
        return (watcher == null ? zk.exists(latchNode, null)
                : zk.exists(latchNode, watcher)) != null;
    }

    // ---- any znode ------------------------------------------------------------------------------

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
}
