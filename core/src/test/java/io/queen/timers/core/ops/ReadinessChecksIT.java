package io.queen.timers.core.ops;

import static org.assertj.core.api.Assertions.assertThat;

import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import io.queen.timers.core.health.ReadinessCheck;
import io.queen.timers.sql.Migrations;
import io.queen.timers.testkit.PostgresDatabase;
import io.queen.timers.testkit.TestKafka;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

class ReadinessChecksIT {

    @RegisterExtension
    static final PostgresDatabase db = PostgresDatabase.empty();

    @Test
    void databaseIsNotReadyUntilTheSchemaIsCurrent() {
        DatabaseReadiness check = new DatabaseReadiness(db.dataSource());
        assertThat(check.problem()).hasValueSatisfying(p -> assertThat(p).contains("migration(s) pending"));

        Migrations.migrate(db.dataSource());

        assertThat(check.problem()).isEmpty();
    }

    @Test
    void kafkaReadinessNamesAnUnreachableBroker() {
        try (KafkaReadiness dead = new KafkaReadiness(
                Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, "127.0.0.1:1"), Duration.ofMillis(500))) {
            assertThat(dead.problem()).isPresent();
        }
        try (KafkaReadiness live = new KafkaReadiness(
                Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, TestKafka.bootstrapServers()), Duration.ofSeconds(5))) {
            assertThat(live.problem()).isEmpty();
        }
    }

    @Test
    void readyEndpointAnswers503WithTheReasonThen200() throws Exception {
        boolean[] ok = {false};
        ReadinessCheck flag = new ReadinessCheck() {
            @Override public String name() { return "flag"; }
            @Override public java.util.Optional<String> problem() {
                return ok[0] ? java.util.Optional.empty() : java.util.Optional.of("not yet");
            }
        };
        io.queen.timers.core.health.Health health = new io.queen.timers.core.health.Health(
                new io.queen.timers.core.config.HealthSettings(Duration.ofMinutes(1), Duration.ofMinutes(1)), java.time.Clock.systemUTC());
        health.add(flag);
        try (OpsServer ops = OpsServer.start("127.0.0.1", 0, new PrometheusMeterRegistry(PrometheusConfig.DEFAULT), health)) {
            HttpClient http = HttpClient.newHttpClient();
            HttpResponse<String> notReady = http.send(get(ops, "/health/ready"), HttpResponse.BodyHandlers.ofString());
            assertThat(notReady.statusCode()).isEqualTo(503);
            assertThat(notReady.body()).contains("flag: not yet");
            ok[0] = true;
            assertThat(http.send(get(ops, "/health/ready"), HttpResponse.BodyHandlers.ofString()).statusCode()).isEqualTo(200);
            assertThat(http.send(get(ops, "/health/live"), HttpResponse.BodyHandlers.ofString()).statusCode()).isEqualTo(200);
        }
    }

    private static HttpRequest get(OpsServer ops, String path) {
        return HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + ops.port() + path)).build();
    }
}
