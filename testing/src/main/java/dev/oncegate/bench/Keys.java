package dev.oncegate.bench;

import java.nio.ByteBuffer;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Fresh effect identities, the same kind of name for every arm: 64 hex characters, the SHA-256
 * of the run's seed and a counter (uniformly spread, as real keys are over oncegate's hash
 * buckets). A run with the same seed names the same keys, in the order they are asked for.
 *
 * <p>Thread-safe.
 */
final class Keys {

    private final long seed;
    private final AtomicLong next = new AtomicLong();

    Keys(long seed) {
        this.seed = seed;
    }

    /** A key never handed out before in this run. */
    String fresh() {
        long n = next.getAndIncrement();
        try {
            MessageDigest sha = MessageDigest.getInstance("SHA-256");
            return HexFormat.of().formatHex(sha.digest(ByteBuffer.allocate(16).putLong(seed).putLong(n).array()));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-256 is missing from this JVM", e);
        }
    }
}
