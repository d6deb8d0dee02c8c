package dev.oncegate.deploy;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The dashboard and the alert rules name only metrics that exist: the gate's against a real
 * scrape ({@link GateWorkload}), the exporter's against {@code deploy/exporter-metrics.txt}, which
 * a real exporter's scrape ({@link CliWorkload}) matches both ways, and Prometheus's own {@code up}.
 */
class DeployMetricsTest {

    static final ObjectMapper JSON = new ObjectMapper();
    static final ObjectMapper YAML = new ObjectMapper(new YAMLFactory());
    /** Series Prometheus makes itself, not any exporter. */
    static final Set<String> PROMETHEUS_OWN = Set.of("up");

    static Set<String> gateSeries;
    static Map<String, Exported> exporterMetrics;

    record Exported(String type, Set<String> labels, String help) {
    }

    @BeforeAll
    static void load() throws Exception {
        gateSeries = GateWorkload.scrape().names();
        exporterMetrics = exporterMetrics();
    }

    /** deploy/exporter-metrics.txt: NAME TYPE LABELS HELP. */
    static Map<String, Exported> exporterMetrics() {
        Map<String, Exported> out = new LinkedHashMap<>();
        for (String line : RepoFiles.read("deploy/exporter-metrics.txt").split("\n")) {
            if (line.isBlank() || line.startsWith("#")) {
                continue;
            }
            String[] f = line.split("\\s+", 4);
            assertThat(f).as(line).hasSize(4);
            assertThat(f[0]).matches("oncegate_exporter_[a-z0-9_]+");
            assertThat(f[1]).isIn("gauge", "counter");
            Set<String> labels = f[2].equals("-") ? Set.of() : new TreeSet<>(List.of(f[2].split(",")));
            assertThat(labels).doesNotContain("namespace", "job", "instance", "pod", "service", "container");
            assertThat(out.put(f[0], new Exported(f[1], labels, f[3]))).as("declared twice: " + f[0]).isNull();
        }
        return out;
    }

    /** Every PromQL expression of the dashboard's panels (rows included), by panel title. */
    static Map<String, List<String>> dashboardQueries(JsonNode dashboard) {
        Map<String, List<String>> queries = new LinkedHashMap<>();
        List<JsonNode> panels = new ArrayList<>();
        dashboard.path("panels").forEach(p -> {
            panels.add(p);
            p.path("panels").forEach(panels::add);
        });
        for (JsonNode panel : panels) {
            if (panel.path("type").asText().equals("row")) {
                continue;
            }
            List<String> exprs = new ArrayList<>();
            panel.path("targets").forEach(t -> exprs.add(t.path("expr").asText()));
            queries.put(panel.path("title").asText(), exprs);
        }
        return queries;
    }

    static JsonNode dashboard() throws Exception {
        return JSON.readTree(RepoFiles.path("deploy/grafana/oncegate-dashboard.json").toFile());
    }

    static Map<String, String> alertExpressions() throws Exception {
        JsonNode rules = YAML.readTree(RepoFiles.path("deploy/prometheus/oncegate-alerts.yml").toFile());
        Map<String, String> out = new LinkedHashMap<>();
        rules.path("groups").forEach(g -> g.path("rules").forEach(r -> out.put(r.path("alert").asText(), r.path("expr").asText())));
        return out;
    }

    private void assertExists(String where, String expr) {
        Set<String> names = PromQl.metricNames(expr);
        assertThat(names).as(where + ": names no metric: " + expr).isNotEmpty();
        for (String name : names) {
            boolean exists = gateSeries.contains(name) || exporterMetrics.containsKey(name) || PROMETHEUS_OWN.contains(name);
            assertThat(exists).as(where + " uses " + name + ", which neither the gate's scrape nor"
                    + " deploy/exporter-metrics.txt has: " + expr).isTrue();
        }
    }

