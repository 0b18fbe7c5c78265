package io.queen.timers.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.queen.timers.cli.ObservabilityKit.Query;
import io.queen.timers.cli.PromQl.Matcher;
import io.queen.timers.cli.PromQl.Selector;
import io.queen.timers.sql.Migrations;
import io.queen.timers.testkit.PostgresDatabase;
import io.queen.timers.testkit.TestKafka;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Every metric the Grafana dashboard and the alert rules read is exported by a running bridge or sweeper:
 * both run as the launcher runs them (their own HTTP ports), a few commands go through (a fire, an
 * {@code absent} cancel, a rejection) so the labelled series exist, /metrics is scraped over HTTP and every
 * selector of every query is looked up in it — the metric name (a histogram's {@code _bucket}, a summary's
 * {@code _sum}/{@code _count} are series of their own in the scrape), each label a matcher names, and the
 * values of its {@code =} and {@code =~} matchers. And the other way: every family the services export is
 * in the metrics table of docs/operations.md.
 */
class DashboardMetricsIT {

    /** Series Prometheus makes itself for every target; no process exports them. */
    static final Set<String> PROMETHEUS_OWN = Set.of("up");

    @RegisterExtension
    static final PostgresDatabase db = PostgresDatabase.initializedWith(Migrations::migrate);

    /** One sample line of the Prometheus text format: its series name and labels. */
    record Series(String name, Map<String, String> labels) {}

    @Test
    void everyMetricTheDashboardAndTheAlertsReadIsExportedByARunningBridgeOrSweeper() throws Exception {
        String commands = TestKafka.newTopic("dash-commands", 2);
        String audit = TestKafka.newTopic("dash-audit", 1);
        int bridgePort = Http.freePort();
        int sweeperPort = Http.freePort();
        Map<String, String> bridgeEnv = env(commands, audit, bridgePort);
        Map<String, String> sweeperEnv = env(commands, audit, sweeperPort);

        String bridgeScrape;
        String sweeperScrape;
        try (ServiceCommandsIT.Background bridge = ServiceCommandsIT.Background.run(bridgeEnv, "bridge");
             ServiceCommandsIT.Background sweeper = ServiceCommandsIT.Background.run(sweeperEnv, "sweeper")) {
            for (int port : new int[] {bridgePort, sweeperPort}) {
                await().atMost(Duration.ofSeconds(90)).ignoreExceptions().untilAsserted(() ->
                        assertThat(Http.get(port, "/health/ready")).satisfies(r -> assertThat(r.statusCode()).as(r.body()).isEqualTo(200)));
            }
            Cli scheduled = Cli.run(bridgeEnv, "schedule", "-t", commands, "-q", "dash.q", "-k", "soon", "--delay", "1s", "--wait=60s");
            assertThat(scheduled.out()).as(scheduled.err()).contains("verdict: scheduled");
            Cli absent = Cli.run(bridgeEnv, "cancel", "-t", commands, "-q", "dash.q", "-k", "nobody", "--wait=60s");
            assertThat(absent.out()).as(absent.err()).contains("verdict: absent");
            Cli rejected = Cli.run(bridgeEnv, "schedule", "-t", commands, "-q", "bad queue!", "-k", "k", "--delay", "1h", "--wait=60s");
            assertThat(rejected.exitCode()).as(rejected.err()).isEqualTo(1);

            await().atMost(Duration.ofSeconds(60)).untilAsserted(() -> assertThat(series(Http.get(sweeperPort, "/metrics").body()))
                    .anySatisfy(s -> assertThat(s.name() + s.labels()).isEqualTo("queen_timers_fired_total{result=fired}")));
            await().atMost(Duration.ofSeconds(60)).untilAsserted(() -> assertThat(Http.get(sweeperPort, "/metrics").body())
                    .as("the fired timer's lateness is recorded").contains("queen_timers_fire_lateness_seconds_count 1"));
            // A service that ran a while has collected; make sure this one has, so jvm_gc_pause_seconds exists. The JVM
            // tells the meter of a collection on its own notification thread, after System.gc() returns: wait for the
            // effect in each scrape (collecting again each round) instead of scraping at once and racing that thread.
            for (int port : new int[] {bridgePort, sweeperPort}) {
                await().atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(100)).untilAsserted(() -> {
                    System.gc();
                    assertThat(Http.get(port, "/metrics").body()).contains("jvm_gc_pause_seconds_count{");
                });
            }
            bridgeScrape = Http.get(bridgePort, "/metrics").body();
            sweeperScrape = Http.get(sweeperPort, "/metrics").body();
        }
        // the platform's meters (issue 27): the JVM's, the pools', the Kafka clients' of each service
        for (String scrape : List.of(bridgeScrape, sweeperScrape)) {
            assertThat(scrape).contains("jvm_memory_used_bytes{", "jvm_gc_pause_seconds_count{", "jvm_threads_live_threads ",
                    "process_cpu_usage ", "hikaricp_connections_active{", "kafka_admin_client_");
        }
        assertThat(bridgeScrape).contains("kafka_consumer_coordinator_", "queen_timers_bridge_fetch_errors_total ");
        assertThat(bridgeScrape + sweeperScrape).as("the active relay's producer").contains("kafka_producer_record_send_rate{");
        List<Series> exported = new ArrayList<>(series(bridgeScrape));
        exported.addAll(series(sweeperScrape));

