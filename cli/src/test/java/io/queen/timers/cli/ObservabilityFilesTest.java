package io.queen.timers.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import io.queen.timers.cli.ObservabilityKit.Query;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * The observability kit's files, parsed (Jackson: JSON and YAML) and checked for the shape Grafana and
 * Prometheus need, wired together as docker-compose mounts them, and documented. Which metrics the queries
 * read is {@link DashboardMetricsIT}'s; the PromQL grammar is promtool's ({@code .ci/run} checks the file
 * {@link #everyPanelHasAQueryOnTheProvisionedDatasource} writes).
 */
class ObservabilityFilesTest {

    static final Pattern DURATION = Pattern.compile("\\d+[smhd]");
    static final Pattern PINNED = Pattern.compile("[a-z0-9./-]+:v?\\d+\\.\\d+\\.\\d+");

    final JsonNode dashboard = ObservabilityKit.json(ObservabilityKit.DASHBOARD);
    final JsonNode compose = ObservabilityKit.yaml(ComposeFileTest.DOCKER.resolve("docker-compose.yml"));
    final JsonNode services = compose.get("services");

    @Test
    void everyPanelHasAQueryOnTheProvisionedDatasource() throws IOException {
        JsonNode datasource = ObservabilityKit.yaml(ObservabilityKit.DATASOURCES).get("datasources").get(0);
        assertThat(datasource.get("type").asText()).isEqualTo("prometheus");
        assertThat(datasource.get("url").asText()).isEqualTo("http://prometheus:9090");
        String uid = datasource.get("uid").asText();

        assertThat(dashboard.get("uid").asText()).isNotBlank();
        assertThat(dashboard.get("title").asText()).isNotBlank();
        Set<Integer> ids = new HashSet<>();
        dashboard.get("panels").forEach(p -> assertThat(ids.add(p.get("id").asInt())).as("panel id %s is unique", p.get("id")).isTrue());
        List<JsonNode> panels = ObservabilityKit.dataPanels();
        assertThat(panels).hasSizeGreaterThanOrEqualTo(10);
        for (JsonNode p : panels) {
            String title = p.path("title").asText();
            assertThat(title).as("a panel's title").isNotBlank();
            assertThat(p.path("description").asText()).as("panel '%s' says what it shows", title).isNotBlank();
            assertThat(p.path("datasource").path("uid").asText()).as("panel '%s' datasource", title).isEqualTo(uid);
            JsonNode grid = p.get("gridPos");
            assertThat(grid.get("x").asInt() + grid.get("w").asInt()).as("panel '%s' fits the 24 columns", title).isLessThanOrEqualTo(24);
            assertThat(p.path("targets").size()).as("panel '%s' has a query", title).isPositive();
            Set<String> refIds = new HashSet<>();
            for (JsonNode t : p.get("targets")) {
                assertThat(t.path("expr").asText()).as("panel '%s' query %s", title, t.path("refId")).isNotBlank();
                assertThat(refIds.add(t.path("refId").asText())).as("panel '%s' refIds are unique", title).isTrue();
                assertThat(t.path("datasource").path("uid").asText()).as("panel '%s' query datasource", title).isEqualTo(uid);
                PromQl.selectors(t.get("expr").asText());   // readable, balanced
            }
        }
        assertThat(panels).extracting(p -> p.get("title").asText()).contains("Ingest rate", "Consumer lag", "Verdicts by type",
                "Due backlog", "Fires per second", "Fire lateness percentiles", "Fire failures by class", "Dead-letter queue",
                "Outbox backlog by topic", "Relay state", "Readiness",
                "Heap used and max", "GC pause", "Connection pools", "Kafka clients");

        // every query, as a recording rule, for promtool's parser (.ci/run: promtool check rules)
        StringBuilder rules = new StringBuilder("# written by ObservabilityFilesTest: the dashboard's queries, for `promtool check rules`\n"
                + "groups:\n  - name: dashboard-queries\n    rules:\n");
        int n = 0;
        for (Query q : ObservabilityKit.dashboardQueries()) {
            String expr = q.expr().replace("$__rate_interval", "1m");
            assertThat(expr).as(q.where() + ": a Grafana variable promtool cannot read").doesNotContain("$");
            rules.append("      - record: dashboard:query_").append(++n).append('\n')
                    .append("        expr: '").append(expr.replace("'", "''")).append("'\n");
        }
        Files.writeString(Path.of("target", "dashboard-queries.rules.yml"), rules);
    }

    @Test
    void everyAlertHasAnExpressionAForASeverityAndWordsAndAUnitTestThatFiresIt() {
        List<JsonNode> rules = ObservabilityKit.rules();
        Set<String> names = new HashSet<>();
        for (JsonNode r : rules) {
            String name = r.path("alert").asText();
            assertThat(name).as("every rule is an alert").isNotBlank();
            assertThat(names.add(name)).as("alert %s is unique", name).isTrue();
            assertThat(r.path("expr").asText()).as("%s expr", name).isNotBlank();
            PromQl.selectors(r.get("expr").asText());
            assertThat(r.path("for").asText()).as("%s for", name).matches(DURATION);
            assertThat(r.path("labels").path("severity").asText()).as("%s severity", name).isIn("warning", "critical");
            assertThat(r.path("annotations").path("summary").asText()).as("%s summary", name).isNotBlank();
            assertThat(r.path("annotations").path("description").asText()).as("%s description", name).isNotBlank();
        }
        // what the issue asks to be alerted on
        assertThat(expr(rules, "QueenTimersFireLatenessHigh")).contains("histogram_quantile(0.99", "queen_timers_fire_lateness_seconds_bucket");
        assertThat(expr(rules, "QueenTimersDeadLettered")).contains("queen_timers_dead_lettered_total");
        assertThat(expr(rules, "QueenTimersAuditOutboxBacklog")).contains("queen_timers_audit_outbox_backlog");
        assertThat(expr(rules, "QueenTimersNotReady")).contains("queen_timers_ready");
        assertThat(expr(rules, "QueenTimersConsumerLag")).contains("queen_timers_bridge_ingest_lag_records");

        // promtool runs alerts.test.yml (.ci/run): each alert has a case where it fires
        JsonNode tests = ObservabilityKit.yaml(ObservabilityKit.ALERT_TESTS);
        assertThat(tests.get("rule_files").get(0).asText()).isEqualTo(ObservabilityKit.ALERTS.getFileName().toString());
        Set<String> fired = new HashSet<>();
        tests.get("tests").forEach(t -> t.path("alert_rule_test").forEach(a -> {
            if (a.path("exp_alerts").size() > 0) {
                fired.add(a.get("alertname").asText());
            }
        }));
        assertThat(fired).containsExactlyInAnyOrderElementsOf(names);
    }

    @Test
    void composeRunsPrometheusAndGrafanaOnlyUnderTheProfileWithPinnedImagesAndTheKitMounted() {
        services.fields().forEachRemaining(s -> {
            boolean kit = s.getKey().equals("prometheus") || s.getKey().equals("grafana");
            if (kit) {
                assertThat(strings(s.getValue().get("profiles"))).as("service %s", s.getKey()).containsExactly("observability");
                assertThat(s.getValue().get("image").asText()).as("service %s image is pinned", s.getKey()).matches(PINNED);
            } else {
                assertThat(s.getValue().get("profiles")).as("service %s runs without a profile", s.getKey()).isNull();
            }
        });
        JsonNode prometheus = services.get("prometheus");
        assertThat(strings(prometheus.get("volumes"))).contains("./observability/prometheus:/etc/prometheus:ro");
        assertThat(strings(prometheus.get("command"))).contains("--config.file=/etc/prometheus/prometheus.yml");
        JsonNode config = ObservabilityKit.yaml(ObservabilityKit.PROMETHEUS);
        config.get("rule_files").forEach(f -> assertThat(ObservabilityKit.PROMETHEUS.resolveSibling(f.asText())).exists());

        // each service is scraped by its compose name on the port the services listen on
        String port = compose.get("x-queen-env").get("QUEEN_HTTP_PORT").asText();   // the services' environment (a YAML anchor)
        List<String> scraped = new ArrayList<>();
        config.get("scrape_configs").forEach(job -> job.get("dns_sd_configs").forEach(sd -> {
            assertThat(sd.get("port").asText()).isEqualTo(port);
            sd.get("names").forEach(n -> scraped.add(n.asText()));
        }));
        assertThat(scraped).containsExactlyInAnyOrder("bridge", "sweeper", "http");

        JsonNode grafana = services.get("grafana");
        assertThat(strings(grafana.get("volumes"))).contains("./observability/grafana/provisioning:/etc/grafana/provisioning:ro");
        String dashboards = ObservabilityKit.yaml(ObservabilityKit.DASHBOARD_PROVIDERS).get("providers").get(0).get("options").get("path").asText();
        assertThat(strings(grafana.get("volumes"))).contains("./observability/grafana/dashboards:" + dashboards + ":ro");
        assertThat(grafana.get("environment").get("GF_DASHBOARDS_DEFAULT_HOME_DASHBOARD_PATH").asText())
                .isEqualTo(dashboards + "/" + ObservabilityKit.DASHBOARD.getFileName());
    }

    @Test
    void theOperationsDocSaysWhatEveryPanelAndEveryAlertMeans() throws IOException {
        String readme = Files.readString(Path.of("..", "docs", "operations.md"));
        int start = readme.indexOf("\n## Dashboards and alerts\n");
        assertThat(start).as("docs/operations.md section 'Dashboards and alerts'").isNotNegative();
        int end = readme.indexOf("\n## ", start + 1);
        String section = readme.substring(start, end < 0 ? readme.length() : end);
        assertThat(section).contains("--profile observability");
        for (JsonNode p : ObservabilityKit.dataPanels()) {
            assertThat(section).as("docs/operations.md explains panel '%s'", p.get("title").asText()).contains("**" + p.get("title").asText() + "**");
        }
        for (JsonNode r : ObservabilityKit.rules()) {
            assertThat(section).as("docs/operations.md explains alert %s", r.get("alert").asText()).contains("`" + r.get("alert").asText() + "`");
        }
    }

    private static String expr(List<JsonNode> rules, String alert) {
        return rules.stream().filter(r -> r.path("alert").asText().equals(alert)).findFirst()
                .orElseThrow(() -> new AssertionError("no alert " + alert)).get("expr").asText();
    }

    private static List<String> strings(JsonNode array) {
        List<String> out = new ArrayList<>();
        if (array != null) {
            array.forEach(n -> out.add(n.asText()));
        }
        return out;
    }
}
