package dev.oncegate;

import java.time.Clock;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.api.transaction.CuratorOp;
import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.Op;
import org.apache.zookeeper.OpResult;
import org.apache.zookeeper.Watcher;
import org.apache.zookeeper.data.Stat;

/**
 * Every ZooKeeper operation of the protocol, in one place. Each method names the operation it
 * performs; each write is conditional (a create that fails on an existing node, or a versioned
 * {@code setData}/{@code check}); the fencing token is the scope znode's version and is never
 * -1. Stateless apart from its collaborators; thread-safe.
 *
 * <h2>Writes, in protocol order</h2>
 * <ol>
 *   <li>{@link #createGenesis}: {@code create NS/genesis} once.</li>
 *   <li>{@link #ensureKey}: {@code multi(create KEY, create KEY/authorizations, create KEY/0)}.</li>
 *   <li>{@link #takeLease} / {@link #renewLease} / {@link #releaseLease}: {@code setData(scope, v)}.</li>
 *   <li>{@link #arm}: {@code multi(check genesis v0, setData(scope armed, v), create armed)}, sent
 *       once on the raw ZooKeeper handle, never retried: a connection loss here counts as armed.</li>
 *   <li>{@link #recordOutcome}: {@code multi(check(scope, v+1), create outcome [, create KEY/n+1])},
 *       retried by Curator; a retry that finds the outcome recognises its own attempt id.</li>
 *   <li>{@link #openAuthorizedScope}: {@code create KEY/n+1} naming the authorization it uses.</li>
 * </ol>
 * Permanent records are plain persistent znodes: never TTL, ephemeral or container children.
 */
final class ScopeProtocol {

    private final CuratorFramework client;
    private final String namespace;
    private final Clock clock;

    ScopeProtocol(CuratorFramework client, String namespace, Clock clock) {
        this.client = client;
        this.namespace = namespace;
        this.clock = clock;
    }

    String namespace() {
        return namespace;
    }

    // ---- namespace ------------------------------------------------------------------------

    /** {@code getData NS/genesis}; empty when the namespace was never initialised. */
    Optional<Genesis> readGenesis() throws Exception {
        String path = Layout.genesis(namespace);
        try {
            return Optional.of(Records.decodeGenesis(path, client.getData().forPath(path)));
        } catch (KeeperException.NoNodeException e) {
            return Optional.empty();
        }
    }

    /** {@code create NS/genesis} (parents persistent); an existing genesis is kept and returned. */
    GenesisResult createGenesis() throws Exception {
        String path = Layout.genesis(namespace);
        Optional<Genesis> existing = readGenesis();
        if (existing.isPresent()) {
            return new GenesisResult(existing.get(), false);
        }
        Genesis genesis = new Genesis(java.util.UUID.randomUUID().toString(), clock.instant());
        try {
            client.create().creatingParentsIfNeeded().withMode(CreateMode.PERSISTENT)
                    .forPath(path, Records.genesis(genesis));
            return new GenesisResult(genesis, true);
        } catch (KeeperException.NodeExistsException e) {
            // Another init won the race (or our own create was applied before a lost reply).
            Genesis winner = readGenesis().orElseThrow(() -> e);
            return new GenesisResult(winner, winner.id().equals(genesis.id()));
        }
    }

    record GenesisResult(Genesis genesis, boolean created) {
    }

    // ---- key --------------------------------------------------------------------------------

    /**
     * {@code getData KEY}; when absent, {@code create} the bucket parents (persistent) and
     * {@code multi(create KEY, create KEY/authorizations, create KEY/0)}. Read first, since failed
     * creates are still logged transactions. Validates an existing key record against the key.
     */
    void ensureKey(EffectKey key) throws Exception {
        String keyPath = Layout.keyPath(namespace, key.key());
        try {
            checkKeyRecord(key, keyPath, client.getData().forPath(keyPath));
            return;
        } catch (KeeperException.NoNodeException absent) {
            // first contender for this effect: create it below
        }
        String bucket = Layout.bucket(namespace, key.key());
        try {
            client.create().creatingParentsIfNeeded().withMode(CreateMode.PERSISTENT).forPath(bucket);
        } catch (KeeperException.NodeExistsException exists) {
            // shared bucket: expected
        }
        Instant now = clock.instant();
        byte[] scope0 = Records.scope(new Records.Scope("initial", now, null, false));
        try {
            client.transaction().forOperations(
                    client.transactionOp().create().withMode(CreateMode.PERSISTENT).forPath(keyPath, Records.key(key, now)),
                    client.transactionOp().create().withMode(CreateMode.PERSISTENT).forPath(Layout.authorizations(keyPath), new byte[0]),
                    client.transactionOp().create().withMode(CreateMode.PERSISTENT).forPath(Layout.scope(keyPath, 0), scope0));
        } catch (KeeperException.NodeExistsException raced) {
            checkKeyRecord(key, keyPath, client.getData().forPath(keyPath));
        }
    }

