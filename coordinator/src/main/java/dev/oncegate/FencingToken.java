package dev.oncegate;

/**
 * Proof of the lease an executor holds: the version of the scope znode after the executor's
 * last lease write, and that write's {@code mzxid}. The version is what every write of the
 * executor is conditional on; the zxid only grows across the ensemble, so a provider that
 * remembers the largest zxid it has seen for a destination can refuse a stale executor.
 *
 * <p>Immutable and thread-safe.
 *
 * @param version the scope znode's data version (never -1)
 * @param zxid    the {@code mzxid} of the lease write that produced {@code version}
 */
public record FencingToken(int version, long zxid) {

    public FencingToken {
        if (version < 0) {
            throw new IllegalArgumentException("version: a fencing token's version is never negative, got " + version);
        }
    }

    @Override
    public String toString() {
        return version + "@" + zxid;
    }
}
