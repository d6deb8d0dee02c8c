package dev.oncegate;

import java.time.Clock;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.LongConsumer;
import java.util.function.ObjIntConsumer;
import java.util.function.Supplier;

import org.apache.curator.framework.CuratorFramework;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.Op;
import org.apache.zookeeper.OpResult;
import org.apache.zookeeper.data.ACL;
import org.apache.zookeeper.data.Stat;

/**
 * Every ZooKeeper operation of the protocol, in three rooms named after who performs it:
 * <ul>
 *   <li>{@link ScopeReads}: the reads, and the reader's side of the one {@link ScopeDecoder};</li>
 *   <li>{@link ExecutorWrites}: what a worker writes (the key, its election, the lease, the arming,
 *       the outcome, a scope opened from an authorization);</li>
 *   <li>{@link OperatorWrites}: what an operator or admin writes (the genesis, the roles, authorizations,
 *       reconciliations, retention's deletes): "what may an operator write" is that one file.</li>
 * </ul>
 * This class holds what they share: the ZooKeeper seam, the namespace, the clock, the rollback
 * witness every revealed zxid goes to, the role ACLs, and the last genesis decoded. Each method
 * names the operation it performs; each write is conditional (a create that fails on an existing
 * node, or a versioned {@code setData}/{@code check}); the fencing token is the scope znode's
 * version and is never -1. Stateless apart from its collaborators and the last genesis it decoded
 * (an immutable pair of bytes and record, replaced atomically); thread-safe, and so are its rooms.
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
 *   <li>{@link OperatorWrites#createGenesis}: {@code multi(create NS/genesis, create NS/genesis/ID)} once.</li>
 *   <li>{@link ExecutorWrites#createKey}: {@code multi(check NS/genesis/ID, check(NS/genesis, roles epoch), [create BUCKET1,]
 *       [create BUCKET2,] create KEY, create KEY/authorizations, create KEY/0, create KEY/0/latch (container))}, the
 *       bucket levels that the key's read found missing; a bucket that appeared or vanished since is sent again or
 *       left out; a roles epoch that moved since is read and the multi sent again with its ACLs.</li>
 *   <li>{@link ExecutorWrites#writeLease}: {@code multi(check ELECTION-NODE, setData(scope, v))} to take, renew or release.</li>
 *   <li>{@link ExecutorWrites#arm}: {@code multi(check NS/genesis/ID, check ELECTION-NODE, setData(scope armed, v),
 *       create KEY/n/armed, create KEY/n/armed/outcome (empty))}, sent once on the raw ZooKeeper handle,
 *       never retried: a connection loss here counts as armed. The create-once armed record is the
 *       barrier: one arming per scope.</li>
 *   <li>{@link ExecutorWrites#recordOutcome}: {@code multi(check ELECTION-NODE, setData(armed/outcome, 0) [, create
 *       KEY/n+1])}, retried by Curator; a retry that finds the outcome written recognises its own secret.</li>
 *   <li>{@link OperatorWrites#authorize}: {@code create KEY/authorizations/after-n} (an operator's).</li>
 *   <li>{@link ExecutorWrites#openAuthorizedScope}: {@code multi(check after-n, setData(scope n, v), create KEY/n+1)}.</li>
 *   <li>{@link OperatorWrites#reconcile}: {@code multi(check(scope n, v), setData(armed/outcome, 0) | check(armed/outcome, 1),
 *       create KEY/authorizations/reconciled-n)} (an operator's).</li>
 * </ol>
 * The arming, the outcome, an authorization, the authorized opening, a reconciliation and gc's delete also
 * carry, last, the backlog index's entry ops when the namespace has an index ({@link BacklogIndex}: created in
 * the arming, moved to {@code unknown} or removed by the outcome, and so on); when only those fail, the
 * multi is sent again without them ({@link #multiWithIndex}). No read that decides anything reads the index.
 * Permanent records are plain persistent znodes: never TTL, ephemeral or container children.
 * Every zxid a read or write reveals goes to the rollback witness.
 */
final class ScopeProtocol {

