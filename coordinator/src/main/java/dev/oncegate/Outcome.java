package dev.oncegate;

/**
 * The permanent result of crossing a scope's boundary.
 *
 * <p>Immutable and thread-safe.
 */
public enum Outcome {
    /** Delivery confirmed: the key is consumed. */
    SENT_VERIFIED("sent_verified"),
    /** May have been delivered: the key is consumed for good. */
    SEND_STATUS_UNKNOWN("send_status_unknown"),
    /** Proven not delivered: a new scope opens at once for a new executor. */
    NOT_SENT("not_sent");

    private final String wireName;

    Outcome(String wireName) {
        this.wireName = wireName;
    }

    /** The name used in records, JSON and the CLI. */
    public String wireName() {
        return wireName;
    }

    /** Parses a wire name; {@code IllegalArgumentException} naming the field otherwise. */
    public static Outcome fromWireName(String text) {
        for (Outcome outcome : values()) {
            if (outcome.wireName.equals(text)) {
                return outcome;
            }
        }
        throw new IllegalArgumentException("outcome: unknown outcome '" + text + "'");
    }
}
