package dev.oncegate;

import java.time.Clock;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

import org.apache.curator.utils.ZKPaths;
import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.Op;
import org.apache.zookeeper.OpResult;
import org.apache.zookeeper.ZooDefs;
import org.apache.zookeeper.data.ACL;
import org.apache.zookeeper.data.Stat;

/**
 * What a worker writes: the key with its first scope, its election container and probe, the
 * lease (take, renew, release), the arming, the outcome, and a scope opened from an operator's
 * authorization. Each write is conditional: a create that fails on an existing znode, or a
 * versioned {@code setData}/{@code check}; the fencing token is the scope znode's version and is
 * never -1; and each executor write is bound to the incarnation it was decided in (its election
 * node, the genesis id, its own armed record: see {@link ScopeProtocol}).
 *
 * <p>Stateless apart from its {@link ScopeProtocol}; thread-safe.
 */
final class ExecutorWrites {

    private final ScopeProtocol protocol;
    private final ZooKeeperOps zk;
    private final String namespace;
    private final Clock clock;

    ExecutorWrites(ScopeProtocol protocol) {
        this.protocol = protocol;
        this.zk = protocol.zk;
        this.namespace = protocol.namespace();
        this.clock = protocol.clock;
    }

    // ---- key ------------------------------------------------------------------------------------

    /**
     * {@link ScopeReads#readKey} and, when the key is absent, {@link #createKey}: the key exists afterwards
     * (created here or by a racing contender) and names this effect.
     *
     * @throws StopException namespace_replaced when the genesis id is gone
     */
    void ensureKey(EffectKey key, String genesisId) throws Exception {
        ScopeReads.KeyRead read = protocol.reads().readKey(key);
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
                protocol.saw(ScopeProtocol.results(zk.multi(ops)));
                return KeyCreation.CREATED;
            } catch (KeeperException e) {
                int failed = ScopeProtocol.failedOp(e);
                KeeperException.Code code = ScopeProtocol.failedCode(e);
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
        Acls shared = protocol.acls.get();
        if (shared.epoch() > stale) {
            return shared;
        }
        String path = Layout.genesis(namespace);
        Stat stat = new Stat();
        Genesis genesis;
        try {
            genesis = protocol.decodeGenesis(path, zk.getData(path, stat, null));
        } catch (KeeperException.NoNodeException e) {
            throw namespaceReplaced(genesisId, "creating key " + key.key());
        }
        if (!genesis.id().equals(genesisId)) {
            throw namespaceReplaced(genesisId, "creating key " + key.key());
        }
        protocol.sawGenesis(genesis, stat);
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

    // ---- election -------------------------------------------------------------------------------

    /**
     * {@code create} the scope's election container (a container: the server reaps it once empty)
     * with its ACL; an existing one is fine. Done before starting a LeaderLatch, whose own
     * {@code creatingParentContainersIfNeeded} would only log a NoAuth.
     */
    void createElectionContainer(String latchPath) throws Exception {
        try {
            zk.create(latchPath, null, CreateMode.CONTAINER, protocol.acl(Layout.Kind.LATCH), null, false);
        } catch (KeeperException.NodeExistsException present) {
            // the election is under way
        }
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
            zk.create(probe, null, CreateMode.EPHEMERAL, protocol.acl(Layout.Kind.ELECTION_NODE), null, false);
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

    // ---- lease ----------------------------------------------------------------------------------

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
            Stat stat = ScopeProtocol.statOf(results.get(1));
            protocol.saw(stat);
            return new LeaseWrite(new FencingToken(stat.getVersion(), stat.getMzxid()), stat.getCzxid(), null);
        } catch (KeeperException e) {
            int failed = ScopeProtocol.failedOp(e);
            KeeperException.Code code = ScopeProtocol.failedCode(e);
            if (failed == 0 && code == KeeperException.Code.NONODE) {
                return new LeaseWrite(null, 0, LeaseRefusal.ELECTION_NODE_GONE);
            }
            if (code == KeeperException.Code.NONODE) {
                return new LeaseWrite(null, 0, LeaseRefusal.SCOPE_GONE);
            }
            if (code != KeeperException.Code.BADVERSION) {
                throw e;
            }
            return recogniseLease(scopePath, expectedVersion, scope); // our own, retried?
        }
    }

