package dev.oncegate;

/**
 * How a {@link Destination} is identified at its provider.
 *
 * <p>Immutable and thread-safe.
 */
public enum IdentityKind {
    /** A provider-assigned identifier (a channel id, a folder id): preferred. */
    STABLE("stable"),
    /** An exact visible title: recorded as a weaker identity, since titles can be reused. */
    DISPLAY_NAME("display-name");

    private final String wireName;

    IdentityKind(String wireName) {
        this.wireName = wireName;
    }

    /** The name used in the canonical key text, JSON records and the CLI. */
    public String wireName() {
        return wireName;
    }

    /**
     * Parses a wire name ({@code stable} or {@code display-name}).
     *
     * @throws IllegalArgumentException naming the field when the text is neither
     */
    public static IdentityKind fromWireName(String text) {
        for (IdentityKind kind : values()) {
            if (kind.wireName.equals(text)) {
                return kind;
            }
        }
        throw new IllegalArgumentException(
                "identity: expected 'stable' or 'display-name', got '" + text + "'");
    }
}
