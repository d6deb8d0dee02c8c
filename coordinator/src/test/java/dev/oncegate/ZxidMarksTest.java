package dev.oncegate;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.tuple;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The host's zxid marks: the maximum per namespace life survives every process that flushes; an
 * entry this version cannot read is kept as it is, and a file it cannot read at all is never used
 * nor overwritten.
 */
class ZxidMarksTest {

    @TempDir
    Path dir;

    @Test
    void inMemory_keepsTheMaximumPerNamespaceLife() {
        ZxidMarks marks = ZxidMarks.inMemory();
        marks.observe("/a", "g1", 10);
        marks.observe("/a", "g1", 7);
        marks.observe("/a", "g2", 3);

        assertThat(marks.highest("/a", "g1")).isEqualTo(10);
        assertThat(marks.highest("/a", "g2")).isEqualTo(3);
        assertThat(marks.highest("/b", "g1")).isZero();
    }

    @Test
    void file_aRollbackFound_isKeptByTheFile_forEveryLaterProcess_whateverOthersFlush() {
        Path file = dir.resolve("state/zxid-marks.json");
        ZxidMarks finder = ZxidMarks.file(file, "127.0.0.1:2181");
        ZxidMarks other = ZxidMarks.file(file, "127.0.0.1:2181");
        finder.observe("/oncegate", "g1", 100);
        finder.flush();
        java.time.Instant at = java.time.Instant.parse("2026-12-04T20:00:00Z");

        finder.rolledBack("/oncegate", "g1", new ZxidMarks.Rollback(100, 12, at));
        finder.rolledBack("/oncegate", "g1", new ZxidMarks.Rollback(100, 40, at.plusSeconds(1))); // the first is kept
        finder.flush(); // nothing rose: the rollback alone is written
        other.observe("/oncegate", "g1", 150); // another process, which never saw it, raises the mark afterwards
        other.observe("/oncegate", "g1#1", 160);
        other.flush();

        ZxidMarks later = ZxidMarks.file(file, "127.0.0.1:2181");
        assertThat(later.rolledBack("/oncegate", "g1")).contains(new ZxidMarks.Rollback(100, 12, at));
        assertThat(later.highest("/oncegate", "g1")).isEqualTo(150);
        assertThat(later.rolledBack("/oncegate", "g1#1")).as("another life").isEmpty();
        assertThat(other.rolledBack("/oncegate", "g1")).as("learnt by the other's flush").isPresent();
        assertThat(later.lives("/oncegate")).containsExactlyInAnyOrder("g1", "g1#1");
    }

    @Test
    void file_movedAsideUnderARunningProcess_getsItsMarksAndItsRollbackBack_atItsNextFlush() throws Exception {
        Path file = dir.resolve("aside/zxid-marks.json");
        ZxidMarks running = ZxidMarks.file(file, "127.0.0.1:2181");
        running.observe("/ns", "L", 10);
        running.observe("/ns", "M", 7);
        running.rolledBack("/ns", "L", new ZxidMarks.Rollback(10, 3, java.time.Instant.parse("2026-12-04T20:00:00Z")));
        running.flush();
        Files.move(file, dir.resolve("aside/zxid-marks.json.unreadable"));

        running.observe("/ns", "L", 11);
        running.flush();

        ZxidMarks later = ZxidMarks.file(file, "127.0.0.1:2181");
        assertThat(later.rolledBack("/ns", "L")).as("a new process of the host").isPresent();
        assertThat(later.highest("/ns", "L")).isEqualTo(11);
        assertThat(later.highest("/ns", "M")).isEqualTo(7);
    }

    /** A process holding a verdict stops before every lease write, so its marks never rise: the verdict still comes back. */
    @Test
    void file_movedAsideUnderAProcessHoldingAVerdict_getsTheVerdictBack_withoutARisenMark() throws Exception {
        Path file = dir.resolve("aside2/zxid-marks.json");
        ZxidMarks running = ZxidMarks.file(file, "127.0.0.1:2181");
        running.observe("/ns", "L", 10);
        running.rolledBack("/ns", "L", new ZxidMarks.Rollback(10, 3, java.time.Instant.parse("2026-12-04T20:00:00Z")));
        running.flush();
        Files.move(file, dir.resolve("aside2/zxid-marks.json.unreadable"));

        // What the running process does from then on: every attempt checks the witness and the kept verdict, and
        // stops before writing (no mark rises); its gate's close flushes.
        assertThat(running.unreadable()).isEmpty();
        assertThat(running.rolledBack("/ns", "L")).isPresent();
        running.flush();

        ZxidMarks later = ZxidMarks.file(file, "127.0.0.1:2181");
        assertThat(later.rolledBack("/ns", "L")).as("a new process of the host").isPresent();
        assertThat(later.highest("/ns", "L")).isEqualTo(10);
    }

