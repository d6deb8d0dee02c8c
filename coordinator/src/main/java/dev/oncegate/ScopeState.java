package dev.oncegate;

import java.util.Locale;

/**
 * The state of one scope of a key (the README's "Concepts"), as every contender reads it.
 *
 * <p>Immutable and thread-safe.
 */
public enum ScopeState {
    /** No executor yet, or the last one left before arming: the elected contender may proceed. */
    OPEN,
    /** One executor holds the lease (its fencing token is the scope znode's version). */
    LEASED,
    /** The executor recorded that it is crossing; no outcome yet. Reads as {@code send_status_unknown}. */
    ARMED,
    /** Terminal: delivery confirmed (by the executor, or reconciled by an operator). */
    SENT_VERIFIED,
    /** Terminal: may have been delivered. */
    SEND_STATUS_UNKNOWN,
    /** Terminal: proven not delivered; the next scope opened with it. */
    NOT_SENT;

    /**
     * Whether no executor may cross this scope any more and nothing opens the next one by
     * itself: verified, unknown, or armed without outcome. Only an operator's authorization for
     * this scope opens the next.
     */
    public boolean consumed() {
        return this == ARMED || this == SENT_VERIFIED || this == SEND_STATUS_UNKNOWN;
    }

    /** The name used in JSON, logs and {@code oncegate list --state}. */
    public String wireName() {
        return name().toLowerCase(Locale.ROOT);
    }

    /** Parses a wire name; {@code IllegalArgumentException} naming the accepted ones otherwise. */
    public static ScopeState fromWireName(String text) {
        return WireNames.parse(values(), ScopeState::wireName, text, "state: unknown state '" + text
                + "' (open, leased, armed, sent_verified, send_status_unknown, not_sent)");
    }
}
