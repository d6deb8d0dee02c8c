package dev.oncegate;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The host's zxid marks: the maximum per namespace life survives every process that flushes. */
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
    void file_unreadable_isTreatedAsEmpty_andReplacedOnFlush() throws Exception {
        Path file = dir.resolve("zxid-marks.json");
        Files.writeString(file, "{not json", StandardCharsets.UTF_8);

        ZxidMarks marks = ZxidMarks.file(file, "127.0.0.1:2181");
        assertThat(marks.highest("/oncegate", "g1")).isZero();
        marks.observe("/oncegate", "g1", 42);
        marks.flush();

        assertThat(ZxidMarks.read(file)).singleElement().satisfies(m -> assertThat(m.zxid()).isEqualTo(42));
    }

    @Test
    void file_flushWithNothingNew_writesNothing() {
        Path file = dir.resolve("zxid-marks.json");
        ZxidMarks.file(file, "a").flush();
        assertThat(file).doesNotExist();
    }
}
