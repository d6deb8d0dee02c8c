package dev.oncegate;

import java.util.Locale;

/**
 * How a {@link Destination} is identified at its provider.
 *
 * <p>Immutable and thread-safe.
 */
public enum IdentityKind {
    /** A provider-assigned identifier (a channel id, a folder id): preferred. */
    STABLE,
    /** An exact visible title: recorded as a weaker identity, since titles can be reused. */
    DISPLAY_NAME;

    /**
     * The name used in the canonical key text, JSON records and the CLI: the constant's name in
     * lower case, with '-' for '_'.
     */
    public String wireName() {
        return name().toLowerCase(Locale.ROOT).replace('_', '-');
    }

    /**
     * Parses a wire name ({@code stable} or {@code display-name}).
     *
     * @throws IllegalArgumentException naming the field when the text is neither
     */
    public static IdentityKind fromWireName(String text) {
        return WireNames.parse(values(), IdentityKind::wireName, text,
                "identity: expected 'stable' or 'display-name', got '" + text + "'");
    }
}