    final ZooKeeperOps zk;
    private final String namespace;
    final Clock clock;
    final LongConsumer zxids;
    final Supplier<Acls> acls;
    private final ObjIntConsumer<Genesis> genesisSeen;
    /** The genesis bytes last decoded and their record: every enter reads the genesis, which rarely changes. */
    private final AtomicReference<DecodedGenesis> lastGenesis = new AtomicReference<>();
    private final ScopeReads reads;
    private final ExecutorWrites executor;
    private final OperatorWrites operator;
    /**
     * Whether the namespace has a backlog index, as last seen ({@link BacklogIndex}): it decides only whether
     * writes carry entry ops, never anything a reader concludes.
     */
    private volatile boolean indexed;

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
        this.reads = new ScopeReads(this);
        this.executor = new ExecutorWrites(this);
        this.operator = new OperatorWrites(this);
    }

    /** The reads, and the reader's side of the scope decoder. */
    ScopeReads reads() {
        return reads;
    }

    /** What a worker writes (key, election, lease, arming, outcome, an authorized scope). */
    ExecutorWrites executor() {
        return executor;
    }

    /** What an operator or admin writes (genesis, roles, authorizations, reconciliations, retention). */
    OperatorWrites operator() {
        return operator;
    }

    /** The ACL of a znode of this kind under the namespace's roles. */
    List<ACL> acl(Layout.Kind kind) {
        return acls.get().forKind(kind);
    }

    String namespace() {
        return namespace;
    }

    /** Whether the namespace had a backlog index when last seen (a read of a key, an operator's check). */
    boolean indexed() {
        return indexed;
    }

    /** A read saw whether the backlog index exists. */
    void indexSeen(boolean present) {
        indexed = present;
    }

    /**
     * {@code multi(ops…, index…)}: a protocol write with the backlog index's entry ops last. When one of
     * those fails (its bucket is gone, an entry was forged beforehand or removed meanwhile), the multi is
     * sent again without that op (without every create, when the index itself is gone), so the others
     * still land: the index never fails or changes a protocol write, it only misses an entry
     * ({@link BacklogIndex}). A failure of one of {@code ops} is thrown as before, results and all.
     */
    List<OpResult> multiWithIndex(List<Op> ops, List<Op> index) throws Exception {
        List<Op> pending = new ArrayList<>(index);
        while (true) {
            if (pending.isEmpty()) {
                return zk.multi(ops);
            }
            List<Op> all = new ArrayList<>(ops);
            all.addAll(pending);
            try {
                return zk.multi(all);
            } catch (KeeperException e) {
                int failed = failedOp(e);
                if (failed < ops.size()) {
                    throw e;
                }
                indexOpFailed(all.get(failed), failedCode(e));
                pending.remove(failed - ops.size());
                if (!indexed) {
                    pending.removeIf(op -> op.getType() == org.apache.zookeeper.ZooDefs.OpCode.create);
                }
            }
        }
    }

    /** An entry op failed in a multi: a create without its bucket means the index is gone (an admin removed it). */
    void indexOpFailed(Op op, KeeperException.Code code) {
        if (op.getType() == org.apache.zookeeper.ZooDefs.OpCode.create && code == KeeperException.Code.NONODE) {
            indexed = false;
        }
    }

    void saw(Stat stat) {
        if (stat != null) {
            zxids.accept(Math.max(stat.getMzxid(), Math.max(stat.getPzxid(), stat.getCzxid())));
        }
    }

    /** A read returned the genesis: its zxids to the witness, the genesis and its roles epoch to {@code genesisSeen}. */
    void sawGenesis(Genesis genesis, Stat stat) {
        saw(stat);
        genesisSeen.accept(genesis, stat.getVersion());
    }

    /**
     * {@link Records#decodeGenesis}, skipped when the bytes are those decoded last time (the same
     * bytes decode to the same record; decoding, its time above all, cost an enter a tenth of its CPU).
     */
    Genesis decodeGenesis(String path, byte[] data) {
        DecodedGenesis last = lastGenesis.get();
        if (last != null && Arrays.equals(last.data(), data)) {
            return last.genesis();
        }
        Genesis genesis = Records.decodeGenesis(path, data);
        lastGenesis.set(new DecodedGenesis(data, genesis));
        return genesis;
    }

    /** The highest zxid a successful multi reveals (from its setData/check stats; creates carry none). */
    static Stat results(List<OpResult> results) {
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
    static Stat statOf(OpResult r) {
        if (r instanceof OpResult.SetDataResult set) {
            return set.getStat();
        }
        return r instanceof OpResult.CreateResult created ? created.getStat() : null;
    }

    /** The index of the op that made a multi fail, or -1 when the exception carries no results. */
    static int failedOp(KeeperException e) {
        return e.getResults() == null ? -1 : failedOp(e.getResults());
    }

    static int failedOp(List<OpResult> results) {
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

    static KeeperException.Code failedCode(KeeperException e) {
        int failed = failedOp(e);
        return failed < 0 ? e.code()
                : KeeperException.Code.get(((OpResult.ErrorResult) e.getResults().get(failed)).getErr());
    }
}
