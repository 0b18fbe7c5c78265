package io.queen.timers.cli;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.dataformat.yaml.YAMLMapper;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/** docker/observability read as the tests need it: the dashboard, the alert rules, and every PromQL query in them. */
final class ObservabilityKit {

    static final Path DIR = Path.of("..", "docker", "observability");
    static final Path DASHBOARD = DIR.resolve("grafana/dashboards/queen-timers.json");
    static final Path PROMETHEUS = DIR.resolve("prometheus/prometheus.yml");
    static final Path ALERTS = DIR.resolve("prometheus/alerts.yml");
    static final Path ALERT_TESTS = DIR.resolve("prometheus/alerts.test.yml");
    static final Path DATASOURCES = DIR.resolve("grafana/provisioning/datasources/prometheus.yml");
    static final Path DASHBOARD_PROVIDERS = DIR.resolve("grafana/provisioning/dashboards/queen-timers.yml");

    /** One PromQL query and where it is written (for messages). */
    record Query(String where, String expr) {}

    private ObservabilityKit() {}

    static JsonNode json(Path p) {
        try {
            return new ObjectMapper().readTree(p.toFile());
        } catch (IOException e) {
            throw new UncheckedIOException(p + " is not JSON: " + e.getMessage(), e);
        }
    }

    static JsonNode yaml(Path p) {
        try {
            return new YAMLMapper().readTree(p.toFile());
        } catch (IOException e) {
            throw new UncheckedIOException(p + " is not YAML: " + e.getMessage(), e);
        }
    }

    /** The panels that show data (rows are headings). */
    static List<JsonNode> dataPanels() {
        List<JsonNode> out = new ArrayList<>();
        json(DASHBOARD).get("panels").forEach(p -> {
            if (!p.path("type").asText().equals("row")) {
                out.add(p);
            }
        });
        return out;
    }

    static List<Query> dashboardQueries() {
        List<Query> out = new ArrayList<>();
        for (JsonNode p : dataPanels()) {
            p.path("targets").forEach(t -> out.add(new Query("panel '" + p.path("title").asText() + "' query " + t.path("refId").asText(),
                    t.path("expr").asText())));
        }
        return out;
    }

    static List<JsonNode> rules() {
        List<JsonNode> out = new ArrayList<>();
        yaml(ALERTS).get("groups").forEach(g -> g.get("rules").forEach(out::add));
        return out;
    }

    static List<Query> alertQueries() {
        List<Query> out = new ArrayList<>();
        rules().forEach(r -> out.add(new Query("alert " + r.path("alert").asText(), r.path("expr").asText())));
        return out;
    }
}