        List<Query> queries = new ArrayList<>(ObservabilityKit.dashboardQueries());
        queries.addAll(ObservabilityKit.alertQueries());
        assertThat(queries).hasSizeGreaterThan(20);
        assertThat(unexported(queries, exported)).as("selectors the running services do not export").isEmpty();
        // the comparison can fail: a name no service exports is reported
        assertThat(unexported(List.of(new Query("a bogus panel", "rate(queen_timers_bogus_total[5m])")), exported))
                .containsExactly("a bogus panel: queen_timers_bogus_total is not exported");

        Set<String> families = new TreeSet<>();
        for (String scrape : List.of(bridgeScrape, sweeperScrape)) {
            scrape.lines().filter(l -> l.startsWith("# TYPE ")).forEach(l -> families.add(l.split(" ")[2]));
        }
        String readme = Files.readString(Path.of("..", "docs", "operations.md"));
        String table = readme.substring(readme.indexOf("| metric (Prometheus name) |"));
        // a binder's families (jvm_*, kafka_consumer_*: dozens, named by Micrometer and Kafka) are one row `prefix_*`
        List<String> binderRows = Pattern.compile("\\| `([a-z_]+_)\\*` \\|").matcher(table).results().map(m -> m.group(1)).toList();
        assertThat(binderRows).contains("jvm_", "kafka_consumer_", "kafka_producer_");
        for (String family : families) {
            String base = family.replaceFirst("_max$", "");
            if (binderRows.stream().anyMatch(family::startsWith)) {
                continue;
            }
            assertThat(table).as("the metrics table of docs/operations.md lists %s", family)
                    .containsAnyOf("| `" + family + "`", "| `" + family + "{", "| `" + family + "_total", "| `" + base + "`");
        }
    }

    /** Each selector that no scraped series satisfies, with where it is written and why. */
    static List<String> unexported(List<Query> queries, List<Series> exported) {
        List<String> problems = new ArrayList<>();
        for (Query q : queries) {
            for (Selector s : PromQl.selectors(q.expr())) {
                if (PROMETHEUS_OWN.contains(s.metric())) {
                    continue;
                }
                List<Series> named = exported.stream().filter(e -> e.name().equals(s.metric())).toList();
                if (named.isEmpty()) {
                    problems.add(q.where() + ": " + s.metric() + " is not exported");
                    continue;
                }
                for (Matcher m : s.matchers()) {
                    boolean labelled = named.stream().anyMatch(e -> e.labels().containsKey(m.label()));
                    boolean valued = switch (m.op()) {
                        case "=" -> m.value().contains("$") || named.stream().anyMatch(e -> m.value().equals(e.labels().get(m.label())));
                        case "=~" -> m.value().contains("$") || named.stream().anyMatch(e -> e.labels().containsKey(m.label())
                                && Pattern.compile(m.value()).matcher(e.labels().get(m.label())).matches());
                        default -> true;
                    };
                    if (!labelled || !valued) {
                        problems.add(q.where() + ": " + s.metric() + " has no series with " + m.label() + m.op() + "\"" + m.value() + "\"");
                    }
                }
            }
        }
        return problems;
    }

    /** The samples of a Prometheus text-format scrape. */
    static List<Series> series(String scrape) {
        List<Series> out = new ArrayList<>();
        for (String line : scrape.split("\n")) {
            if (line.isBlank() || line.startsWith("#")) {
                continue;
            }
            int brace = line.indexOf('{');
            int space = line.indexOf(' ');
            if (brace < 0 || brace > space) {
                out.add(new Series(line.substring(0, space), Map.of()));
                continue;
            }
            Map<String, String> labels = new LinkedHashMap<>();
            int i = brace + 1;
            while (line.charAt(i) != '}') {
                int eq = line.indexOf('=', i);
                String name = line.substring(i, eq);
                StringBuilder value = new StringBuilder();
                int j = eq + 2;   // past ="
                while (line.charAt(j) != '"') {
                    if (line.charAt(j) == '\\') {
                        j++;
                    }
                    value.append(line.charAt(j++));
                }
                labels.put(name, value.toString());
                i = j + 1;
                if (line.charAt(i) == ',') {
                    i++;
                }
            }
            out.add(new Series(line.substring(0, brace), labels));
        }
        return out;
    }

    static Map<String, String> env(String commands, String audit, int port) {
        return BridgeEnv.of(db, commands, audit, port);
    }
}
