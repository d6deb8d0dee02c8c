package dev.oncegate;

import java.nio.ByteBuffer;
import java.nio.CharBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.util.Objects;

/**
 * Where an effect lands: a provider, the kind of identity, and the identifier itself.
 *
 * <p>The identifier is taken exactly as given: no trimming, no case folding, no Unicode
 * normalisation. Two destinations are the same effect target only when every field is equal.
 *
 * <p>Immutable and thread-safe.
 *
 * @param provider   {@code [a-z0-9][a-z0-9._-]{0,63}}, e.g. {@code slack}
 * @param identity   how {@code id} identifies the destination
 * @param id         the identifier, non-empty, at most 1024 UTF-8 bytes, valid Unicode
 */
public record Destination(String provider, IdentityKind identity, String id) {

    /** Largest identifier, in UTF-8 bytes. */
    public static final int MAX_ID_BYTES = 1024;

    /**
     * Validates every field.
     *
     * @throws NullPointerException     naming the field when one is null
     * @throws IllegalArgumentException naming the field when one is malformed
     */
    public Destination {
        Objects.requireNonNull(provider, "provider");
        Objects.requireNonNull(identity, "identity");
        Objects.requireNonNull(id, "destination");
        if (!isProviderName(provider)) {
            throw new IllegalArgumentException("provider: '" + provider
                    + "' must match [a-z0-9][a-z0-9._-]{0,63} (lower-case letters, digits, '.', '_', '-')");
        }
        if (id.isEmpty()) {
            throw new IllegalArgumentException("destination: the identifier must not be empty");
        }
        int bytes = utf8Length(id);
        if (bytes > MAX_ID_BYTES) {
            throw new IllegalArgumentException("destination: the identifier is " + bytes
                    + " UTF-8 bytes; at most " + MAX_ID_BYTES + " are allowed");
        }
    }

    /**
     * Whether {@code name} matches {@code [a-z0-9][a-z0-9._-]{0,63}}. Checked by hand: the first
     * regular expression of a JVM links the lambdas of its character classes, 5 ms of a
     * {@code oncegate key} that takes a few tens ({@code DestinationTest} holds the two to the same
     * answers).
     */
    static boolean isProviderName(String name) {
        if (name.isEmpty() || name.length() > 64) {
            return false;
        }
        for (int i = 0; i < name.length(); i++) {
            char c = name.charAt(i);
            boolean alnum = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
            if (!alnum && (i == 0 || (c != '.' && c != '_' && c != '-'))) {
                return false;
            }
        }
        return true;
    }

    /** A destination with a provider-assigned identifier. */
    public static Destination stable(String provider, String id) {
        return new Destination(provider, IdentityKind.STABLE, id);
    }

    /** A destination known only by its exact visible title. */
    public static Destination displayName(String provider, String title) {
        return new Destination(provider, IdentityKind.DISPLAY_NAME, title);
    }

    /**
     * Parses the CLI form {@code PROVIDER:ID}: the provider runs up to the first colon, the
     * identifier is everything after it, taken exactly.
     *
     * @throws IllegalArgumentException naming the field when the text is malformed
     */
    public static Destination parse(IdentityKind identity, String providerColonId) {
        Objects.requireNonNull(providerColonId, "destination");
        int colon = providerColonId.indexOf(':');
        if (colon < 0) {
            throw new IllegalArgumentException("destination: expected PROVIDER:ID, got '"
                    + providerColonId + "' (no ':')");
        }
        return new Destination(providerColonId.substring(0, colon), identity,
                providerColonId.substring(colon + 1));
    }

    /** UTF-8 byte length; refuses unpaired surrogates, which have no UTF-8 form. */
    static int utf8Length(String text) {
        try {
            ByteBuffer encoded = StandardCharsets.UTF_8.newEncoder()
                    .onMalformedInput(CodingErrorAction.REPORT)
                    .onUnmappableCharacter(CodingErrorAction.REPORT)
                    .encode(CharBuffer.wrap(text));
            return encoded.remaining();
        } catch (CharacterCodingException e) {
            throw new IllegalArgumentException(
                    "destination: the identifier is not valid Unicode (an unpaired surrogate?)", e);
        }
    }
}