    @Test
    void dashboard_isProvisioningReadyJson_withQueriesOnEveryPanel() throws Exception {
        JsonNode dashboard = dashboard();
        assertThat(dashboard.path("uid").asText()).isEqualTo("oncegate");
        assertThat(dashboard.has("id")).as("a provisioned dashboard has no database id").isFalse();
        assertThat(dashboard.path("templating").path("list").findValuesAsText("name")).contains("datasource", "zk_namespace");
        Map<String, List<String>> queries = dashboardQueries(dashboard);
        assertThat(queries).hasSizeGreaterThan(10);
        queries.forEach((title, exprs) -> assertThat(exprs).as(title).isNotEmpty().allMatch(e -> !e.isBlank()));
        Set<Integer> ids = new TreeSet<>();
        dashboard.path("panels").forEach(p -> assertThat(ids.add(p.path("id").asInt())).as("panel id unique").isTrue());
        dashboard.path("panels").forEach(p -> {
            if (!p.path("type").asText().equals("row")) {
                assertThat(p.path("datasource").path("uid").asText()).as(p.path("title").asText()).isEqualTo("${datasource}");
            }
        });
    }

    @Test
    void everyDashboardQuery_namesOnlyExistingMetrics() throws Exception {
        dashboardQueries(dashboard()).forEach((title, exprs) -> exprs.forEach(e -> assertExists("panel '" + title + "'", e)));
        JsonNode templating = dashboard().path("templating").path("list");
        for (JsonNode variable : templating) {
            String definition = variable.path("definition").asText();
            Matcher m = Pattern.compile("label_values\\(\\s*([a-zA-Z_:][a-zA-Z0-9_:]*)\\s*,").matcher(definition);
            if (m.find()) {
                assertExists("variable " + variable.path("name").asText(), m.group(1));
            }
        }
    }

    @Test
    void dashboard_coversWhatTheIssueAsksFor() throws Exception {
        String all = String.join("\n", dashboardQueries(dashboard()).values().stream().flatMap(List::stream).toList());
        assertThat(all).contains("oncegate_decisions_total", "oncegate_outcomes_total",
                "oncegate_election_wait_seconds_bucket", "oncegate_boundary_duration_seconds_bucket",
                "oncegate_fenced_writes_total", "oncegate_lease_takeovers_total", "kind=\"stop_unavailable\"",
                "oncegate_zookeeper_connection", "oncegate_executors_active", "histogram_quantile");
        for (String exported : exporterMetrics.keySet()) {
            assertThat(all).as("a backlog panel for " + exported).contains(exported);
        }
    }

    @Test
    void everyAlertExpression_namesOnlyExistingMetrics() throws Exception {
        Map<String, String> alerts = alertExpressions();
        assertThat(alerts).hasSizeGreaterThanOrEqualTo(10);
        alerts.forEach((alert, expr) -> assertExists("alert " + alert, expr));
    }

    @Test
    void declaredExporterMetrics_areExactlyWhatARunningExporterServes() throws Exception {
        PrometheusText scrape = CliWorkload.exporterScrape();

        assertThat(scrape.names()).as("served, against deploy/exporter-metrics.txt").isEqualTo(exporterMetrics.keySet());
        exporterMetrics.forEach((name, declared) -> {
            assertThat(scrape.types()).as(name + " type").containsEntry(name, declared.type());
            assertThat(scrape.helps()).as(name + " help").containsEntry(name, declared.help());
            assertThat(scrape.series(name)).as(name).isNotEmpty().allSatisfy(s ->
                    assertThat(s.labels().keySet()).as(name + " labels").isEqualTo(declared.labels()));
        });
        assertThat(scrape.series("oncegate_exporter_keys")).extracting(s -> s.labels().get("state"))
                .containsExactlyInAnyOrder("open", "leased", "armed", "sent_verified", "send_status_unknown", "not_sent");
        assertThat(scrape.value("oncegate_exporter_keys", "state", "sent_verified")).as("the key the workload delivered").isEqualTo(1);
    }

    @Test
    void promQlNames_areFoundWhereTheyHide() {
        assertThat(PromQl.metricNames("histogram_quantile(0.95, sum by (le, kind) (rate(a_bucket{x=~\"$v\"}[$__rate_interval])))"))
                .containsExactly("a_bucket");
        assertThat(PromQl.metricNames("time() - max by (ns) (b) > 900 or absent(up{job=\"e\"}) unless c offset 5m"))
                .containsExactly("b", "c", "up");
        assertThat(PromQl.metricNames("sum without (gate, state) (d{state=~\"a|b\"}) > 1e3")).containsExactly("d");
    }
}
