package io.queen.timers.sweeper;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.queen.timers.core.config.CommonSettings;
import io.queen.timers.core.config.HealthSettings;
import io.queen.timers.core.ops.ServiceHost;
import io.queen.timers.sql.Migrations;
import io.queen.timers.stack.Stack;
import io.queen.timers.testkit.PerClass;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.sql.Connection;
import java.sql.Statement;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Readiness means "work is progressing": a sweeper whose every cycle fails (42501 permission denied)
 * is not ready and says which loop and why, although the database answers, the schema is current and
 * Kafka is up; it is ready again once the grant is back. The grant is taken after the start: a login that
 * cannot read the owner's bounds (V133) is refused at start, before any loop runs.
 */
class ReadinessIT {

    @RegisterExtension
    static final PerClass<Stack> stack = PerClass.of(Stack::shared); // a broker too: readiness checks Kafka

    static final HttpClient HTTP = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

    @Test
    void aLoopFailingEveryCycleTakesReadinessDownAndSaysWhichAndWhy() throws Exception {
        String role = stack.get().uniqueName("sweeper_");
        exec("DROP ROLE IF EXISTS " + role);
        exec("CREATE ROLE " + role + " LOGIN PASSWORD 'secret'");
        // the schema version (the readiness probe) and the queen schema, until the test takes the schema away
        exec("GRANT USAGE ON SCHEMA " + Migrations.HISTORY_SCHEMA + " TO " + role);
        exec("GRANT SELECT ON ALL TABLES IN SCHEMA " + Migrations.HISTORY_SCHEMA + " TO " + role);
        grantQueen(role);
        // a role made by hand with grants of its own, not a member of queen_sweeper: the start check would refuse it
        var config = Sweepers.settings(stack.get()).set(CommonSettings.JDBC_USER, role).set(CommonSettings.JDBC_PASSWORD, "secret")
                .set(CommonSettings.DB_ROLE_CHECK, false).set(CommonSettings.HTTP_BIND_ADDRESS, "127.0.0.1")
                .set(HealthSettings.FAILING_AFTER, Duration.ofSeconds(2)).config();
        ServiceHost host = ServiceHost.start("sweeper", CommonSettings.from(config), deps -> {
            SweeperMain sweeper = SweeperMain.start(SweeperSettings.from(config), deps);
            return new ServiceHost.Running(sweeper::awaitTermination, sweeper);
        });
        try {
            await().atMost(Duration.ofSeconds(60)).untilAsserted(() -> assertThat(ready(host).statusCode()).isEqualTo(200));
            exec("REVOKE USAGE ON SCHEMA queen FROM " + role);
            await().atMost(Duration.ofSeconds(60)).untilAsserted(() -> {
                HttpResponse<String> r = ready(host);
                assertThat(r.statusCode()).isEqualTo(503);
                assertThat(r.body()).contains("sweep-0: every cycle failed since").contains("permission denied")
                        .contains("database: ok").contains("kafka: ok");
            });
            exec("GRANT USAGE ON SCHEMA queen TO " + role);
            await().atMost(Duration.ofSeconds(60)).untilAsserted(() -> assertThat(ready(host).statusCode()).isEqualTo(200));
        } finally {
            host.close();
            exec("DROP OWNED BY " + role);
            exec("DROP ROLE " + role);
        }
    }

    private static void grantQueen(String role) throws Exception {
        exec("GRANT USAGE ON SCHEMA queen TO " + role);
        exec("GRANT ALL ON ALL TABLES IN SCHEMA queen TO " + role);
        exec("GRANT ALL ON ALL SEQUENCES IN SCHEMA queen TO " + role);
        exec("GRANT EXECUTE ON ALL FUNCTIONS IN SCHEMA queen TO " + role);
    }

    private static HttpResponse<String> ready(ServiceHost host) throws Exception {
        return HTTP.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + host.httpPort() + "/health/ready"))
                .timeout(Duration.ofSeconds(10)).build(), HttpResponse.BodyHandlers.ofString());
    }

    private static void exec(String sql) throws Exception {
        try (Connection c = stack.get().owner().getConnection(); Statement st = c.createStatement()) {
            st.execute(sql);
        }
    }
}
