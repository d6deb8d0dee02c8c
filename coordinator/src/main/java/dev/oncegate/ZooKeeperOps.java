package dev.oncegate;

import java.time.Duration;
import java.util.List;
import java.util.function.BiConsumer;
import java.util.function.Consumer;
import org.apache.curator.framework.state.ConnectionState;
import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.Op;
import org.apache.zookeeper.OpResult;
import org.apache.zookeeper.Watcher;
import org.apache.zookeeper.data.ACL;
import org.apache.zookeeper.data.Stat;

/**
 * Every ZooKeeper operation the protocol performs, and nothing else: the seam between the protocol
 * ({@link ScopeProtocol}, {@link DefaultAttempt}, {@link DefaultOperator}, {@link NamespaceState}) and
 * a ZooKeeper. Production runs {@link CuratorOps}, on a Curator client, exactly as the protocol ran on
 * Curator before the seam; the deterministic simulator runs an in-memory model of ZooKeeper behind
 * the same methods, so that the protocol's own code is explored over seeded histories.
 *
 * <p>Semantics are ZooKeeper's: a failed operation throws the {@link org.apache.zookeeper.KeeperException}
 * ZooKeeper returns ({@code NoNode}, {@code NodeExists}, {@code BadVersion}, {@code NotEmpty},
 * {@code NoAuth}, {@code ConnectionLoss}, ...); a {@code multi} is atomic and throws the first failing
 * op's code with every op's result attached. Paths are absolute paths in the client's namespace.
 * Calls that Curator retries on a connection loss ({@link #multi}, and every single-op call) are
 * retried by the client's policy; {@link #multiOnce} is sent exactly once.
 *
 * <p>Implementations are thread-safe.
 */
interface ZooKeeperOps {

    // ---- reads ------------------------------------------------------------------------------------

    /** {@code getData path}, its stat into {@code stat} when given, a one-shot data watch when {@code watcher} is given. */
    byte[] getData(String path, Stat stat, Watcher watcher) throws Exception;

    /** {@code getChildren path}, a one-shot child watch when {@code watcher} is given; order unspecified. */
    List<String> getChildren(String path, Watcher watcher) throws Exception;

    /** {@code exists path}: its stat, or null when absent; a one-shot watch when {@code watcher} is given. */
    Stat exists(String path, Watcher watcher) throws Exception;

    /** {@code getACL path}, its stat into {@code stat} when given. */
    List<ACL> getAcl(String path, Stat stat) throws Exception;

    // ---- writes -----------------------------------------------------------------------------------

    /**
     * {@code create path}: returns the created path (with its sequence suffix for a sequential mode).
     *
     * @param acl     the node's ACL; null for the client's ACL provider's
     * @param stat    receives the created node's stat when given
     * @param parents whether missing parents are created first (persistent, with the client's ACL)
     */
    String create(String path, byte[] data, CreateMode mode, List<ACL> acl, Stat stat, boolean parents) throws Exception;

    /** {@code setData path} at {@code version} (-1 for any): the new stat. */
    Stat setData(String path, byte[] data, int version) throws Exception;

    /** {@code delete path} at {@code version} (-1 for any). */
    void delete(String path, int version) throws Exception;

    /** {@code setACL path} at ACL version {@code aclVersion} (-1 for any). */
    Stat setAcl(String path, List<ACL> acl, int aclVersion) throws Exception;

    /**
     * An atomic {@code multi} of ops built by the {@code op*} methods below (or a read-only one of
     * {@link #opGetData}/{@link #opGetChildren}, whose ops fail or succeed one by one), retried by
     * the client's policy on a connection loss: a write's retry may meet its own first try's effect.
     */
    List<OpResult> multi(List<Op> ops) throws Exception;

    /**
     * An atomic {@code multi}, sent exactly once: its reply, or {@code ConnectionLoss}/{@code
     * OperationTimeout} as {@link MultiReply#rc()} when none came within {@code replyBound} (the write may
     * or may not have been applied); an exception when it could not be sent. An interrupt does not cut the wait short: it is reported in
     * {@link MultiReply#interrupted()} and the thread's flag is set again.
     */
    MultiReply multiOnce(List<Op> ops, Duration replyBound) throws Exception;

    /** A multi's reply: ZooKeeper's return code and each op's result (null when no reply came). */
    record MultiReply(int rc, List<OpResult> results, boolean interrupted) {
    }

    Op opCheck(String path, int version) throws Exception;

    /** @param acl the node's ACL; null for the client's ACL provider's */
    Op opCreate(String path, byte[] data, CreateMode mode, List<ACL> acl) throws Exception;

    Op opSetData(String path, byte[] data, int version) throws Exception;

    Op opDelete(String path, int version) throws Exception;

    Op opGetData(String path);

    Op opGetChildren(String path);

    // ---- watches ----------------------------------------------------------------------------------

    /**
     * Drops {@code watcher}'s watches on {@code path} at the client (or, when {@code watcher} is null,
     * the session's watches on the path, at the server too), in the background; a failure is only
     * logged: a watch also goes when its path changes or the session ends.
     */
    void removeWatches(String path, Watcher watcher);

    // ---- session ----------------------------------------------------------------------------------

    /** The current session's id (0 before the first connection). */
    long sessionId() throws Exception;

    /** The negotiated session timeout, in milliseconds. */
    int sessionTimeoutMs() throws Exception;

    /** Whether the client is connected now. */
    boolean connected();

    /** Waits up to {@code timeout} for a connection: whether there is one. */
    boolean awaitConnected(Duration timeout) throws InterruptedException;

    /** Whether the client is started and not closed. */
    boolean started();

    /** The connection string, for messages. */
    String connectString();

    /**
     * Listens to connection state changes (loss, suspension, reconnection) and to errors of the
     * client's background work (message, error), until {@link #close()}.
     */
    void listen(Consumer<ConnectionState> states, BiConsumer<String, Throwable> errors);

    /**
     * Stops listening and leaves, in the background, the elections whose members wait for their turn
     * to leave; the client itself stays open (it is the caller's).
     */
    void close();

    /**
     * Joins the election under {@code latchPath} (which exists) as {@code id}: a Curator
     * {@code LeaderLatch} in production. {@code onChange} runs on a client thread whenever leadership
     * is gained or lost.
     */
    ElectionMember joinElection(String latchPath, String id, Runnable onChange) throws Exception;

    /** One contender's membership of an election. Thread-safe. */
    interface ElectionMember {

        /** The member's election node, or null while it is being created. */
        String ourPath();

        /** Whether the member leads now (a hint: the lease CAS is the authority). */
        boolean hasLeadership();

        /**
         * Leaves the election (its node is deleted, now or in the background). {@code withEveryone}:
         * the leave may wait for the member's background work on the client's threads to end.
         */
        void leave(boolean withEveryone);
    }

    /**
     * Waits on {@code monitor} (held by the caller) for up to {@code millis} or a notify, as
     * {@link Object#wait(long)}: the one place the protocol blocks for events, so that a simulator
     * can run it on virtual time.
     */
    default void await(Object monitor, long millis) throws InterruptedException {
        monitor.wait(millis);
    }
}
