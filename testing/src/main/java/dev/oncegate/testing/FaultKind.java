package dev.oncegate.testing;

/**
 * The faults a chaos run injects. Immutable and thread-safe.
 */
public enum FaultKind {
    /** The server ends a worker's session (Curator's {@code KillSession}): ephemerals vanish. */
    SESSION_EXPIRY_SERVER,
    /** The worker's client believes its session expired ({@code injectSessionExpiration}). */
    SESSION_EXPIRY_CLIENT,
    /** The worker's socket is closed under it; it reconnects within its session. */
    CONNECTION_DROP,
    /** A server (standalone) or the whole ensemble stops and restarts within the session timeout. */
    RESTART_WITHIN_SESSION,
    /** A server (standalone) or the whole ensemble stays down past the session timeout, then restarts. */
    RESTART_BEYOND_SESSION,
    /** The ensemble's current leader is killed (ensembles only), then restarted. */
    LEADER_KILL,
    /** The next executor to proceed holds its thread past its lease TTL before crossing. */
    EXECUTOR_PAUSE;

    /** Lower-case wire name for reports and JSON. */
    public String wireName() {
        return name().toLowerCase();
    }
}
