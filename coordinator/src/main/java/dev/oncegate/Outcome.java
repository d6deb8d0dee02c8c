package dev.oncegate;

import java.util.Locale;

/**
 * The permanent result of crossing a scope's boundary.
 *
 * <p>Immutable and thread-safe.
 */
public enum Outcome {
    /** Delivery confirmed: the key is consumed. */
    SENT_VERIFIED,
    /** May have been delivered: the key is consumed for good. */
    SEND_STATUS_UNKNOWN,
    /** Proven not delivered: a new scope opens at once for a new executor. */
    NOT_SENT;

    /** The name used in records, JSON and the CLI: the constant's name in lower case (pinned by WireNamesTest). */
    public String wireName() {
        return name().toLowerCase(Locale.ROOT);
    }

    /** Parses a wire name; {@code IllegalArgumentException} naming the field otherwise. */
    public static Outcome fromWireName(String text) {
        return WireNames.parse(values(), Outcome::wireName, text, "outcome: unknown outcome '" + text + "'");
    }
}
