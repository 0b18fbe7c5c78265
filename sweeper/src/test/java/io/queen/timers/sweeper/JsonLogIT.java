package io.queen.timers.sweeper;

import static io.queen.timers.sweeper.Staging.DEFAULT_TENANT;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.queen.timers.core.config.CommonSettings;
import io.queen.timers.core.logging.LogFormat;
import io.queen.timers.core.ops.ServiceHost;
import io.queen.timers.stack.Stack;
import io.queen.timers.testkit.PerClass;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.sql.SQLException;
import java.time.Duration;
import java.time.OffsetDateTime;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.parallel.Isolated;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.slf4j.LoggerFactory;

/**
 * {@code log.format=json} as a platform reads it: a sweeper started with it writes one JSON object per line; the
 * line about one timer (here a refusal: a clear timer in a queue turned encrypted) carries the timer's tenant, queue,
 * key and trace id as fields; a secret in the key, the message or an exception is masked in every field. And the
 * service's /metrics has the JVM's and the pool's meters.
 */
// Alone: it swaps System.out, which every class running beside it writes to.
@Isolated
class JsonLogIT {

    @RegisterExtension
    static final PerClass<Stack> stack = PerClass.of(Sweepers::stack);

    static final ObjectMapper JSON = new ObjectMapper();
    static final String TRACE = "0af7651916cd43dd8448eb211c80319c";

    @Test
    void aServiceWithLogFormatJsonWritesTheTimersFieldsAndNoSecret() throws Exception {
        Staging staging = new Staging(stack.get().owner());
        staging.clear();
        staging.execute("INSERT INTO queen.queues (tenant_id, name, encryption_enabled) VALUES ('" + DEFAULT_TENANT + "', 'vault', true)"
                + " ON CONFLICT DO NOTHING");
        staging.schedule(DEFAULT_TENANT, "vault", "token=hunter2", -1);
        staging.execute("UPDATE queen.log_timers SET trace_context = decode('" + TRACE + "b7ad6b7169203331', 'hex')");

        ByteArrayOutputStream captured = new ByteArrayOutputStream();
        PrintStream stdout = System.out;
        System.setOut(new PrintStream(captured, true, StandardCharsets.UTF_8));   // logback-test.xml's console appender
        String metrics;
        try (ServiceHost host = SweeperMain.host(SweeperSettings.from(Sweepers.settings(stack.get())
                .set(CommonSettings.LOG_FORMAT, "json").set(CommonSettings.HTTP_BIND_ADDRESS, "127.0.0.1").config()))) {
            await().atMost(Duration.ofSeconds(60)).until(() -> captured.toString(StandardCharsets.UTF_8).contains("moved to queen.log_dlq"));
            LoggerFactory.getLogger("io.queen.timers.test").error("connect failed",
                    new SQLException("FATAL: password=hunter2 rejected", new IllegalStateException("secret=hunter2")));
            metrics = HttpClient.newHttpClient().send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + host.httpPort() + "/metrics"))
                    .build(), HttpResponse.BodyHandlers.ofString()).body();
        } finally {
            System.setOut(stdout);
            LogFormat.apply(LogFormat.TEXT);
        }
        List<String> lines = captured.toString(StandardCharsets.UTF_8).lines().filter(l -> !l.isBlank()).toList();
        assertThat(lines).isNotEmpty();
        for (String line : lines) {
            JsonNode n = JSON.readTree(line);   // every line is one JSON object
            assertThat(n.isObject()).as(line).isTrue();
            assertThat(n.fieldNames()).toIterable().as(line).contains("@timestamp", "level", "logger_name", "thread_name", "message");
            assertThat(OffsetDateTime.parse(n.get("@timestamp").asText())).isNotNull();
            assertThat(line).as("no secret in any field").doesNotContain("hunter2");
        }

        JsonNode refused = lines.stream().map(JsonLogIT::parse).filter(n -> n.get("message").asText().contains("moved to queen.log_dlq"))
                .findFirst().orElseThrow();
        assertThat(refused.get("level").asText()).isEqualTo("WARN");
        assertThat(refused.get("logger_name").asText()).isEqualTo("io.queen.timers.sweeper.loop.Delivery");
        assertThat(refused.get("tenant").asText()).isEqualTo(DEFAULT_TENANT.toString());
        assertThat(refused.get("queue").asText()).isEqualTo("vault");
        assertThat(refused.get("key").asText()).isEqualTo("token=***");
        assertThat(refused.get("trace_id").asText()).isEqualTo(TRACE);
        assertThat(refused.get("message").asText()).contains("/vault/token=***");

        JsonNode failed = lines.stream().map(JsonLogIT::parse).filter(n -> n.get("message").asText().equals("connect failed"))
                .findFirst().orElseThrow();
        assertThat(failed.get("level").asText()).isEqualTo("ERROR");
        assertThat(failed.get("stack_trace").asText()).contains("password=***").contains("secret=***").contains("IllegalStateException");
        assertThat(failed.has("queue")).as("no timer named: no timer fields").isFalse();

        assertThat(metrics).contains("jvm_memory_used_bytes{", "jvm_gc_", "jvm_threads_live_threads", "process_cpu_usage",
                "process_uptime_seconds", "hikaricp_connections_active{");
    }

    private static JsonNode parse(String line) {
        try {
            return JSON.readTree(line);
        } catch (Exception e) {
            throw new IllegalStateException(line, e);
        }
    }
}
