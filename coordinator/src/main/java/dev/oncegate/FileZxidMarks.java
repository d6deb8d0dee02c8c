package dev.oncegate;

import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.file.AtomicMoveNotSupportedException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.time.Instant;
import java.time.format.DateTimeParseException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * {@link ZxidMarks#file}: the marks of a host in one JSON file,
 * {@code {"v":1,"marks":[{"namespace":…,"genesis":…,"zxid":…,"seen_at":[…],"updated":…}]}}, where
 * {@code genesis} is the namespace life ({@link Genesis#witnessLife()}); an entry whose life was
 * found rolled back also has {@code "rolled_back":{"mark":…,"zxid":…,"at":…}}, kept for good (a
 * {@code rolled_back} field this version cannot read counts as a rollback found: the file fails
 * closed).
 *
 * <h2>Reading</h2>
 * The file as a whole must be JSON ({@link Json}'s strict reading) whose top level is an object
 * with a {@code "marks"} list; otherwise it is unreadable: {@link #unreadable()} says why and no
 * flush writes it. Each entry of the list is read on its own. One with a string {@code namespace}
 * and {@code genesis}, an integer {@code zxid}, a list of strings {@code seen_at} and an ISO-8601
 * {@code updated} is a mark (further fields are allowed, and kept); any other entry (another
 * format, a later version's) counts for nothing here and is written back as the JSON value it was,
 * byte for byte. So are the top-level fields other than {@code "marks"}.
 *
 * <h2>Flushing</h2>
 * {@link #flush} merges what this process observed into the file under an exclusive lock on
 * {@code FILE.lock}: it re-reads the file, raises only the entries of the namespace lives whose
 * mark rose (maximum zxid, union of addresses), adds the missing ones, writes back whatever this
 * process knows that the file lost meanwhile (moved aside, replaced by an older copy: marks and
 * rollbacks), leaves every other entry as it was, and replaces the file atomically, so concurrent processes never lose each other's
 * marks. The marks it reads there join this process's witness. A flush returns once the caller's
 * marks are in the file. Flushes of one instance take turns, and one that finds its marks written
 * by the flush before it returns without writing: a burst of flushes from many threads of a gate
 * costs about two writes, not one each. No fsync: the file outlives the process, not the host's
 * power. A flush re-reads the file every time, but parses it only when its bytes differ from the
 * ones this instance last read or wrote: unchanged bytes are the same marks (decoding them is most
 * of a flush's CPU, with a sidecar flushing three times per effect), and any other process's write
 * changes them.
 *
 * <p>Thread-safe: the marks and what the file is known to hold are concurrent maps; reading and
 * writing the file are serialized by this instance's monitor, and, among the instances of this JVM
 * on one file, by a monitor per file (a file lock is held per process).
 */
final class FileZxidMarks extends MemoryZxidMarks {

    private static final Logger LOG = LoggerFactory.getLogger(FileZxidMarks.class);

    /**
     * One monitor per marks file in this JVM: a file lock is held per process, so threads of one
     * process (several gates) must also take turns among themselves.
     */
    private static final Map<Path, Object> IN_PROCESS = new ConcurrentHashMap<>();

    private final Path file;
    private final String seenAt;
    /** Per namespace life, the highest zxid the file is known to hold: a flush writes only what rose above it. */
    private final Map<Life, Long> persisted = new ConcurrentHashMap<>();
    /** The lives whose rollback the file is known to hold: a flush writes the others'. */
    private final Set<Life> persistedRollbacks = ConcurrentHashMap.newKeySet();
    /** Why the file cannot be read as a whole, or null. */
    private volatile String problem;
    /** Why the last flush could not write the file, or null: a witness later processes cannot read (logged once). */
    private volatile String writeProblem;
    /** The file's bytes as this instance last read or wrote them, and what they decode to. Guarded by this. */
    private byte[] knownBytes;
    private Contents knownContents;

    FileZxidMarks(Path file, String seenAt) {
        this.file = file;
        this.seenAt = seenAt;
        synchronized (this) {
            reload();
        }
    }

    /**
     * {@inheritDoc} Also when the last flush could not write the file (its marks are then written
     * again first: it may be writable by now).
     */
    @Override
    public Optional<String> unreadable() {
        if (problem != null) {
            synchronized (this) {
                if (problem != null) {
                    reload(); // repaired or moved aside since?
                }
            }
        }
        if (problem == null && writeProblem != null) {
            flush();
        }
        return Optional.ofNullable(problem != null ? problem : writeProblem);
    }

    /**
     * {@inheritDoc} Also a rollback another process of the host found and wrote to the file since
     * this one last read it: the file's bytes are read at every call and taken in when they changed
     * (a long-lived gate otherwise only learns it at a flush, and one whose marks did not rise would
     * not flush). A rollback this process knows and the file lost (moved aside, replaced by an older
     * copy) is written back before this returns.
     */
    @Override
    public Optional<Rollback> rolledBack(String namespace, String life) {
        synchronized (this) {
            try {
                byte[] before = knownBytes;
                Contents contents = readKnown();
                if (knownBytes != before || before == null) {
                    learn(contents); // only what changed needs taking in
                }
            } catch (Unreadable e) {
                unreadable(e.getMessage()); // the attempt stops on it (marks_unreadable)
            }
        }
        Optional<Rollback> known = super.rolledBack(namespace, life);
        if (known.isPresent() && !persistedRollbacks.contains(new Life(namespace, life))) {
            flush(); // the file lost it (moved aside, an older copy): written back before anyone relies on the file
        }
        return known;
    }

    /** What the file holds now (other processes of the host write it too), and what this process saw. */
    @Override
    public synchronized Set<String> lives(String namespace) {
        reload();
        return super.lives(namespace);
    }

    @Override
    public void flush() {
        Map<Life, Long> mine = risen(marks);
        if (mine.isEmpty() && unwrittenRollbacks().isEmpty()) {
            return;
        }
        synchronized (this) {
            if (risen(mine).isEmpty() && unwrittenRollbacks().isEmpty()) {
                return; // the flush this one waited for wrote them
            }
            // An executor interrupted while it armed or recorded still flushes what it saw (a flagged thread's
            // FileChannel.lock throws and closes the channel): the flag is cleared for the file's I/O, then restored.
            boolean flagged = Thread.interrupted();
            try {
                if (!Files.isDirectory(file.toAbsolutePath().getParent())) {
                    Files.createDirectories(file.toAbsolutePath().getParent());
                }
                Object monitor = IN_PROCESS.computeIfAbsent(file.toAbsolutePath().normalize(), p -> new Object());
                synchronized (monitor) {
                    merge(risen(marks)); // all risen by now: flushes waiting behind this one find theirs written
                }
                if (writeProblem != null) {
                    writeProblem = null;
                    LOG.info("oncegate updates its zxid marks in {} again", file);
                }
            } catch (IOException | RuntimeException e) {
                if (writeProblem == null) {
                    LOG.warn("oncegate could not update its zxid marks in {} ({}): every attempt stops"
                            + " (marks_unreadable) until it can", file, e.toString());
                }
                writeProblem = "marks file cannot be written: " + file + " (" + e + "): a later process of this host"
                        + " would not know the zxids this one saw, so a restore of the ensemble from an older snapshot"
                        + " could go unseen; make it writable (its directory's permissions, free space, the state"
                        + " directory's --state-dir or ONCEGATE_STATE_DIR)";
            } finally {
                if (flagged) {
                    Thread.currentThread().interrupt();
                }
            }
        }
    }

    /** The lives whose rollback this process found and the file is not known to hold. */
    private Set<Life> unwrittenRollbacks() {
        Set<Life> out = new HashSet<>();
        for (Life life : rollbacks.keySet()) {
            if (!persistedRollbacks.contains(life)) {
                out.add(life);
            }
        }
        return out;
    }

    /** The marks of {@code observed} above what the file is known to hold. */
    private Map<Life, Long> risen(Map<Life, Long> observed) {
        Map<Life, Long> out = new HashMap<>();
        observed.forEach((life, zxid) -> {
            if (zxid > persisted.getOrDefault(life, -1L)) {
                out.put(life, zxid);
            }
        });
        return out;
    }

    /** Under this monitor: reads the file, takes in its marks, and remembers whether it could. */
    private void reload() {
        try {
            learn(Contents.read(file));
        } catch (Unreadable e) {
            unreadable(e.getMessage());
        }
    }

    private void learn(Contents contents) {
        unreadable(null);
        // What the file is known to hold is what it holds now: it may have lost entries (moved aside, an older copy).
        persisted.clear();
        persistedRollbacks.clear();
        for (Entry e : contents.entries()) {
            if (e.mark() != null) {
                Life life = new Life(e.mark().namespace(), e.mark().genesisId());
                persisted.merge(life, e.mark().zxid(), Math::max);
                observe(life.namespace(), life.genesisId(), e.mark().zxid());
                if (e.rollback() != null) {
                    rollbacks.putIfAbsent(life, e.rollback());
                    persistedRollbacks.add(life);
                }
            }
        }
    }

    private void unreadable(String why) {
        if (why != null && problem == null) {
            LOG.warn("{}", why);
        } else if (why == null && problem != null) {
            LOG.info("oncegate reads its zxid marks file {} again", file);
        }
        problem = why;
    }

    /**
     * Under the file lock: re-reads the file, raises the entries of {@code observed} (adding the
     * missing ones), keeps every other entry as it was, and replaces the file when anything changed.
     * An unreadable file is left alone.
     */
    private void merge(Map<Life, Long> observed) throws IOException {
        Path lockFile = file.resolveSibling(file.getFileName() + ".lock");
        try (FileChannel channel = FileChannel.open(lockFile, StandardOpenOption.CREATE, StandardOpenOption.WRITE);
             FileLock lock = channel.lock()) {
            Contents contents;
            try {
                contents = readKnown();
            } catch (Unreadable e) {
                unreadable(e.getMessage());
                return;
            }
            learn(contents);
            // What the file holds now, which may be less than it was known to hold (moved aside, replaced by a
            // copy): whatever this process knows above it is written too, rollbacks included.
            Map<Life, Long> inFile = new HashMap<>();
            Set<Life> fileRollbacks = new HashSet<>();
            for (Entry e : contents.entries()) {
                if (e.mark() != null) {
                    Life life = new Life(e.mark().namespace(), e.mark().genesisId());
                    inFile.merge(life, e.mark().zxid(), Math::max);
                    if (e.rollback() != null) {
                        fileRollbacks.add(life);
                    }
                }
            }
            observed = new HashMap<>(observed);
            for (Map.Entry<Life, Long> m : marks.entrySet()) {
                if (m.getValue() > inFile.getOrDefault(m.getKey(), -1L)) {
                    observed.merge(m.getKey(), m.getValue(), Math::max);
                }
            }
            Set<Life> verdicts = new HashSet<>(rollbacks.keySet());
            verdicts.removeAll(fileRollbacks);
            Instant now = Instant.now();
            List<Object> entries = new ArrayList<>();
            List<Entry> decoded = new ArrayList<>(); // what the entries written decode to, for the next flush
            Set<Life> raised = new HashSet<>();
            boolean changed = false;
            for (Entry e : contents.entries()) {
                Life life = e.mark() == null ? null : new Life(e.mark().namespace(), e.mark().genesisId());
                Long zxid = life == null ? null : observed.get(life);
                boolean verdict = life != null && e.rollback() == null && verdicts.contains(life);
                if ((zxid == null && !verdict) || (life != null && !raised.add(life))) {
                    entries.add(e.raw());
                    decoded.add(e);
                    continue;
                }
                long seen = zxid == null ? e.mark().zxid() : zxid;
                Set<String> at = new TreeSet<>(e.mark().seenAt());
                changed |= at.add(seenAt) || seen > e.mark().zxid() || verdict;
                long top = Math.max(seen, e.mark().zxid());
                Instant updated = seen > e.mark().zxid() ? now : e.mark().updated();
                Map<String, Object> entry = e.fields();
                entry.put("zxid", top);
                entry.put("seen_at", new ArrayList<>(at));
                entry.put("updated", Instants.format(updated));
                ZxidMarks.Rollback rollback = e.rollback();
                if (verdict) {
                    rollback = rollbacks.get(life);
                    entry.put("rolled_back", Contents.rollback(rollback));
                }
                entries.add(entry);
                decoded.add(new Entry(entry, new ZxidMarks.Mark(life.namespace(), life.genesisId(), top, at, updated),
                        rollback));
            }
            Map<Life, Long> missing = new HashMap<>(observed);
            for (Life life : verdicts) {
                missing.merge(life, Math.max(rollbacks.get(life).mark(), marks.getOrDefault(life, 0L)), Math::max);
            }
            for (Map.Entry<Life, Long> o : missing.entrySet()) {
                if (!raised.contains(o.getKey())) {
                    changed = true;
                    Map<String, Object> entry = Contents.entry(o.getKey(), o.getValue(), seenAt, now);
                    ZxidMarks.Rollback rollback = verdicts.contains(o.getKey()) ? rollbacks.get(o.getKey()) : null;
                    if (rollback != null) {
                        entry.put("rolled_back", Contents.rollback(rollback));
                    }
                    entries.add(entry);
                    decoded.add(new Entry(entry, new ZxidMarks.Mark(o.getKey().namespace(), o.getKey().genesisId(),
                            o.getValue(), Set.of(seenAt), now), rollback));
                }
            }
            if (changed) {
                Map<String, Object> root = contents.withMarks(entries);
                byte[] bytes = Json.encode(root);
                knownBytes = null; // until the file holds them
                knownContents = null;
                write(bytes);
                knownBytes = bytes;
                knownContents = new Contents(root, List.copyOf(decoded));
            }
            observed.forEach((life, zxid) -> persisted.merge(life, zxid, Math::max));
            persistedRollbacks.addAll(verdicts);
        }
    }

    /**
     * Under the file lock: the file's contents, decoded only when its bytes are not the ones this
     * instance last read or wrote (equal bytes decode to equal contents).
     */
    private Contents readKnown() throws Unreadable {
        byte[] bytes = Contents.bytes(file);
        if (bytes != null && knownBytes != null && Arrays.equals(bytes, knownBytes)) {
            return knownContents;
        }
        Contents contents = Contents.decode(file, bytes);
        knownBytes = bytes;
        knownContents = contents;
        return contents;
    }

    private void write(byte[] bytes) throws IOException {
        Path tmp = Files.createTempFile(file.toAbsolutePath().getParent(), file.getFileName().toString(), ".tmp");
        try {
            Files.write(tmp, bytes);
            try {
                Files.move(tmp, file, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
            } catch (AtomicMoveNotSupportedException e) {
                Files.move(tmp, file, StandardCopyOption.REPLACE_EXISTING);
            }
        } catch (IOException | RuntimeException e) {
            Files.deleteIfExists(tmp);
            throw e;
        }
    }

    /** {@link ZxidMarks#read}. */
    static List<ZxidMarks.Mark> load(Path file) {
        try {
            List<ZxidMarks.Mark> out = new ArrayList<>();
            for (Entry e : Contents.read(file).entries()) {
                if (e.mark() != null) {
                    out.add(e.mark());
                }
            }
            return out;
        } catch (Unreadable e) {
            throw new OncegateException(e.getMessage());
        }
    }

    /** The file as a whole cannot be read; the message says so, and what to do. */
    private static final class Unreadable extends Exception {
        Unreadable(Path file, String problem) {
            super("marks file unreadable: " + file + " " + problem + ": this host's rollback witness cannot be read,"
                    + " so its workers stop before any lease write. Repair the file, or move it aside (this host then"
                    + " forgets the zxids it saw: see deploy/RUNBOOK.md, 'The zxid marks file cannot be read');"
                    + " the next attempt reads it again", null, false, false);
        }
    }

    /**
     * One entry of the {@code "marks"} list: the JSON value it was read as, and its mark, or null
     * when this version cannot read it, with the rollback found for its life, or null for none.
     */
    private record Entry(Object raw, ZxidMarks.Mark mark, ZxidMarks.Rollback rollback) {

        Entry(Object raw, ZxidMarks.Mark mark) {
            this(raw, mark, null);
        }

        /** The fields of a mark's entry, in their order, to change and write back. */
        Map<String, Object> fields() {
            Map<String, Object> out = new LinkedHashMap<>();
            ((Map<?, ?>) raw).forEach((name, value) -> out.put((String) name, value));
            return out;
        }

        static Entry of(Object raw) {
            if (!(raw instanceof Map<?, ?> m) || !(m.get("namespace") instanceof String ns)
                    || !(m.get("genesis") instanceof String genesis) || !(m.get("zxid") instanceof Long zxid)
                    || !(m.get("seen_at") instanceof List<?> at) || !(m.get("updated") instanceof String updated)) {
                return new Entry(raw, null);
            }
            Set<String> seen = new TreeSet<>();
            for (Object a : at) {
                if (!(a instanceof String address)) {
                    return new Entry(raw, null);
                }
                seen.add(address);
            }
            ZxidMarks.Mark mark;
            try {
                mark = new ZxidMarks.Mark(ns, genesis, zxid, seen, Instants.parse(updated));
            } catch (DateTimeParseException e) {
                return new Entry(raw, null);
            }
            return new Entry(raw, mark, m.containsKey("rolled_back") ? rollback(m.get("rolled_back")) : null);
        }

        /** A {@code rolled_back} field; one this version cannot read still counts as a rollback found (zeros, the epoch). */
        private static ZxidMarks.Rollback rollback(Object field) {
            if (field instanceof Map<?, ?> r && r.get("mark") instanceof Long mark && r.get("zxid") instanceof Long zxid
                    && r.get("at") instanceof String at) {
                try {
                    return new ZxidMarks.Rollback(mark, zxid, Instants.parse(at));
                } catch (DateTimeParseException e) {
                    // counts as found, below
                }
            }
            return new ZxidMarks.Rollback(0, 0, Instant.EPOCH);
        }
    }

    /** The file's top-level object (its fields kept, but for {@code "marks"}) and its entries in order. */
    private record Contents(Map<String, Object> root, List<Entry> entries) {

        static Contents read(Path file) throws Unreadable {
            return decode(file, bytes(file));
        }

        /** The file's bytes, or null when there is no file. */
        static byte[] bytes(Path file) throws Unreadable {
            try {
                return Files.readAllBytes(file);
            } catch (NoSuchFileException e) {
                return null;
            } catch (IOException | RuntimeException e) {
                throw new Unreadable(file, "cannot be read (" + e + ")");
            }
        }

        /** The contents of {@code bytes} read from {@code file} (null: no file). */
        static Contents decode(Path file, byte[] bytes) throws Unreadable {
            if (bytes == null) {
                return new Contents(Map.of("v", 1L), List.of());
            }
            Map<String, Object> root;
            try {
                root = Json.decodeObject(bytes);
            } catch (IllegalArgumentException e) {
                throw new Unreadable(file, "is not JSON (" + e.getMessage() + ")");
            }
            if (!(root.get("marks") instanceof List<?> list)) {
                throw new Unreadable(file, "has no \"marks\" list at its top level");
            }
            List<Entry> entries = new ArrayList<>();
            for (Object o : list) {
                entries.add(Entry.of(o));
            }
            return new Contents(root, entries);
        }

        /** The top-level object with {@code marks} in place of the entries read. */
        Map<String, Object> withMarks(List<Object> marks) {
            Map<String, Object> out = new LinkedHashMap<>();
            if (!root.containsKey("v")) {
                out.put("v", 1L);
            }
            out.putAll(root);
            out.put("marks", marks);
            return out;
        }

        static Map<String, Object> rollback(ZxidMarks.Rollback r) {
            Map<String, Object> o = new LinkedHashMap<>();
            o.put("mark", r.mark());
            o.put("zxid", r.zxid());
            o.put("at", Instants.format(r.at()));
            return o;
        }

        static Map<String, Object> entry(Life life, long zxid, String seenAt, Instant now) {
            Map<String, Object> o = new LinkedHashMap<>();
            o.put("namespace", life.namespace());
            o.put("genesis", life.genesisId());
            o.put("zxid", zxid);
            o.put("seen_at", List.of(seenAt));
            o.put("updated", Instants.format(now));
            return o;
        }
    }
}