    /**
     * Whether the scope now holds exactly {@code scope} at {@code expectedVersion + 1}: a lease write
     * whose reply was not seen (retried after a connection loss, or its wait interrupted) landed. The
     * read goes on the same session after the write, so ZooKeeper answers it after applying the write.
     * Refused with {@link LeaseRefusal#VERSION_MOVED} when it did not land (or someone wrote after it),
     * {@link LeaseRefusal#SCOPE_GONE} when the scope is gone.
     */
    LeaseWrite recogniseLease(String scopePath, int expectedVersion, Records.Scope scope) throws Exception {
        Stat stat = new Stat();
        byte[] now;
        try {
            now = zk.getData(scopePath, stat, null);
        } catch (KeeperException.NoNodeException e) {
            return new LeaseWrite(null, 0, LeaseRefusal.SCOPE_GONE);
        }
        protocol.saw(stat);
        if (stat.getVersion() == expectedVersion + 1 && Arrays.equals(now, Records.scope(scope))) {
            return new LeaseWrite(new FencingToken(stat.getVersion(), stat.getMzxid()), stat.getCzxid(), null);
        }
        return new LeaseWrite(null, 0, LeaseRefusal.VERSION_MOVED);
    }

    // ---- arming ---------------------------------------------------------------------------------

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
     * <p>When the namespace has a backlog index, the multi also creates the scope's {@code armed} entry,
     * last ({@link BacklogIndex}). When that op alone fails (an entry forged beforehand, its bucket gone),
     * nothing was applied and the reply said so: the same multi is sent once more without it (its checks
     * decide again), so the index can neither stop nor change an arming; a connection loss on either send
     * counts as armed, as always.
     *
     * @param replyBound how long to wait for a reply before giving up (it counts as armed then)
     */
    Arming arm(String scopePath, FencingToken token, String electionNode, String genesisId, Records.Scope armedScope,
               KeyHistory.Armed armed, String secret, java.time.Duration replyBound) throws Exception {
        // Sent once, never retried (ZooKeeperOps.multiOnce).
        List<Op> ops = new ArrayList<>(List.of(
                zk.opCheck(Layout.genesisMarker(namespace, genesisId), 0),
                zk.opCheck(electionNode, 0),
                zk.opSetData(scopePath, Records.scope(armedScope), token.version()),
                zk.opCreate(Layout.armed(scopePath), Records.armed(armed, secret), CreateMode.PERSISTENT, protocol.acl(Layout.Kind.ARMED)),
                zk.opCreate(Layout.outcome(scopePath), new byte[0], CreateMode.PERSISTENT, protocol.acl(Layout.Kind.OUTCOME))));
        int protocolOps = ops.size();
        if (protocol.indexed()) {
            ops.add(BacklogIndex.create(protocol, indexEntry(BacklogIndex.Kind.ARMED, scopePath)));
        }
        ZooKeeperOps.MultiReply reply = zk.multiOnce(ops, replyBound);
        boolean interrupted = reply.interrupted();
        int failed = ScopeProtocol.failedOp(reply.results());
        if (failed >= protocolOps) {
            // Only the index entry failed, with a definite answer: nothing was applied. Arm without it (the
            // checks above are sent again, so this is the same arming, decided now); the walk repairs the index.
            protocol.indexOpFailed(ops.get(failed), KeeperException.Code.get(
                    ((OpResult.ErrorResult) reply.results().get(failed)).getErr()));
            reply = zk.multiOnce(ops.subList(0, protocolOps), replyBound);
            interrupted |= reply.interrupted();
        }
        Arming result = arming(reply.rc(), reply.results());
        if (interrupted) {
            Thread.currentThread().interrupt();
        }
        if (result.armed()) {
            protocol.zxids.accept(result.zxid());
        }
        return new Arming(result.armedVersion(), result.zxid(), result.refusal(), result.code(), interrupted);
    }

    /** The backlog index entry of {@code kind} for the scope at {@code scopePath}. */
    private String indexEntry(BacklogIndex.Kind kind, String scopePath) {
        String keyPath = Layout.keyOfScope(scopePath);
        return BacklogIndex.entry(namespace, kind, keyPath.substring(keyPath.lastIndexOf('/') + 1),
                Layout.scopeNumber(scopePath.substring(scopePath.lastIndexOf('/') + 1)));
    }