    @Test
    void file_aRolledBackFieldItCannotRead_countsAsARollbackFound() throws Exception {
        Path file = dir.resolve("zxid-marks.json");
        Files.writeString(file, "{\"v\":1,\"marks\":[{\"namespace\":\"/oncegate\",\"genesis\":\"g1\",\"zxid\":100,"
                + "\"seen_at\":[\"127.0.0.1:2181\"],\"updated\":\"2026-12-04T20:00:00Z\",\"rolled_back\":\"yes\"}]}");

        ZxidMarks marks = ZxidMarks.file(file, "127.0.0.1:2181");

        assertThat(marks.rolledBack("/oncegate", "g1")).isPresent();
        assertThat(marks.highest("/oncegate", "g1")).isEqualTo(100);
        marks.observe("/oncegate", "g1", 120);
        marks.flush();
        assertThat(Files.readString(file)).contains("\"rolled_back\":\"yes\"", "\"zxid\":120");
    }

    @Test
    void inMemory_keepsTheFirstRollbackFoundPerLife() {
        ZxidMarks marks = ZxidMarks.inMemory();
        java.time.Instant at = java.time.Instant.parse("2026-12-04T20:00:00Z");

        marks.rolledBack("/a", "g1", new ZxidMarks.Rollback(10, 3, at));
        marks.rolledBack("/a", "g1", new ZxidMarks.Rollback(20, 4, at));

        assertThat(marks.rolledBack("/a", "g1")).contains(new ZxidMarks.Rollback(10, 3, at));
        assertThat(marks.rolledBack("/a", "g1#1")).isEmpty();
    }

    @Test
    void file_mergesTheMarksOfSeveralProcesses_keepingTheMaximumAndEveryAddress() {
        Path file = dir.resolve("state/zxid-marks.json");
        ZxidMarks first = ZxidMarks.file(file, "127.0.0.1:2181");
        ZxidMarks second = ZxidMarks.file(file, "zk1:2181,zk2:2181");
        first.observe("/oncegate", "g1", 100);
        second.observe("/oncegate", "g1", 90);
        second.observe("/other", "g9", 5);

        first.flush();
        second.flush();

        assertThat(ZxidMarks.file(file, "x").highest("/oncegate", "g1")).isEqualTo(100);
        assertThat(ZxidMarks.read(file)).anySatisfy(m -> {
            assertThat(m.namespace()).isEqualTo("/oncegate");
            assertThat(m.zxid()).isEqualTo(100);
            assertThat(m.seenAt()).containsExactlyInAnyOrder("127.0.0.1:2181", "zk1:2181,zk2:2181");
        }).anySatisfy(m -> assertThat(m.namespace()).isEqualTo("/other"));
    }

    @Test
    void file_flushedByAnInterruptedThread_stillPersists_andTheFlagIsKept() {
        // Given marks observed by an executor whose thread was interrupted (a SIGTERM while it armed)
        Path file = dir.resolve("zxid-marks.json");
        ZxidMarks marks = ZxidMarks.file(file, "127.0.0.1:2181");
        marks.observe("/oncegate", "g1", 42);
        Thread.currentThread().interrupt();
        try {
            // When it flushes them (a flagged thread's FileChannel.lock would throw and close the channel)
            marks.flush();
            // Then they are on the file all the same, and the flag is still set for the caller
            assertThat(Thread.currentThread().isInterrupted()).isTrue();
        } finally {
            Thread.interrupted();
        }
        assertThat(ZxidMarks.file(file, "x").highest("/oncegate", "g1")).isEqualTo(42);
        // and an interrupted thread that reads the file (a new gate, say) does not take it for a broken one
        // (Files.readAllBytes is not cut short by the flag; this keeps it so)
        Thread.currentThread().interrupt();
        try {
            ZxidMarks reader = ZxidMarks.file(file, "y");
            assertThat(reader.unreadable()).isEmpty();
            assertThat(reader.highest("/oncegate", "g1")).isEqualTo(42);
        } finally {
            Thread.interrupted();
        }
    }

