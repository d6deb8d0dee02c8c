package dev.oncegate;

import java.io.IOException;
import java.io.InputStream;
import java.io.InterruptedIOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.util.HexFormat;
import java.util.Locale;
import java.util.Objects;

/**
 * The global identity of one intended effect: a destination and the SHA-256 of the exact
 * content bytes delivered there. It never depends on a local path, a file name or a worker.
 *
 * <p>The canonical text and the key are fixed byte for byte by the vectors in
 * {@code coordinator/src/test/resources/key-vectors.json}, which the tests reproduce:
 * <pre>
 * oncegate-key/v1\n
 * provider:PCT(provider)\n
 * identity:IDENTITY\n
 * destination:PCT(id)\n
 * sha256:HEX(sha256(content))\n
 * </pre>
 * where PCT percent-encodes the UTF-8 bytes keeping only {@code A-Z a-z 0-9 - . _ ~}, and the
 * key is the lower-case hex SHA-256 of that text.
 *
 * <p>Immutable and thread-safe.
 *
 * @param key         64 lower-case hex characters
 * @param destination where the content goes
 * @param sha256      64 lower-case hex characters: SHA-256 of the content bytes
 */
public record EffectKey(String key, Destination destination, String sha256) {

    private static final HexFormat HEX = HexFormat.of();
    /** Hex characters in an {@link #idempotencyKey}: 128 bits. */
    private static final int IDEMPOTENCY_KEY_LENGTH = 32;

    /**
     * Checks that {@code key} is derived from {@code destination} and {@code sha256}.
     *
     * @throws IllegalArgumentException when a hash is malformed or the key does not match
     */
    public EffectKey {
        Objects.requireNonNull(key, "key");
        Objects.requireNonNull(destination, "destination");
        Objects.requireNonNull(sha256, "sha256");
        requireHex64("sha256", sha256);
        requireHex64("key", key);
        String expected = hexSha256(canonicalText(destination, sha256).getBytes(StandardCharsets.UTF_8));
        if (!expected.equals(key)) {
            throw new IllegalArgumentException("key: " + key + " is not the key of " + destination
                    + " with sha256 " + sha256 + " (expected " + expected + ")");
        }
    }

    /** The key of {@code destination} receiving content whose SHA-256 (hex) is {@code sha256}. */
    public static EffectKey of(Destination destination, String sha256) {
        Objects.requireNonNull(destination, "destination");
        Objects.requireNonNull(sha256, "sha256");
        requireHex64("sha256", sha256);
        String key = hexSha256(canonicalText(destination, sha256).getBytes(StandardCharsets.UTF_8));
        return new EffectKey(key, destination, sha256);
    }

    /** The key of {@code destination} receiving exactly {@code content}. */
    public static EffectKey of(Destination destination, byte[] content) {
        Objects.requireNonNull(content, "content");
        return of(destination, hexSha256(content));
    }

    /**
     * The key of {@code destination} receiving the bytes of {@code content}, read to its end in
     * a streaming pass (any size; never held in memory). The stream is not closed.
     *
     * @throws UncheckedIOException when the stream cannot be read, or the thread was interrupted
     *                              while reading it (an {@link InterruptedIOException}; the
     *                              thread's interrupt flag stays set)
     */
    public static EffectKey of(Destination destination, InputStream content) {
        Objects.requireNonNull(content, "content");
        MessageDigest digest = Sha256.jdk();
        byte[] buffer = new byte[64 * 1024];
        try {
            for (int n; (n = content.read(buffer)) >= 0; ) {
                digest.update(buffer, 0, n);
                if (Thread.currentThread().isInterrupted()) {
                    // A file's stream need not notice (the JDK's own for Files.newInputStream does not): a large
                    // file would be read to its end, long after the caller gave up. The flag stays set.
                    throw new InterruptedIOException("interrupted after " + n + " more bytes");
                }
            }
        } catch (IOException e) {
            throw new UncheckedIOException("content: could not read the content stream: " + e.getMessage(), e);
        }
        return of(destination, HEX.formatHex(digest.digest()));
    }

    /**
     * The key of {@code destination} receiving the bytes of the file at {@code file}, streamed.
     * The file name and location do not enter the key.
     *
     * @throws IllegalArgumentException naming the file when it is missing, a directory or unreadable
     */
    public static EffectKey of(Destination destination, Path file) {
        Objects.requireNonNull(file, "file");
        if (!Files.isRegularFile(file)) {
            throw new IllegalArgumentException("file: '" + file + "' is not a readable regular file");
        }
        try {
            if (Files.size(file) <= Sha256.SMALL) {
                return of(destination, Files.readAllBytes(file)); // one read; hashed without the JDK's setup (Sha256)
            }
            try (InputStream in = Files.newInputStream(file)) {
                return of(destination, in);
            }
        } catch (IOException | UncheckedIOException e) {
            throw new IllegalArgumentException("file: could not read '" + file + "': " + e.getMessage(), e);
        }
    }

    /** The canonical text this key hashes. */
    public String canonicalText() {
        return canonicalText(destination, sha256);
    }

    /**
     * Where this key lives in ZooKeeper under {@code namespace}:
     * {@code <namespace>/keys/<k0k1>/<k2k3>/<key>}.
     *
     * @throws IllegalArgumentException when the namespace is not an absolute ZooKeeper path
     */
    public String path(String namespace) {
        return Layout.keyPath(Layout.checkNamespace(namespace), key);
    }