    private static Arming arming(int rc, List<OpResult> results) {
        KeeperException.Code code = KeeperException.Code.get(rc);
        if (code == KeeperException.Code.OK) {
            Stat stat = ((OpResult.SetDataResult) results.get(2)).getStat();
            return new Arming(stat.getVersion(), stat.getMzxid(), null, code, false);
        }
        int failed = ScopeProtocol.failedOp(results);
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

    // ---- outcome --------------------------------------------------------------------------------

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
     * Retried by Curator; a retry that finds the outcome written recognises its own secret. With a backlog
     * index, the multi also removes the scope's {@code armed} entry and, for {@code send_status_unknown},
     * creates its {@code unknown} entry, last; when one of those fails, it is sent again without that one.
     */
    OutcomeWrite recordOutcome(String keyPath, int scope, String electionNode, KeyHistory.OutcomeRecord outcome,
                               String secret) throws Exception {
        String scopePath = Layout.scope(keyPath, scope);
        String outcomePath = Layout.outcome(scopePath);
        boolean openNext = outcome.outcome() == Outcome.NOT_SENT;
        String bindTo = electionNode;
        // Each index op is dropped alone when it fails (its entry already gone, say), so that the other still lands.
        boolean leaveArmed = protocol.indexed();
        boolean enterUnknown = leaveArmed && outcome.outcome() == Outcome.SEND_STATUS_UNKNOWN;
        while (true) {
            List<Op> ops = new ArrayList<>();
            if (bindTo != null) {
                ops.add(zk.opCheck(bindTo, 0));
            }
            int write = ops.size();
            ops.add(zk.opSetData(outcomePath, Records.outcome(outcome, secret), 0));
            if (openNext) {
                byte[] next = Records.scope(new Records.Scope("not_sent:" + scope, clock.instant(), null, false, false));
                ops.add(zk.opCreate(Layout.scope(keyPath, scope + 1), next, CreateMode.PERSISTENT, protocol.acl(Layout.Kind.SCOPE)));
            }
            int protocolOps = ops.size();
            // Last, so that a protocol op's failure is the one reported: out of "armed", and into
            // "unknown" when that is what the records now say.
            if (leaveArmed) {
                ops.add(BacklogIndex.delete(protocol, indexEntry(BacklogIndex.Kind.ARMED, scopePath)));
            }
            if (enterUnknown) {
                ops.add(BacklogIndex.create(protocol, indexEntry(BacklogIndex.Kind.UNKNOWN, scopePath)));
            }
            try {
                protocol.saw(ScopeProtocol.results(zk.multi(ops)));
                return OutcomeWrite.RECORDED;
            } catch (KeeperException e) {
                int failed = ScopeProtocol.failedOp(e);
                if (failed >= protocolOps) {
                    Op op = ops.get(failed);
                    protocol.indexOpFailed(op, ScopeProtocol.failedCode(e));
                    // That op misses its change (the walk repairs it); sent again without it, the other still lands,
                    // unless the index itself is gone.
                    if (op.getType() == ZooDefs.OpCode.delete) {
                        leaveArmed = false;
                    } else {
                        enterUnknown = false;
                    }
                    enterUnknown &= protocol.indexed();
                    continue;
                }
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

    // ---- a scope opened from an operator's authorization ----------------------------------------

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
     * meets: exactly one of the two lands ({@link OperatorWrites#reconcile}).
     */
    Opening openAuthorizedScope(String keyPath, ScopeView consumed, AuthorizationView authorization) throws Exception {
        int n = consumed.scope();
        byte[] data = Records.scope(new Records.Scope(Layout.AFTER_PREFIX + n, clock.instant(), null, false, false));
        List<Op> index = new ArrayList<>();
        if (protocol.indexed()) {
            // Rare (a redelivery): one read of which of scope n's entries exist, so the removals cannot fail.
            String key = keyPath.substring(keyPath.lastIndexOf('/') + 1);
            for (String entry : BacklogIndex.present(zk, List.of(BacklogIndex.entry(namespace, BacklogIndex.Kind.AUTHORIZED, key, n),
                    BacklogIndex.entry(namespace, BacklogIndex.Kind.UNKNOWN, key, n),
                    BacklogIndex.entry(namespace, BacklogIndex.Kind.ARMED, key, n)))) {
                index.add(BacklogIndex.delete(protocol, entry));
            }
        }
        try {
            protocol.saw(ScopeProtocol.results(protocol.multiWithIndex(List.of(
                    zk.opCheck(authorization.path(), authorization.version()),
                    zk.opSetData(consumed.path(), Records.scope(consumed.data()), consumed.version()),
                    zk.opCreate(Layout.scope(keyPath, n + 1), data, CreateMode.PERSISTENT, protocol.acl(Layout.Kind.SCOPE))), index)));
            return Opening.OPENED;
        } catch (KeeperException e) {
            if (ScopeProtocol.failedOp(e) == 2 && e instanceof KeeperException.NodeExistsException) {
                return Opening.ALREADY_OPEN;
            }
            if (e instanceof KeeperException.BadVersionException || e instanceof KeeperException.NoNodeException) {
                return Opening.CHANGED;
            }
            throw e;
        }
    }
}
