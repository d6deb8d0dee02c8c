package dev.oncegate.deploy;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;

import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The README's metrics table against real scrapes, both ways: every series exported is in the
 * table with exactly its tags and tag values, and every series in the table is exported. The
 * table's rows come from three places, each checked against its own: the gate's meters against a
 * gate's registry ({@link GateWorkload}), {@code oncegate.exporter.*} against {@code oncegate
 * exporter}, and {@code oncegate.run.*} against {@code oncegate run --metrics-textfile}'s file
 * ({@link CliWorkload}), which also carries the gate's counters and timers under the gate's names
 * and tags. Since every meter is registered up front, every tag value listed must be in the scrape.
 */
class MeterTableTest {

    /** One row of the README's table. */
    record Row(String meter, List<String> series, String type, Map<String, Set<String>> tags, String unit) {

        /** Where the series of this row are exported. */
        Source source() {
            return meter.startsWith("oncegate.exporter.") ? Source.EXPORTER
                    : meter.startsWith("oncegate.run.") ? Source.TEXTFILE : Source.GATE;
        }
    }

    /** The three exporters of oncegate's metrics. */
    enum Source { GATE, EXPORTER, TEXTFILE }

    static PrometheusText scrape;
    static Map<Source, PrometheusText> scrapes;
    static List<Row> table;
    static Map<String, Set<String>> decisionPairs;

    @BeforeAll
    static void scrapeAndRead() throws Exception {
        scrape = GateWorkload.scrape();
        scrapes = Map.of(Source.GATE, scrape, Source.EXPORTER, CliWorkload.exporterScrape(), Source.TEXTFILE, CliWorkload.textfile());
        String metrics = section(RepoFiles.read("README.md"), "## Metrics");
        table = rows(metrics, "| meter |").stream().map(MeterTableTest::row).toList();
        decisionPairs = new LinkedHashMap<>();
        for (List<String> cells : rows(metrics, "| kind |")) {
            decisionPairs.put(unquote(cells.get(0)), codes(cells.get(1)));
        }
    }

    static Set<String> documented(Source source) {
        return table.stream().filter(r -> r.source() == source).flatMap(r -> r.series().stream())
                .collect(Collectors.toCollection(TreeSet::new));
    }

    static String namespaceOf(Source source) {
        return source == Source.GATE ? GateWorkload.NAMESPACE : CliWorkload.NAMESPACE;
    }

    @Test
    void everyExportedSeries_isInTheTable_andEverySeriesInTheTable_isExported() {
        for (Source source : List.of(Source.GATE, Source.EXPORTER)) {
            PrometheusText exported = scrapes.get(source);
            assertThat(exported.names()).as(source + " series missing from the README table").isSubsetOf(documented(source));
            assertThat(documented(source)).as("README series not exported by " + source).isSubsetOf(exported.names());
            assertThat(exported.names()).as(source + " exports only oncegate_ series").allMatch(n -> n.startsWith("oncegate_"));
        }
    }

    @Test
    void theTextfile_carriesTheGatesCountersAndTimers_underTheirNames_plusItsOwnRows() {
        PrometheusText file = scrapes.get(Source.TEXTFILE);
        Set<String> gateCounters = new TreeSet<>();
        Set<String> gateTimers = new TreeSet<>();
        for (Row row : table) {
            if (row.source() == Source.GATE && row.type().equals("counter")) {
                gateCounters.addAll(row.series());
            } else if (row.source() == Source.GATE && row.type().equals("timer")) {
                row.series().stream().filter(s -> s.endsWith("_count") || s.endsWith("_sum")).forEach(gateTimers::add);
            }
        }
        Set<String> expected = new TreeSet<>(gateCounters);
        expected.addAll(gateTimers);
        expected.addAll(documented(Source.TEXTFILE));
        assertThat(file.names()).as("the textfile: the gate's counters, its timers' count and sum, and its own rows")
                .isEqualTo(expected);
        gateCounters.forEach(c -> assertThat(file.types()).containsEntry(c, "counter"));
        gateTimers.forEach(t -> assertThat(file.types()).containsEntry(t.substring(0, t.lastIndexOf('_')), "summary"));
        assertThat(file.value("oncegate_decisions_total", "kind", "proceed")).as("the run that delivered").isEqualTo(1);
    }

    @Test
    void eachSeries_hasExactlyTheDocumentedTags_andTagValues() {
        for (Row row : table) {
            checkTags(row, scrapes.get(row.source()), namespaceOf(row.source()), false);
            if (row.source() == Source.GATE) {
                checkTags(row, scrapes.get(Source.TEXTFILE), CliWorkload.NAMESPACE, true);
            }
        }
    }

    /** The row's series in {@code scrape} carry exactly its tags and tag values; {@code present}: only those there. */
    private static void checkTags(Row row, PrometheusText scrape, String namespace, boolean present) {
        for (String series : row.series()) {
            List<PrometheusText.Sample> samples = scrape.series(series);
            if (present && samples.isEmpty()) {
                continue;
            }
            for (PrometheusText.Sample sample : samples) {
                Set<String> keys = new TreeSet<>(sample.labels().keySet());
                if (series.endsWith("_bucket")) {
                    assertThat(keys).contains("le");
                    keys.remove("le");
                }
                assertThat(keys).as(series + " tags").isEqualTo(new TreeSet<>(row.tags().keySet()));
            }
            row.tags().forEach((tag, values) -> {
                Set<String> seen = samples.stream().map(s -> s.labels().get(tag)).collect(Collectors.toCollection(TreeSet::new));
                if (values != null) {
                    assertThat(seen).as(series + " values of " + tag).isEqualTo(new TreeSet<>(values));
                }
            });
            assertThat(samples).as(series).isNotEmpty().extracting(s -> s.labels().get("zk_namespace")).containsOnly(namespace);
        }
    }

