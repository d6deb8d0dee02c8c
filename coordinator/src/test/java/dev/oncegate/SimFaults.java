package dev.oncegate;

/**
 * The simulator's say over each ZooKeeper call a {@link SimClient} makes: called before the call
 * reaches the {@link SimZooKeeper} (the point where a deterministic scheduler yields to other
 * actors), it decides whether the call is applied and whether its reply arrives. Connection
 * state (disconnect, reconnect, session expiry) is driven separately, through {@link SimClient}.
 *
 * <p>Called on the one simulation thread; implementations need not be thread-safe.
 */
@FunctionalInterface
interface SimFaults {

    /** What becomes of one call. */
    enum Fault {
        /** Applied; its reply arrives. */
        NONE,
        /** Not applied: the call fails with {@code ConnectionLoss} before reaching the server. */
        FAIL_BEFORE,
        /** Applied (or refused) by the server, but its reply is lost: the caller sees {@code ConnectionLoss}. */
        LOSE_REPLY,
        /**
         * Applied (or refused) by the server, but the caller's wait for the reply is interrupted (a
         * SIGTERM to the worker): {@code InterruptedException}, the thread's flag left set, as Curator
         * leaves it. A {@code multiOnce} (the arming write) waits for its reply all the same, as
         * {@code CuratorOps} does, and reports the interrupt.
         */
        INTERRUPT_WAIT
    }

    /** No faults: every call applied, every reply delivered. */
    SimFaults NONE = (client, op, path) -> Fault.NONE;

    /**
     * Decides the fate of {@code op} (a ZooKeeper operation name: getData, getChildren, exists,
     * getACL, create, setData, delete, setACL, multi, multiOnce, removeWatches) on {@code path}
     * (for a multi, its first op's path) by {@code client}, before it is sent. Each retry of a
     * call by the client's retry policy is a call of its own.
     */
    Fault beforeCall(SimClient client, String op, String path);
}
