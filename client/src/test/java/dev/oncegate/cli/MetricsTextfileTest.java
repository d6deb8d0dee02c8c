package dev.oncegate.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

import dev.oncegate.cli.MetricsTextfile.Sample;
import dev.oncegate.cli.MetricsTextfile.Type;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The textfile's own rules, without ZooKeeper: counters and summaries add up, gauges are set,
 * what an update does not mention stays; labels and help survive quotes, backslashes and
 * newlines; a foreign file is moved aside; leftovers of killed writers go; permissions stay;
 * threads of one process lose no increment.
 */
class MetricsTextfileTest {

    @TempDir
    Path dir;

    static Sample counter(String labelValue, double value) {
        return new Sample("a_total", Type.COUNTER, "A counter", "a_total", Map.of("x", labelValue), value);
    }

    static Sample gauge(double value) {
        return new Sample("g_seconds", Type.GAUGE, "A gauge", "g_seconds", Map.of(), value);
    }

    static List<Sample> summary(double count, double sum) {
        return List.of(new Sample("s_seconds", Type.SUMMARY, "A summary", "s_seconds_count", Map.of("k", "v"), count),
                new Sample("s_seconds", Type.SUMMARY, "A summary", "s_seconds_sum", Map.of("k", "v"), sum));
    }

    MetricsTextfile textfile() {
        return new MetricsTextfile(dir.resolve("oncegate.prom"), Duration.ofSeconds(5));
    }

    MetricsTextfile.Contents onDisk() throws Exception {
        return MetricsTextfile.Contents.parse(Files.readString(dir.resolve("oncegate.prom"), StandardCharsets.UTF_8));
    }

    static List<Sample> all(List<Sample> first, Sample... more) {
        List<Sample> out = new ArrayList<>(first);
        out.addAll(List.of(more));
        return out;
    }

    @Test
    void update_addsCountersAndSummaries_setsGauges_andKeepsWhatItDoesNotMention() throws Exception {
        MetricsTextfile file = textfile();

        file.update(all(summary(1, 0.25), counter("1", 2), gauge(10)));
        file.update(List.of(counter("1", 3), counter("2", 1), gauge(20)));
        file.update(summary(2, 0.5));

        MetricsTextfile.Contents contents = onDisk();
        assertThat(contents.value("a_total{x=\"1\"}")).isEqualTo(5);
        assertThat(contents.value("a_total{x=\"2\"}")).isEqualTo(1);
        assertThat(contents.value("g_seconds")).isEqualTo(20);
        assertThat(contents.value("s_seconds_count{k=\"v\"}")).isEqualTo(3);
        assertThat(contents.value("s_seconds_sum{k=\"v\"}")).isEqualTo(0.75);
        assertThat(Files.readString(dir.resolve("oncegate.prom"))).startsWith(MetricsTextfile.HEADER)
                .contains("# HELP a_total A counter\n# TYPE a_total counter\na_total{x=\"1\"} 5\na_total{x=\"2\"} 1\n")
                .contains("# TYPE s_seconds summary\n").contains("# TYPE g_seconds gauge\ng_seconds 20\n");
    }

    @Test
    void labelsAndHelp_withQuotesBackslashesAndNewlines_readBackAsWritten() throws Exception {
        String odd = "/a\"b\\c\nd";
        Sample sample = new Sample("a_total", Type.COUNTER, "help with \\ and\nnewline", "a_total", Map.of("zk_namespace", odd), 1);

        textfile().update(List.of(sample));
        textfile().update(List.of(sample));

        assertThat(Files.readString(dir.resolve("oncegate.prom"))).contains("a_total{zk_namespace=\"/a\\\"b\\\\c\\nd\"} 2\n")
                .contains("# HELP a_total help with \\\\ and\\nnewline\n");
        assertThat(onDisk().value(sample.series())).isEqualTo(2);
    }

    @Test
    void aFileOncegateDidNotWrite_isMovedAside_andCountingStartsAfresh() throws Exception {
        Files.writeString(dir.resolve("oncegate.prom"), "something else entirely\n");

        textfile().update(List.of(counter("1", 1)));

        assertThat(onDisk().value("a_total{x=\"1\"}")).isEqualTo(1);
        assertThat(Files.readString(dir.resolve("oncegate.prom.unparsable"))).isEqualTo("something else entirely\n");
    }

    @Test
    void leftoversOfKilledWriters_areRemoved_andTheFilesPermissionsKept() throws Exception {
        textfile().update(List.of(counter("1", 1)));
        Files.setPosixFilePermissions(dir.resolve("oncegate.prom"), PosixFilePermissions.fromString("rw-r-----"));
        Files.writeString(dir.resolve("oncegate.prom.4242.tmp"), "half a fi");
        Files.writeString(dir.resolve("oncegate.prom.notes.tmp"), "not ours");

        textfile().update(List.of(counter("1", 1)));

        assertThat(dir.resolve("oncegate.prom.4242.tmp")).doesNotExist();
        assertThat(dir.resolve("oncegate.prom.notes.tmp")).exists();
        assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(dir.resolve("oncegate.prom")))).isEqualTo("rw-r-----");
        assertThat(onDisk().value("a_total{x=\"1\"}")).isEqualTo(2);
    }

    /** The leftover scan compares names: a glob made of the name would fail on {@code [} and match others on {@code *}/{@code ?}. */
    @Test
    void aNameWithGlobCharacters_isWritten_andOnlyItsOwnLeftoversAreRemoved() throws Exception {
        Path odd = dir.resolve("jobs[a*?.prom");
        Files.writeString(dir.resolve("jobs[a*?.prom.4242.tmp"), "half a fi");
        Files.writeString(dir.resolve("jobs[abc.prom.4243.tmp"), "another file's writer, mid-write");

        new MetricsTextfile(odd, Duration.ofSeconds(5)).update(List.of(counter("1", 1)));

        assertThat(MetricsTextfile.Contents.parse(Files.readString(odd)).value("a_total{x=\"1\"}")).isEqualTo(1);
        assertThat(dir.resolve("jobs[a*?.prom.4242.tmp")).doesNotExist();
        assertThat(dir.resolve("jobs[abc.prom.4243.tmp")).exists();
    }

    @Test
    void threadsOfOneProcess_loseNoIncrement() throws Exception {
        ExecutorService pool = Executors.newFixedThreadPool(4);
        try {
            List<Callable<Void>> updates = new ArrayList<>();
            for (int i = 0; i < 40; i++) {
                updates.add(() -> {
                    textfile().update(List.of(counter("1", 1)));
                    return null;
                });
            }
            for (Future<Void> f : pool.invokeAll(updates)) {
                f.get();
            }
        } finally {
            pool.shutdownNow();
        }
        assertThat(onDisk().value("a_total{x=\"1\"}")).isEqualTo(40);
    }
}