    private static void checkKeyRecord(EffectKey key, String keyPath, byte[] data) {
        Records.KeyRecord r = Records.decodeKey(keyPath, data);
        if (!r.sha256().equals(key.sha256()) || !r.provider().equals(key.destination().provider())
                || !r.identity().equals(key.destination().identity().wireName())
                || !r.destination().equals(key.destination().id())) {
            throw new UnreadableRecordException(keyPath, "the key record names another effect");
        }
    }

    // ---- reading ----------------------------------------------------------------------------

    /** {@code getChildren KEY}: the highest scope number (the key's current scope). */
    int latestScope(String keyPath) throws Exception {
        int latest = -1;
        for (String child : client.getChildren().forPath(keyPath)) {
            latest = Math.max(latest, Layout.scopeNumber(child));
        }
        if (latest < 0) {
            throw new UnreadableRecordException(keyPath, "the key has no scope 0");
        }
        return latest;
    }

    /**
     * Reads scope {@code n}: {@code exists outcome} (watched when a watcher is given, so a waiter
     * learns the outcome without becoming leader), {@code getData outcome} when present,
     * {@code getData scope} (watched: lease changes and arming), and {@code getData armed} when
     * the scope says armed and has no outcome yet (or always, for inspection).
     *
     * @throws KeeperException.NoNodeException when the scope does not exist
     */
    ScopeView readScope(String keyPath, int n, Watcher watcher) throws Exception {
        return readScope(keyPath, n, watcher, null);
    }

    /** {@link #readScope(String, int, Watcher)} that also hands back each znode's raw data, by path. */
    ScopeView readScope(String keyPath, int n, Watcher watcher, Map<String, byte[]> raw) throws Exception {
        String scopePath = Layout.scope(keyPath, n);
        String outcomePath = Layout.outcome(scopePath);
        Records.OutcomeRecord outcome = null;
        Stat outcomeStat = watcher == null ? client.checkExists().forPath(outcomePath)
                : client.checkExists().usingWatcher(watcher).forPath(outcomePath);
        if (outcomeStat != null) {
            byte[] bytes = client.getData().forPath(outcomePath);
            keep(raw, outcomePath, bytes);
            outcome = Records.decodeOutcome(outcomePath, bytes);
        }
        Stat stat = new Stat();
        byte[] data = watcher == null || outcome != null
                ? client.getData().storingStatIn(stat).forPath(scopePath)
                : client.getData().storingStatIn(stat).usingWatcher(watcher).forPath(scopePath);
        keep(raw, scopePath, data);
        Records.Scope scope = Records.decodeScope(scopePath, data);
        if (outcome != null && !scope.armed() && outcome.outcome() != Outcome.NOT_SENT) {
            throw new UnreadableRecordException(outcomePath, "an outcome other than not_sent on a scope never armed");
        }
        // The armed record is evidence while no outcome exists; once one does, it is read only for inspection.
        Records.Armed armed = null;
        if (scope.armed() && (outcome == null || raw != null)) {
            String armedPath = Layout.armed(scopePath);
            try {
                byte[] bytes = client.getData().forPath(armedPath);
                keep(raw, armedPath, bytes);
                armed = Records.decodeArmed(armedPath, bytes);
            } catch (KeeperException.NoNodeException e) {
                throw new UnreadableRecordException(scopePath, "the scope says armed but has no armed znode");
            }
        }
        return new ScopeView(n, scopePath, scope, stat.getVersion(), stat.getMzxid(), armed, outcome);
    }

    private static void keep(Map<String, byte[]> raw, String path, byte[] data) {
        if (raw != null) {
            raw.put(path, data);
        }
    }

    /** {@code exists} on a latch node: whether a lease holder is still in the election. */
    boolean latchNodeExists(String latchNode) throws Exception {
        return client.checkExists().forPath(latchNode) != null;
    }

    // ---- lease ------------------------------------------------------------------------------

    /**
     * {@code setData(scope, lease, version)}: takes, renews or releases the lease with a
     * compare-and-set on the scope znode's version. Returns the new token. A retry after a
     * connection loss that finds BadVersion re-reads: if the znode now holds exactly our lease
     * at {@code version + 1}, the write was ours.
     *
     * @throws KeeperException.BadVersionException when someone else wrote the scope first (fenced)
     */
    FencingToken writeLease(String scopePath, int expectedVersion, Records.Scope scope) throws Exception {
        byte[] data = Records.scope(scope);
        try {
            Stat stat = client.setData().withVersion(expectedVersion).forPath(scopePath, data);
            return new FencingToken(stat.getVersion(), stat.getMzxid());
        } catch (KeeperException.BadVersionException e) {
            Stat stat = new Stat();
            byte[] now = client.getData().storingStatIn(stat).forPath(scopePath);
            if (stat.getVersion() == expectedVersion + 1 && java.util.Arrays.equals(now, data)) {
                return new FencingToken(stat.getVersion(), stat.getMzxid());
            }
            throw e;
        }
    }

