package dev.oncegate;

import java.nio.file.Path;
import java.time.Instant;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
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
 * <p>A rollback once caught is kept: the gate records it ({@link #rolledBack(String, String, Rollback)}),
 * and every later attempt at that namespace life stops before it writes anything, however far the
 * restored ensemble's own writes (those refused attempts' among them) have moved its zxids on since.
 * It ends when the admin accepts the restore ({@code oncegate init --accept-restore}, after
 * reconciling): the genesis then counts one more accepted restore, and the marks' namespace life is
 * {@link Genesis#witnessLife()}, a new one, with no mark and no rollback yet. A host whose marks know
 * a later life of the genesis than the one it reads (a restore to before an acceptance) stops too.
 *
 * <p>What this catches, and what it cannot: a restore is caught by any process or host (with the
 * state file) that saw a zxid above the restored ensemble's current one, at its first lease write
 * while the restored ensemble is still below that mark. It is not caught by a host that never talked
 * to the ensemble before, nor by one whose first attempt after the restore comes once the restored
 * ensemble's writes (other hosts') have passed its mark, nor when the restore left the ensemble's
 * epoch above the old one (a quorum restore whose new leader starts a higher epoch moves every new
 * zxid above the marks).
 *
 * <p>A witness that cannot be read, or written, fails closed: while {@link #unreadable()} says why, a gate stops
 * every attempt with {@code stop_unavailable} ({@code marks_unreadable}), when it enters and again
 * at every lease write, before anything is armed. A gate flushes its marks after every lease write
 * and after every crossing, so a process killed right after its action still leaves its witness.
 *
 * <p>Implementations are thread-safe.
 */
public interface ZxidMarks {

    /** The highest zxid seen for this namespace life, or 0 when none. */
    long highest(String namespace, String genesisId);

    /** Records that the ensemble holding this namespace life had reached at least {@code zxid}. */
    void observe(String namespace, String genesisId, long zxid);

    /**
     * Persists what was observed (a no-op for {@link #inMemory()}) before it returns; never throws,
     * logs instead (and {@link #unreadable()} then says that the file cannot be written). Cheap when nothing rose since the last flush; concurrent flushes share one write.
     */
    void flush();

    /**
     * Why these marks cannot be trusted, or empty when they can. A gate stops every attempt while
     * it is present (see above); the default, for marks that are always readable, is empty.
     *
     * @return a message starting {@code "marks file unreadable: "} (or, when the last flush could not
     *         write it, {@code "marks file cannot be written: "}) that names the file, the problem and
     *         what to do
     */
    default Optional<String> unreadable() {
        return Optional.empty();
    }

    /**
     * The lives (genesis ids) of {@code namespace} these marks hold: not empty when this host (or,
     * in memory, this process) saw the namespace before. A gate allowed to initialise namespaces
     * does not initialise one its marks saw: that one lost its data. The default, for marks that
     * keep no lives, is none.
     */
    default Set<String> lives(String namespace) {
        return Set.of();
    }

    /**
     * The rollback caught for this namespace life, kept until the life ends (see the class comment),
     * or empty. The default, for marks that keep none, is empty.
     *
     * @param life the genesis' {@link Genesis#witnessLife()}
     */
    default Optional<Rollback> rolledBack(String namespace, String life) {
        return Optional.empty();
    }

    /**
     * Records that the ensemble holding this namespace life was found rolled back (the first one
     * recorded is kept); persisted by the next {@link #flush()}. The default keeps nothing.
     */
    default void rolledBack(String namespace, String life, Rollback found) {
    }

    /**
     * A rollback caught: the ensemble answered {@code zxid} where this host had seen {@code mark}.
     *
     * @param mark the highest zxid seen before
     * @param zxid the zxid the restored ensemble gave a write
     * @param at   when it was found (this host's clock: for people, never for a decision)
     */
    record Rollback(long mark, long zxid, Instant at) {
        public Rollback {
            Objects.requireNonNull(at, "at");
        }
    }

    /** Marks kept in this process only: a gate's default. */
    static ZxidMarks inMemory() {
        return new MemoryZxidMarks();
    }

    /**
     * Marks shared by every process of a host through {@code file} (created with its directory
     * when missing; updated under a file lock, replaced atomically, merged by taking the maximum).
     * {@code seenAt} (a connect string) is recorded with each mark, so {@code oncegate server}
     * can tell that this host saw a namespace at its address before.
     *
     * <p>The file is read entry by entry: an entry this version cannot read (another format, a
     * later version's) is kept as it is, byte for byte, by every flush, and the others still count.
     * A file that cannot be read as a whole (unreadable bytes, not JSON, not an object with a
     * {@code "marks"} list) is never overwritten, and {@link #unreadable()} says so until the file
     * reads again (repaired, or moved aside, which forgets this host's marks). The file is read when
     * these marks are created, at every flush, and while unreadable at every {@link #unreadable()}.
     */
    static ZxidMarks file(Path file, String seenAt) {
        return new FileZxidMarks(Objects.requireNonNull(file, "file"), Objects.requireNonNull(seenAt, "seenAt"));
    }

    /**
     * The marks stored in {@code file} that this version reads, in file order (empty when it does
     * not exist); entries it cannot read are left out.
     *
     * @throws OncegateException when the file as a whole cannot be read, with the message of {@link #unreadable()}
     */
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
