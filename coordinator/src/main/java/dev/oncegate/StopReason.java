package dev.oncegate;

import java.util.Locale;

/**
 * Why a contender or an executor was stopped. Each reason belongs to one {@link Decision} kind.
 *
 * <p>Immutable and thread-safe.
 */
public enum StopReason {
    /** The key's latest scope was delivered and verified ({@code stop_sent}). */
    SENT_VERIFIED,
    /** The latest scope ended {@code send_status_unknown} ({@code stop_unknown}). */
    SEND_STATUS_UNKNOWN,
    /** The latest scope is armed and has no outcome: someone may be delivering ({@code stop_unknown}). */
    ARMED_WITHOUT_OUTCOME,
    /** Another executor holds the lease and the caller chose not to wait ({@code stop_busy}). */
    EXECUTOR_ACTIVE,
    /** The caller's wait ran out while another executor was active ({@code stop_busy}). */
    WAIT_EXPIRED,
    /** This executor's lease was taken over; its token no longer matches ({@code stop_busy}). */
    FENCED,
    /** ZooKeeper could not be reached in time ({@code stop_unavailable}). */
    ZOOKEEPER_UNREACHABLE,
    /** The connection was suspended or the session lost during the attempt ({@code stop_unavailable}). */
    CONNECTION_LOST,
    /** A record could not be parsed, or contradicts the protocol ({@code stop_unavailable}). */
    UNREADABLE_RECORD,
    /** ZooKeeper refused an operation for lack of permission ({@code stop_unavailable}). */
    PERMISSION_DENIED,
    /** The namespace has no genesis record: run {@code oncegate init} ({@code stop_unavailable}). */
    NAMESPACE_NOT_INITIALISED,
    /** The namespace's genesis record changed under a running gate ({@code stop_unavailable}). */
    NAMESPACE_REPLACED,
    /**
     * The ensemble is behind a zxid this process (or this host, through its state file) already
     * saw for this namespace: it was restored from an older snapshot and may have forgotten
     * outcomes ({@code stop_unavailable}). Checked at every lease write, so before any arming.
     */
    ZOOKEEPER_ROLLED_BACK,
    /**
     * This host's rollback witness, its zxid marks file, cannot be read as a whole, so a rollback
     * could not be told ({@code stop_unavailable}). Checked when an attempt enters and at every
     * lease write, so before any arming; see {@link ZxidMarks#unreadable()}.
     */
    MARKS_UNREADABLE,
    /**
     * A write's result is unknown after a connection loss. During arming this counts as armed:
     * the action is never invoked ({@code stop_unavailable}).
     */
    WRITE_RESULT_UNKNOWN,
    /**
     * The executor's thread was interrupted before the arming write was sent: nothing was armed
     * and the lease was released ({@code stop_unavailable}).
     */
    INTERRUPTED,
    /** ZooKeeper answered with an error the protocol does not expect ({@code stop_unavailable}). */
    ZOOKEEPER_ERROR;

    /** The name used in JSON, logs and metric tags: the constant's name in lower case (pinned by WireNamesTest). */
    public String wireName() {
        return name().toLowerCase(Locale.ROOT);
    }
}
