package dev.oncegate;

/**
 * Why a contender or an executor was stopped. Each reason belongs to one {@link Decision} kind.
 *
 * <p>Immutable and thread-safe.
 */
public enum StopReason {
    /** The key's latest scope was delivered and verified ({@code stop_sent}). */
    SENT_VERIFIED("sent_verified"),
    /** The latest scope ended {@code send_status_unknown} ({@code stop_unknown}). */
    SEND_STATUS_UNKNOWN("send_status_unknown"),
    /** The latest scope is armed and has no outcome: someone may be delivering ({@code stop_unknown}). */
    ARMED_WITHOUT_OUTCOME("armed_without_outcome"),
    /** Another executor holds the lease and the caller chose not to wait ({@code stop_busy}). */
    EXECUTOR_ACTIVE("executor_active"),
    /** The caller's wait ran out while another executor was active ({@code stop_busy}). */
    WAIT_EXPIRED("wait_expired"),
    /** This executor's lease was taken over; its token no longer matches ({@code stop_busy}). */
    FENCED("fenced"),
    /** ZooKeeper could not be reached in time ({@code stop_unavailable}). */
    ZOOKEEPER_UNREACHABLE("zookeeper_unreachable"),
    /** The connection was suspended or the session lost during the attempt ({@code stop_unavailable}). */
    CONNECTION_LOST("connection_lost"),
    /** A record could not be parsed, or contradicts the protocol ({@code stop_unavailable}). */
    UNREADABLE_RECORD("unreadable_record"),
    /** ZooKeeper refused an operation for lack of permission ({@code stop_unavailable}). */
    PERMISSION_DENIED("permission_denied"),
    /** The namespace has no genesis record: run {@code oncegate init} ({@code stop_unavailable}). */
    NAMESPACE_NOT_INITIALISED("namespace_not_initialised"),
    /** The namespace's genesis record changed under a running gate ({@code stop_unavailable}). */
    NAMESPACE_REPLACED("namespace_replaced"),
    /**
     * The ensemble is behind a zxid this process (or this host, through its state file) already
     * saw for this namespace: it was restored from an older snapshot and may have forgotten
     * outcomes ({@code stop_unavailable}). Checked at every lease write, so before any arming.
     */
    ZOOKEEPER_ROLLED_BACK("zookeeper_rolled_back"),
    /**
     * A write's result is unknown after a connection loss. During arming this counts as armed:
     * the action is never invoked ({@code stop_unavailable}).
     */
    WRITE_RESULT_UNKNOWN("write_result_unknown"),
    /**
     * The executor's thread was interrupted before the arming write was sent: nothing was armed
     * and the lease was released ({@code stop_unavailable}).
     */
    INTERRUPTED("interrupted"),
    /** ZooKeeper answered with an error the protocol does not expect ({@code stop_unavailable}). */
    ZOOKEEPER_ERROR("zookeeper_error");

    private final String wireName;

    StopReason(String wireName) {
        this.wireName = wireName;
    }

    /** The name used in JSON, logs and metric tags. */
    public String wireName() {
        return wireName;
    }
}