    /**
     * The provider idempotency token of this effect's scope {@code scope} in one incarnation of
     * its key: the same for every request an executor of that scope makes (its own retries, a
     * request it resends after a pause), and different in every other scope — a scope opened after
     * a proven {@code not_sent} or by an operator's redelivery authorization is a new intent, which
     * a provider must not deduplicate against the old one — and in every other incarnation of the
     * key: after retention removed the key and it was entered again, or the namespace was
     * re-initialised, scope 0 is a new intent too, and a deduplicating provider must not answer it
     * with the first delivery's receipt. It does not depend on the executor, its task or its fencing
     * token, and it is not secret.
     *
     * <p>Exactly: the first 32 characters of the lower-case hex SHA-256 of the UTF-8 text
     * {@code "oncegate-idempotency/v2\n" + key + "\n" + scope + "\n" + genesisId + "\n" + keyZxid + "\n"}
     * (scope and keyZxid in decimal; {@code oncegate inspect} prints the key's {@code genesis} and
     * {@code zxid}) — 128 bits, short enough for every provider's idempotency-key field. In a shell:
     * {@code printf 'oncegate-idempotency/v2\n%s\n%s\n%s\n%s\n' KEY SCOPE GENESIS ZXID | sha256sum | cut -c1-32}.
     *
     * @param scope     the scope, 0 or more
     * @param genesisId the namespace's genesis id
     * @param keyZxid   the creation zxid of the key's znode (positive)
     * @return 32 lower-case hex characters
     * @throws IllegalArgumentException when the scope is negative, the genesis id empty or the zxid not positive
     */
    public String idempotencyKey(int scope, String genesisId, long keyZxid) {
        if (scope < 0) {
            throw new IllegalArgumentException("scope: must be 0 or more, got " + scope);
        }
        Objects.requireNonNull(genesisId, "genesisId");
        if (genesisId.isEmpty()) {
            throw new IllegalArgumentException("genesisId: must not be empty");
        }
        if (keyZxid <= 0) {
            throw new IllegalArgumentException("keyZxid: a creation zxid is positive, got " + keyZxid);
        }
        String text = "oncegate-idempotency/v2\n" + key + "\n" + scope + "\n" + genesisId + "\n" + keyZxid + "\n";
        return hexSha256(text.getBytes(StandardCharsets.UTF_8)).substring(0, IDEMPOTENCY_KEY_LENGTH);
    }

    /**
     * Checks the form of a key given as text (64 lower-case hex characters).
     *
     * @throws IllegalArgumentException naming the field when it is malformed
     */
    public static String requireKeyText(String key) {
        Objects.requireNonNull(key, "key");
        requireHex64("key", key);
        return key;
    }

    /**
     * The key whose znode is {@code path} in {@code namespace}: the {@code path} that
     * {@link #path(String)} gives (and {@code oncegate key} and {@code inspect} print), with the
     * key's hex in either case.
     *
     * @return the key, 64 lower-case hex characters
     * @throws IllegalArgumentException when {@code path} is no key's znode in {@code namespace}
     *                                  (saying which namespace it is in, when it is another's)
     */
    public static String keyAt(String namespace, String path) {
        Objects.requireNonNull(path, "path");
        String ns = Layout.checkNamespace(namespace);
        String key = path.substring(path.lastIndexOf('/') + 1).toLowerCase(Locale.ROOT);
        String problem;
        if (!key.matches("[0-9a-f]{64}")) {
            problem = "it does not end in a key (64 hex characters)";
        } else if (path.toLowerCase(Locale.ROOT).endsWith(Layout.keyPath("", key))) {
            String in = path.substring(0, path.length() - Layout.keyPath("", key).length());
            if (in.equals(ns)) {
                return key;
            }
            problem = in.isEmpty() ? "it names no namespace" : "it is in namespace " + in + ", not " + ns;
        } else {
            problem = "a key's znode is " + Layout.keys(ns) + "/<its first 2 hex>/<the next 2>/<key>";
        }
        throw new IllegalArgumentException("key: '" + path + "' is not the path of a key in " + ns + ": " + problem);
    }

    static String canonicalText(Destination destination, String sha256) {
        return "oncegate-key/v1\n"
                + "provider:" + percentEncode(destination.provider()) + "\n"
                + "identity:" + destination.identity().wireName() + "\n"
                + "destination:" + percentEncode(destination.id()) + "\n"
                + "sha256:" + sha256 + "\n";
    }

    static String percentEncode(String text) {
        byte[] bytes = text.getBytes(StandardCharsets.UTF_8);
        StringBuilder out = new StringBuilder(bytes.length);
        for (byte b : bytes) {
            int c = b & 0xff;
            if ((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9')
                    || c == '-' || c == '.' || c == '_' || c == '~') {
                out.append((char) c);
            } else {
                out.append('%').append(Character.toUpperCase(Character.forDigit(c >> 4, 16)))
                        .append(Character.toUpperCase(Character.forDigit(c & 0xf, 16)));
            }
        }
        return out.toString();
    }

    /** The lower-case hex SHA-256 of {@code bytes}. */
    static String hexSha256(byte[] bytes) {
        return HEX.formatHex(Sha256.digest(bytes));
    }

    private static void requireHex64(String field, String value) {
        if (!isHex64(value)) {
            throw new IllegalArgumentException(field + ": expected 64 lower-case hex characters, got '" + value + "'");
        }
    }

    /** 64 characters of {@code [0-9a-f]}: a loop, since every enter checks a key (a regex cost a tenth of its CPU). */
    static boolean isHex64(String value) {
        if (value.length() != 64) {
            return false;
        }
        for (int i = 0; i < 64; i++) {
            char c = value.charAt(i);
            if (!(c >= '0' && c <= '9' || c >= 'a' && c <= 'f')) {
                return false;
            }
        }
        return true;
    }
}