    @Test
    void file_concurrentFlushes_loseNothing() throws Exception {
        Path file = dir.resolve("zxid-marks.json");
        ExecutorService pool = Executors.newFixedThreadPool(8);
        try {
            List<Future<?>> done = new ArrayList<>();
            for (int i = 0; i < 16; i++) {
                int n = i;
                done.add(pool.submit(() -> {
                    ZxidMarks marks = ZxidMarks.file(file, "host-" + n);
                    marks.observe("/ns-" + n, "g", 1000 + n);
                    marks.flush();
                }));
            }
            for (Future<?> f : done) {
                f.get(30, TimeUnit.SECONDS);
            }
        } finally {
            pool.shutdownNow();
        }
        assertThat(ZxidMarks.read(file)).hasSize(16);
        assertThat(ZxidMarks.file(file, "x").highest("/ns-15", "g")).isEqualTo(1015);
    }

    @Test
    void file_entriesItCannotParse_areKeptVerbatim_andTheOthersStillCount() throws Exception {
        // Given a file with an entry of a later format, another namespace's mark and ours
        Path file = dir.resolve("zxid-marks.json");
        String later = "{\"namespace\":\"/oncegate\",\"genesis\":\"g1\",\"zxid\":\"0x64\",\"v\":2}";
        String notAnObject = "[1,true,null,{\"x\":\"é\\n\"}]";
        String other = "{\"namespace\":\"/other\",\"genesis\":\"g9\",\"zxid\":77,\"seen_at\":[\"zk9:2181\"],"
                + "\"updated\":\"2024-01-02T03:04:05Z\"}";
        String ours = "{\"namespace\":\"/oncegate\",\"genesis\":\"g1\",\"zxid\":40,\"seen_at\":[\"a:2181\"],"
                + "\"updated\":\"2024-01-02T03:04:05Z\",\"epoch\":3}";
        Files.writeString(file, "{\"v\":1,\"host\":\"h\",\"marks\":[" + later + "," + notAnObject + "," + other + ","
                + ours + "]}", StandardCharsets.UTF_8);

        // When it is loaded, and a higher mark of ours is flushed
        ZxidMarks marks = ZxidMarks.file(file, "b:2181");
        long loaded = marks.highest("/oncegate", "g1");
        marks.observe("/oncegate", "g1", 50);
        marks.flush();

        // Then the marks it reads counted, and every entry it cannot read is still there byte for byte
        assertThat(loaded).isEqualTo(40);
        assertThat(marks.unreadable()).isEmpty();
        String now = Files.readString(file, StandardCharsets.UTF_8);
        assertThat(now).startsWith("{\"v\":1,\"host\":\"h\",\"marks\":[" + later + "," + notAnObject + "," + other + ",");
        assertThat(ZxidMarks.read(file)).extracting(ZxidMarks.Mark::namespace, ZxidMarks.Mark::zxid)
                .containsExactly(tuple("/other", 77L), tuple("/oncegate", 50L));
        List<?> entries = (List<?>) Json.decodeObject(now.getBytes(StandardCharsets.UTF_8)).get("marks");
        Map<String, Object> raised = new LinkedHashMap<>();
        ((Map<?, ?>) entries.get(entries.size() - 1)).forEach((k, v) -> raised.put((String) k, v));
        assertThat(raised).containsEntry("epoch", 3L).containsEntry("zxid", 50L)
                .containsEntry("seen_at", List.of("a:2181", "b:2181"));
    }

    @Test
    void file_notJson_isUnreadable_andNeverOverwritten() throws Exception {
        // Given a file that is not a marks file as a whole
        Path file = dir.resolve("zxid-marks.json");
        Files.writeString(file, "{not json", StandardCharsets.UTF_8);

        // When marks are loaded from it and a flush is asked for
        ZxidMarks marks = ZxidMarks.file(file, "127.0.0.1:2181");
        marks.observe("/oncegate", "g1", 42);
        marks.flush();

        // Then they say why they cannot be trusted, and the file is untouched
        assertThat(marks.unreadable()).hasValueSatisfying(why -> assertThat(why)
                .startsWith("marks file unreadable: " + file + " is not JSON").contains("move it aside"));
        assertThat(file).hasContent("{not json");
        assertThatThrownBy(() -> ZxidMarks.read(file)).isInstanceOf(OncegateException.class)
                .hasMessageStartingWith("marks file unreadable: " + file);
    }