    @Test
    void decisionKindsAndReasons_areExactlyThePairsTable() {
        Set<String> scraped = scrape.series("oncegate_decisions_total").stream()
                .map(s -> s.labels().get("kind") + "/" + s.labels().get("reason")).collect(Collectors.toCollection(TreeSet::new));
        Set<String> documented = new TreeSet<>();
        decisionPairs.forEach((kind, reasons) -> reasons.forEach(r -> documented.add(kind + "/" + r)));
        assertThat(scraped).isEqualTo(documented);
        assertThat(decisionPairs.keySet()).containsExactly("proceed", "stop_sent", "stop_unknown", "stop_busy", "stop_unavailable");
    }

    @Test
    void typesNamesAndUnits_matchTheTable() {
        for (Row row : table) {
            PrometheusText exported = scrapes.get(row.source());
            String prefix = row.meter().replace('.', '_');
            for (String series : row.series()) {
                assertThat(series).as(row.meter()).startsWith(prefix);
                switch (row.type()) {
                    case "counter" -> assertThat(exported.types()).containsEntry(series, "counter");
                    case "gauge" -> assertThat(exported.types()).containsEntry(series, "gauge");
                    case "timer" -> {
                        assertThat(row.unit()).isEqualTo("seconds");
                        String base = prefix + "_seconds";
                        assertThat(series).isIn(base + "_count", base + "_sum", base + "_max", base + "_bucket");
                        assertThat(exported.types()).containsEntry(base, "histogram").containsEntry(base + "_max", "gauge");
                    }
                    default -> throw new AssertionError(row.meter() + ": unknown type " + row.type());
                }
            }
        }
    }

    @Test
    void twoGatesOnOneRegistry_reportUnderTwoGateSlots() {
        assertThat(scrape.series("oncegate_executors_active")).extracting(s -> s.labels().get("gate")).containsExactlyInAnyOrder("0", "1");
        assertThat(scrape.series("oncegate_zookeeper_connection")).filteredOn(s -> s.labels().get("state").equals("connected"))
                .extracting(PrometheusText.Sample::value).containsOnly(1.0);
        assertThat(scrape.series("oncegate_outcomes_total")).filteredOn(s -> s.value() > 0)
                .extracting(s -> s.labels().get("outcome")).containsExactlyInAnyOrder("sent_verified", "not_sent", "send_status_unknown");
    }

    // ---- reading the README -------------------------------------------------------------------

    static String section(String markdown, String heading) {
        int start = markdown.indexOf("\n" + heading + "\n");
        assertThat(start).as("README has a section " + heading).isNotNegative();
        int end = markdown.indexOf("\n## ", start + 1);
        return markdown.substring(start, end < 0 ? markdown.length() : end);
    }

    /** The body rows of the first table whose header line starts with {@code header}, as cells. */
    static List<List<String>> rows(String text, String header) {
        List<List<String>> rows = new ArrayList<>();
        String[] lines = text.split("\n");
        int i = 0;
        while (i < lines.length && !lines[i].startsWith(header)) {
            i++;
        }
        assertThat(i).as("a table starting with " + header).isLessThan(lines.length);
        for (i += 2; i < lines.length && lines[i].startsWith("|"); i++) {
            String line = lines[i].strip();
            List<String> cells = new ArrayList<>();
            for (String cell : line.substring(1, line.length() - 1).split(" \\| ")) {
                cells.add(cell.strip());
            }
            rows.add(cells);
        }
        return rows;
    }

    private static final Pattern TAG = Pattern.compile("`([a-z_]+)`(?:\\s*\\(([^)]*)\\))?");
    private static final Pattern CODE = Pattern.compile("`([^`]+)`");
    private static final Pattern BRACES = Pattern.compile("^(.*)\\{([^}]*)}$");

    static Row row(List<String> cells) {
        assertThat(cells).as("six cells: meter, series, type, tags, unit, meaning").hasSize(6);
        List<String> series = new ArrayList<>();
        for (String code : codes(cells.get(1))) {
            Matcher m = BRACES.matcher(code);
            if (m.matches()) {
                for (String suffix : m.group(2).split(",")) {
                    series.add(m.group(1) + suffix.strip());
                }
            } else {
                series.add(code);
            }
        }
        Map<String, Set<String>> tags = new LinkedHashMap<>();
        Matcher m = TAG.matcher(cells.get(3));
        while (m.find()) {
            Set<String> values = m.group(2) == null ? null : codes(m.group(2));
            tags.put(m.group(1), values == null || values.isEmpty() ? null : values);
        }
        return new Row(unquote(cells.get(0)), series, cells.get(2), tags, cells.get(4));
    }

    static Set<String> codes(String cell) {
        Set<String> codes = new LinkedHashSet<>();
        Matcher m = CODE.matcher(cell);
        while (m.find()) {
            codes.add(m.group(1));
        }
        return codes;
    }

    static String unquote(String cell) {
        return cell.replace("`", "").strip();
    }
}
