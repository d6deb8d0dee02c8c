package dev.oncegate;

import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.file.AtomicMoveNotSupportedException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * {@link ZxidMarks#file}: the marks of a host in one JSON file,
 * {@code {"v":1,"marks":[{"namespace":…,"genesis":…,"zxid":…,"seen_at":[…],"updated":…}]}}.
 * Loaded once when created; {@link #flush} merges what this process observed into the file under
 * an exclusive lock on {@code FILE.lock} (maximum zxid, union of addresses) and replaces the file
 * atomically, so concurrent processes never lose each other's marks.
 *
 * <p>Thread-safe: the in-memory marks are concurrent, flush is synchronized.
 */
final class FileZxidMarks extends MemoryZxidMarks {

    private static final Logger LOG = LoggerFactory.getLogger(FileZxidMarks.class);

    /**
     * One monitor per marks file in this JVM: a file lock is held per process, so threads of one
     * process (several gates) must also take turns among themselves.
     */
    private static final Map<Path, Object> IN_PROCESS = new java.util.concurrent.ConcurrentHashMap<>();

    private final Path file;
    private final String seenAt;
    private final Map<Life, Long> loaded = new HashMap<>();

    FileZxidMarks(Path file, String seenAt) {
        this.file = file;
        this.seenAt = seenAt;
        for (ZxidMarks.Mark m : load(file)) {
            Life life = new Life(m.namespace(), m.genesisId());
            loaded.put(life, m.zxid());
            marks.put(life, m.zxid());
        }
    }

    @Override
    public synchronized void flush() {
        Map<Life, Long> observed = new HashMap<>();
        marks.forEach((life, zxid) -> {
            if (zxid > loaded.getOrDefault(life, -1L)) {
                observed.put(life, zxid);
            }
        });
        if (observed.isEmpty()) {
            return;
        }
        try {
            Files.createDirectories(file.toAbsolutePath().getParent());
            Path lockFile = file.resolveSibling(file.getFileName() + ".lock");
            Object monitor = IN_PROCESS.computeIfAbsent(file.toAbsolutePath().normalize(), p -> new Object());
            synchronized (monitor) {
                merge(observed, lockFile);
            }
        } catch (IOException | RuntimeException e) {
            LOG.warn("oncegate could not update its zxid marks in {} ({}): rollback detection on this host"
                    + " covers this process only", file, e.toString());
        }
    }

    /** Under the file lock: re-read the file, take the maximum of each mark, replace the file. */
    private void merge(Map<Life, Long> observed, Path lockFile) throws IOException {
        try (FileChannel channel = FileChannel.open(lockFile, StandardOpenOption.CREATE, StandardOpenOption.WRITE);
             FileLock lock = channel.lock()) {
            Map<Life, ZxidMarks.Mark> merged = new LinkedHashMap<>();
            for (ZxidMarks.Mark m : load(file)) {
                merged.put(new Life(m.namespace(), m.genesisId()), m);
            }
            Instant now = Instant.now();
            observed.forEach((life, zxid) -> merged.merge(life,
                    new ZxidMarks.Mark(life.namespace(), life.genesisId(), zxid, Set.of(seenAt), now),
                    (old, mine) -> {
                        Set<String> at = new TreeSet<>(old.seenAt());
                        at.add(seenAt);
                        return new ZxidMarks.Mark(life.namespace(), life.genesisId(), Math.max(old.zxid(), zxid), at,
                                zxid > old.zxid() ? now : old.updated());
                    }));
            write(merged.values());
            observed.forEach(loaded::put);
        }
    }

    private void write(Iterable<ZxidMarks.Mark> all) throws IOException {
        List<Object> list = new ArrayList<>();
        for (ZxidMarks.Mark m : all) {
            Map<String, Object> o = new LinkedHashMap<>();
            o.put("namespace", m.namespace());
            o.put("genesis", m.genesisId());
            o.put("zxid", m.zxid());
            o.put("seen_at", new ArrayList<>(new TreeSet<>(m.seenAt())));
            o.put("updated", m.updated().toString());
            list.add(o);
        }
        Map<String, Object> root = new LinkedHashMap<>();
        root.put("v", 1L);
        root.put("marks", list);
        Path tmp = Files.createTempFile(file.toAbsolutePath().getParent(), file.getFileName().toString(), ".tmp");
        try {
            Files.write(tmp, Json.encode(root));
            try {
                Files.move(tmp, file, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
            } catch (AtomicMoveNotSupportedException e) {
                Files.move(tmp, file, StandardCopyOption.REPLACE_EXISTING);
            }
        } finally {
            Files.deleteIfExists(tmp);
        }
    }

    static List<ZxidMarks.Mark> load(Path file) {
        if (!Files.exists(file)) {
            return List.of();
        }
        try {
            Map<String, Object> root = Json.decodeObject(Files.readAllBytes(file));
            if (!Long.valueOf(1).equals(root.get("v")) || !(root.get("marks") instanceof List<?> list)) {
                throw new IllegalArgumentException("not a version 1 marks file");
            }
            List<ZxidMarks.Mark> out = new ArrayList<>();
            for (Object o : list) {
                if (!(o instanceof Map<?, ?> m) || !(m.get("namespace") instanceof String ns)
                        || !(m.get("genesis") instanceof String genesis) || !(m.get("zxid") instanceof Long zxid)
                        || !(m.get("seen_at") instanceof List<?> at) || !(m.get("updated") instanceof String updated)) {
                    throw new IllegalArgumentException("a mark lacks namespace, genesis, zxid, seen_at or updated");
                }
                Set<String> seen = new TreeSet<>();
                for (Object a : at) {
                    seen.add(String.valueOf(a));
                }
                out.add(new ZxidMarks.Mark(ns, genesis, zxid, seen, Instant.parse(updated)));
            }
            return out;
        } catch (IOException | RuntimeException e) {
            LOG.warn("oncegate cannot read its zxid marks file {} ({}); treating it as empty", file, e.toString());
            return List.of();
        }
    }
}