    @Test
    void file_withoutAMarksList_isUnreadable_untilItIsRemoved() throws Exception {
        Path file = dir.resolve("zxid-marks.json");
        Files.writeString(file, "{\"v\":1,\"marks\":{}}", StandardCharsets.UTF_8);
        ZxidMarks marks = ZxidMarks.file(file, "a");
        assertThat(marks.unreadable()).hasValueSatisfying(why -> assertThat(why).contains("\"marks\" list"));

        Files.delete(file);

        assertThat(marks.unreadable()).as("read again once moved aside").isEmpty();
        marks.observe("/oncegate", "g1", 7);
        marks.flush();
        assertThat(ZxidMarks.read(file)).singleElement().satisfies(m -> assertThat(m.zxid()).isEqualTo(7));
    }

    @Test
    void file_concurrentFlushesOfOneInstance_eachReturnsWithItsMarkInTheFile() throws Exception {
        // Given one instance shared by sixteen threads (one gate, many threads)
        Path file = dir.resolve("zxid-marks.json");
        ZxidMarks marks = ZxidMarks.file(file, "a");
        ExecutorService pool = Executors.newFixedThreadPool(16);
        try {
            List<Future<Long>> done = new ArrayList<>();
            for (int i = 0; i < 16; i++) {
                long zxid = 1000 + i;
                done.add(pool.submit(() -> {
                    for (long z = zxid; z < zxid + 16 * 50; z += 16) {
                        marks.observe("/oncegate", "g1", z);
                        marks.flush();
                        // Then each flush returns only once its own mark (or a higher one) is in the file
                        long inFile = ZxidMarks.read(file).get(0).zxid();
                        if (inFile < z) {
                            return z;
                        }
                    }
                    return -1L;
                }));
            }
            for (Future<Long> f : done) {
                assertThat(f.get(30, TimeUnit.SECONDS)).as("a flush returned before its mark was written").isEqualTo(-1L);
            }
        } finally {
            pool.shutdownNow();
        }
        assertThat(ZxidMarks.read(file)).singleElement().satisfies(m -> assertThat(m.zxid()).isEqualTo(1000 + 16 * 50 - 1));
    }

    @Test
    void file_anotherWriterBetweenTwoFlushes_isMerged_notOverwrittenByWhatTheFirstWroteBefore() {
        // Given: one instance flushed, so it knows the file's bytes; then another raised a mark and added one
        Path file = dir.resolve("zxid-marks.json");
        ZxidMarks first = ZxidMarks.file(file, "a");
        ZxidMarks second = ZxidMarks.file(file, "b");
        first.observe("/oncegate", "g1", 10);
        first.flush();
        second.observe("/oncegate", "g1", 30);
        second.observe("/other", "g2", 5);
        second.flush();

        // When: the first flushes a mark of its own again (its remembered bytes are no longer the file's)
        first.observe("/oncegate", "g1", 20);
        first.flush();
        first.observe("/third", "g3", 1);
        first.flush(); // now the file's bytes are the ones it wrote: it merges without decoding them again

        // Then: nothing the other wrote was lost, and each mark is the maximum seen
        ZxidMarks reader = ZxidMarks.file(file, "x");
        assertThat(reader.highest("/oncegate", "g1")).isEqualTo(30);
        assertThat(reader.highest("/other", "g2")).isEqualTo(5);
        assertThat(reader.highest("/third", "g3")).isEqualTo(1);
        assertThat(ZxidMarks.read(file)).anySatisfy(m -> {
            assertThat(m.namespace()).isEqualTo("/oncegate");
            assertThat(m.seenAt()).containsExactlyInAnyOrder("a", "b");
        });
    }

    @Test
    void file_flushWithNothingNew_writesNothing() {
        Path file = dir.resolve("zxid-marks.json");
        ZxidMarks.file(file, "a").flush();
        assertThat(file).doesNotExist();
    }
}