    // ---- arming -----------------------------------------------------------------------------

    /**
     * The linearization point: one {@code multi} that checks the namespace's genesis, moves the
     * scope znode from the executor's token to "armed" (a versioned {@code setData}, so no lease
     * takeover can slip in before the outcome), and creates the immutable armed znode. Sent once
     * on the raw ZooKeeper handle: Curator would retry it, and a connection loss here must count
     * as armed (the caller never invokes the action then). Returns the scope's version after arming.
     */
    int arm(String scopePath, FencingToken token, Records.Scope armedScope, Records.Armed armed) throws Exception {
        // Built as Curator ops (so the client's ACL provider applies), sent once on the raw handle.
        List<Op> ops = List.of(
                client.transactionOp().check().withVersion(0).forPath(Layout.genesis(namespace)).get(),
                client.transactionOp().setData().withVersion(token.version()).forPath(scopePath, Records.scope(armedScope)).get(),
                client.transactionOp().create().withMode(CreateMode.PERSISTENT).forPath(Layout.armed(scopePath), Records.armed(armed)).get());
        List<OpResult> results = client.getZookeeperClient().getZooKeeper().multi(ops);
        return ((OpResult.SetDataResult) results.get(1)).getStat().getVersion();
    }

    // ---- outcome ----------------------------------------------------------------------------

    /**
     * {@code multi(check(scope, armedVersion), create outcome [, create KEY/n+1])}: the immutable
     * outcome, and for {@code not_sent} the next scope in the same transaction, so waiters move
     * on at once. Retried by Curator; a retry that meets an existing outcome returns whether it
     * carries our attempt id.
     */
    boolean recordOutcome(String keyPath, int scope, int armedVersion, Records.OutcomeRecord outcome) throws Exception {
        String scopePath = Layout.scope(keyPath, scope);
        String outcomePath = Layout.outcome(scopePath);
        List<CuratorOp> ops = new ArrayList<>();
        ops.add(client.transactionOp().check().withVersion(armedVersion).forPath(scopePath));
        ops.add(client.transactionOp().create().withMode(CreateMode.PERSISTENT).forPath(outcomePath, Records.outcome(outcome)));
        if (outcome.outcome() == Outcome.NOT_SENT) {
            byte[] next = Records.scope(new Records.Scope("not_sent:" + scope, clock.instant(), null, false));
            ops.add(client.transactionOp().create().withMode(CreateMode.PERSISTENT)
                    .forPath(Layout.scope(keyPath, scope + 1), next));
        }
        try {
            client.transaction().forOperations(ops);
            return true;
        } catch (KeeperException.NodeExistsException e) {
            Records.OutcomeRecord found = Records.decodeOutcome(outcomePath, client.getData().forPath(outcomePath));
            return found.by().attempt().equals(outcome.by().attempt());
        }
    }

    // ---- redelivery authorizations -------------------------------------------------------

    /**
     * The oldest authorization no scope has used yet, if any: {@code getChildren
     * KEY/authorizations}, then {@code getData} of each scope opened by an authorization.
     * Only called on a consumed key, so the common path never lists anything.
     */
    Optional<String> unusedAuthorization(String keyPath, int latest) throws Exception {
        String authPath = Layout.authorizations(keyPath);
        Stat stat = client.checkExists().forPath(authPath);
        if (stat == null) {
            throw new UnreadableRecordException(keyPath, "the key has no authorizations znode");
        }
        if (stat.getNumChildren() == 0) {
            return Optional.empty();
        }
        List<String> names = new ArrayList<>(client.getChildren().forPath(authPath));
        names.sort(null);
        Set<String> used = new HashSet<>();
        for (int n = 1; n <= latest; n++) {
            String scopePath = Layout.scope(keyPath, n);
            used.add(Records.decodeScope(scopePath, client.getData().forPath(scopePath)).opened());
        }
        for (String name : names) {
            if (!used.contains(name)) {
                Records.decodeAuthorization(authPath + "/" + name, client.getData().forPath(authPath + "/" + name));
                return Optional.of(name);
            }
        }
        return Optional.empty();
    }

    /** {@code create KEY/n} opened by an authorization; a contender that loses the race just re-reads. */
    void openAuthorizedScope(String keyPath, int n, String authorization) throws Exception {
        byte[] data = Records.scope(new Records.Scope(authorization, clock.instant(), null, false));
        try {
            client.create().withMode(CreateMode.PERSISTENT).forPath(Layout.scope(keyPath, n), data);
        } catch (KeeperException.NodeExistsException raced) {
            // another contender opened it: the caller re-reads the latest scope
        }
    }
}
