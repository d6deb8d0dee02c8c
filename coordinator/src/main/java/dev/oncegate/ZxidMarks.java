package dev.oncegate;

import java.nio.file.Path;
import java.time.Instant;
import java.util.List;
import java.util.Objects;
import java.util.Set;

/**
 * A witness of how far a namespace's ensemble has come: the highest zxid seen for each life of a
 * namespace (its genesis id). Every zxid only grows across an ensemble's life, so an ensemble
 * that answers below a mark was restored from an older snapshot (or is a copy of an older state)
 * and may have forgotten outcomes recorded after it. A gate compares every lease write's zxid
 * with the mark and stops with {@code stop_unavailable} ({@code zookeeper_rolled_back}) before
 * any arming; {@code oncegate} keeps the marks of a host in a small state file, so that a
 * rollback is caught by every host that talked to the ensemble before it.
 *
 * <p>What this catches, and what it cannot: a restore is caught by any process or host (with the
 * state file) that saw a zxid above the restored ensemble's current one, until the restored
 * ensemble's own writes pass that mark. It is not caught by a host that never talked to the
 * ensemble before, nor when the restore left the ensemble's epoch above the old one (a quorum
 * restore whose new leader starts a higher epoch moves every new zxid above the marks).
 *
 * <p>Implementations are thread-safe.
 */
public interface ZxidMarks {

    /** The highest zxid seen for this namespace life, or 0 when none. */
    long highest(String namespace, String genesisId);

    /** Records that the ensemble holding this namespace life had reached at least {@code zxid}. */
    void observe(String namespace, String genesisId, long zxid);

    /** Persists what was observed (a no-op for {@link #inMemory()}); never throws, logs instead. */
    void flush();

    /** Marks kept in this process only: a gate's default. */
    static ZxidMarks inMemory() {
        return new MemoryZxidMarks();
    }

    /**
     * Marks shared by every process of a host through {@code file} (created with its directory
     * when missing; updated under a file lock, replaced atomically, merged by taking the maximum).
     * {@code seenAt} (a connect string) is recorded with each mark, so {@code oncegate server}
     * can tell that this host saw a namespace at its address before. An unreadable file is logged
     * and treated as empty: the witness narrows a limit, it is not a gate of its own.
     */
    static ZxidMarks file(Path file, String seenAt) {
        return new FileZxidMarks(Objects.requireNonNull(file, "file"), Objects.requireNonNull(seenAt, "seenAt"));
    }

    /** The marks stored in {@code file} (empty when it does not exist or cannot be read). */
    static List<Mark> read(Path file) {
        return FileZxidMarks.load(Objects.requireNonNull(file, "file"));
    }

    /**
     * One stored mark.
     *
     * @param namespace the namespace
     * @param genesisId the id of its genesis (its life)
     * @param zxid      the highest zxid seen
     * @param seenAt    the connect strings it was seen at
     * @param updated   when the mark was last raised
     */
    record Mark(String namespace, String genesisId, long zxid, Set<String> seenAt, Instant updated) {
        public Mark {
            Objects.requireNonNull(namespace, "namespace");
            Objects.requireNonNull(genesisId, "genesisId");
            seenAt = Set.copyOf(seenAt);
            Objects.requireNonNull(updated, "updated");
        }
    }
}
