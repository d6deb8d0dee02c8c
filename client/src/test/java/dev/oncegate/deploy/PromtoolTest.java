package dev.oncegate.deploy;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * deploy/prometheus checked by Prometheus's own tool: the scrape config and the rules parse,
 * every alert's unit tests pass, and every dashboard query is valid PromQL. Needs {@code promtool}
 * (Debian's {@code prometheus} package): missing, it fails in CI and is skipped elsewhere.
 */
class PromtoolTest {

    static final ObjectMapper YAML = new ObjectMapper(new YAMLFactory());

    static Promtool.Result promtool(Path workDir, String... args) throws IOException, InterruptedException {
        return Promtool.run(workDir, null, args);
    }

    static Path prometheusDir() {
        return RepoFiles.path("deploy/prometheus");
    }

    @Test
    void scrapeConfig_andRules_pass_promtoolCheck() throws Exception {
        Promtool.Result config = promtool(prometheusDir(), "check", "config", "prometheus.yml");
        assertThat(config.exit()).as(config.output()).isZero();
        assertThat(config.output()).doesNotContain("WARNING");
        Promtool.Result rules = promtool(prometheusDir(), "check", "rules", "oncegate-alerts.yml");
        assertThat(rules.exit()).as(rules.output()).isZero();
    }

    @Test
    void everyAlert_passesItsUnitTests() throws Exception {
        Promtool.Result tests = promtool(prometheusDir(), "test", "rules", "oncegate-alerts.test.yml");
        assertThat(tests.exit()).as(tests.output()).isZero();
        assertThat(tests.output()).contains("SUCCESS");
    }

    @Test
    void everyAlert_hasAFiringUnitTest_aSummary_andARunbookSection() throws Exception {
        JsonNode rules = YAML.readTree(prometheusDir().resolve("oncegate-alerts.yml").toFile());
        JsonNode tests = YAML.readTree(prometheusDir().resolve("oncegate-alerts.test.yml").toFile());
        Set<String> firingInTests = new TreeSet<>();
        Set<String> quietInTests = new TreeSet<>();
        tests.path("tests").forEach(t -> t.path("alert_rule_test").forEach(a ->
                (a.path("exp_alerts").isEmpty() ? quietInTests : firingInTests).add(a.path("alertname").asText())));
        String runbook = RepoFiles.read("deploy/RUNBOOK.md");
        Set<String> alerts = new TreeSet<>();
        rules.path("groups").forEach(g -> g.path("rules").forEach(rule -> {
            String alert = rule.path("alert").asText();
            assertThat(alerts.add(alert)).as("alert defined twice: " + alert).isTrue();
            assertThat(rule.path("labels").path("severity").asText()).as(alert).isIn("critical", "warning");
            assertThat(rule.path("annotations").path("summary").asText()).as(alert + " summary").isNotBlank();
            String url = rule.path("annotations").path("runbook_url").asText();
            assertThat(url).as(alert + " runbook_url").isEqualTo("deploy/RUNBOOK.md#" + alert.toLowerCase());
            assertThat(runbook).as("RUNBOOK.md section for " + alert).contains("\n## " + alert + "\n");
        }));
        assertThat(firingInTests).as("alerts with a unit test that fires").isEqualTo(alerts);
        assertThat(quietInTests).as("alerts with a unit test that stays quiet").isEqualTo(alerts);
        assertThat(alerts).contains("OncegateSendStatusUnknown", "OncegateArmedWithoutOutcomeRising",
                "OncegateArmedWithoutOutcomeOld", "OncegateFailClosed", "OncegateFencedWrites",
                "OncegateZooKeeperConnectionLost", "OncegateUnreadableRecords", "OncegateNoDecisions",
                "OncegateExporterScanStale");
    }

    @Test
    void everyDashboardQuery_isValidPromQl(@TempDir Path dir) throws Exception {
        // Grafana's variables replaced by what they expand to, each query a recording rule.
        Map<String, List<String>> queries = DeployMetricsTest.dashboardQueries(DeployMetricsTest.dashboard());
        List<Map<String, String>> records = new ArrayList<>();
        queries.forEach((title, exprs) -> exprs.forEach(e -> {
            Map<String, String> rule = new LinkedHashMap<>();
            rule.put("record", "dashboard:panel_" + records.size());
            rule.put("expr", e.replace("$__rate_interval", "5m").replace("$zk_namespace", ".*"));
            records.add(rule);
        }));
        Path file = dir.resolve("dashboard-queries.yml");
        YAML.writeValue(file.toFile(), Map.of("groups", List.of(Map.of("name", "dashboard", "rules", records))));
        Promtool.Result check = promtool(dir, "check", "rules", file.getFileName().toString());
        assertThat(check.exit()).as(check.output()).isZero();
        assertThat(check.output()).contains("SUCCESS: " + records.size() + " rules found");
    }
}
