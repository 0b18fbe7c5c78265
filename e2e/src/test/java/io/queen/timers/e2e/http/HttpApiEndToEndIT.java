package io.queen.timers.e2e.http;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.queen.timers.http.HttpMain;
import io.queen.timers.http.OpenApiSchemas;
import io.queen.timers.http.HttpSettings;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.queen.timers.bridge.BridgeMain;
import io.queen.timers.bridge.BridgeSettings;
import io.queen.timers.client.audit.AuditEvent;
import io.queen.timers.client.verdict.CommandSender;
import io.queen.timers.core.config.Config;
import io.queen.timers.core.ops.Dependencies;
import io.queen.timers.routes.auth.TestTokens;
import io.queen.timers.sql.Migrations;
import io.queen.timers.sweeper.LogContents;
import io.queen.timers.sweeper.SweeperMain;
import io.queen.timers.sweeper.Sweepers;
import io.queen.timers.testkit.PostgresDatabase;
import io.queen.timers.testkit.TestKafka;
import java.io.OutputStream;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Issue 42, point 1: the HTTP API through the real broker and PostgreSQL with a real bridge and sweeper. Two command
 * topics: {@code open} (tenant B, no token) and {@code jwt} (tenant A, topic.<name>.auth=jwt). What POST schedules
 * fires; DELETE cancels; every verdict is the bridge's own (the same reason a Kafka producer's record gets); hostile
 * requests are refused before anything is written, or written and judged exactly as the Kafka path judges them.
 */
class HttpApiEndToEndIT {

    @RegisterExtension
    static final PostgresDatabase db = PostgresDatabase.initializedWith(Migrations::migrate);

    static final UUID TENANT_A = UUID.fromString("00000000-0000-0000-0000-000000000001");
    static final UUID TENANT_B = UUID.fromString("00000000-0000-0000-0000-0000000000b2");
    static final ObjectMapper JSON = new ObjectMapper();
    static final HttpClient HTTP = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

    static String open;
    static String jwt;
    static String auditA;
    static String auditB;
    static TestTokens.Signer signer;
    static Map<String, String> settings;
    static BridgeMain bridge;
    static SweeperMain sweeper;
    static HttpMain api;

    @BeforeAll
    static void start() throws Exception {
        open = TestKafka.newTopic("api-open", 2);
        jwt = TestKafka.newTopic("api-jwt", 2, TestKafka.BROKER_TIMESTAMPS); // a jwt topic's tokens are checked against broker time
        auditA = TestKafka.newTopic("api-audit-a", 1);
        auditB = TestKafka.newTopic("api-audit-b", 1);
        signer = TestTokens.ec("k1");
        Path dir = Files.createTempDirectory("api-keys");
        Path keys = dir.resolve("keys.jwks");
        TestTokens.writeJwks(keys, List.of(signer));
        settings = new LinkedHashMap<>();
        settings.put("jdbc.url", db.jdbcUrl());
        settings.put("jdbc.user", db.user());
        settings.put("jdbc.password", db.password());
        settings.put("db.role.check", "false");
        settings.put("jdbc.pool.size", "4");
        settings.put("kafka.bootstrap.servers", TestKafka.bootstrapServers());
        settings.put("command.topics", open + "," + jwt);
        settings.put("topic." + open + ".tenant", TENANT_B.toString());
        settings.put("topic." + jwt + ".tenant", TENANT_A.toString());
        settings.put("topic." + jwt + ".auth", "jwt");
        settings.put("topic." + jwt + ".auth.keys.file", keys.toString());
        settings.put("topic." + jwt + ".auth.audience", TestTokens.AUDIENCE);
        settings.put("topic." + jwt + ".auth.issuer", TestTokens.ISSUER);
        settings.put("audit.topic", auditA);
        settings.put("audit.tenant.topics", TENANT_B + "=" + auditB);
        settings.put("bridge.group.id", "g-" + UUID.randomUUID());
        settings.put("bridge.start.position", "earliest");
        settings.put("http.port", "0");
        settings.put("api.port", "0");
        settings.put("api.bind.address", "127.0.0.1");
        settings.put("api.max.body.bytes", "65536");
        settings.put("api.max.ops", "5");
        settings.put("api.rate.limit", "0");
        settings.put("api.verdict.timeout", "30s");
        settings.put("api.senders", "2");
        settings.put("audit.relay.poll.interval", "50ms");
        settings.put("audit.relay.standby.interval", "500ms");
        bridge = BridgeMain.start(BridgeSettings.from(BridgeSettings.definition().parse(settings)), Dependencies.defaults(new SimpleMeterRegistry()));
        sweeper = Sweepers.start(db, Map.of());
        api = HttpMain.start(HttpSettings.from(config(Map.of())));
    }

    static Config config(Map<String, String> overrides) {
        Map<String, String> s = new HashMap<>(settings);
        s.putAll(overrides);
        return HttpSettings.definition().parse(s);
    }

    @AfterAll
    static void stop() {
        for (AutoCloseable c : new AutoCloseable[] {api, sweeper, bridge}) {
            try {
                if (c != null) {
                    c.close();
                }
            } catch (Exception ignored) {
                // the next one still stops
            }
        }
    }

    @Test
    void aPostedScheduleFiresAndADeleteCancels() throws Exception {
        HttpResponse<String> r = post("""
                [{"op":"schedule","queue":"api.q","timerKey":"fires","delayMs":300,"txn":"api-fires","payload":{"n":1}},
                 {"op":"schedule","queue":"api.q","timerKey":"later","delayMs":3600000,"txn":"api-later","payload":null}]""", null);
        assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
        JsonNode results = JSON.readTree(r.body()).get("results");
        assertThat(results).hasSize(2);
        assertThat(results.get(0).get("type").asText()).isEqualTo("scheduled");
        assertThat(results.get(0).get("messageId").asText()).isNotEmpty();
        assertThat(results.get(0).get("source").get("topic").asText()).isEqualTo(open);
        assertThat(results.get(1).get("deliverAt").asText()).isNotEmpty();
        await().atMost(Duration.ofSeconds(30)).until(() -> LogContents.txnCounts(db.dataSource()).getOrDefault("api-fires", 0) == 1);

        HttpResponse<String> d = delete("/api/v1/timers/api.q/later", null);
        assertThat(d.statusCode()).as(d.body()).isEqualTo(200);
        JsonNode c = JSON.readTree(d.body()).get("results").get(0);
        assertThat(c.get("type").asText()).isEqualTo("cancelled");
        assertThat(c.get("messageId").asText()).isEqualTo(results.get(1).get("messageId").asText());
        assertThat(JSON.readTree(delete("/api/v1/timers/api.q/later", null).body()).get("results").get(0).get("type").asText())
                .isEqualTo("absent");
        assertThat(LogContents.txnCounts(db.dataSource())).doesNotContainKey("api-later");
    }

    @Test
    void rejectedOperationsGetTheReasonAKafkaProducerGets() throws Exception {
        String bad = "{\"op\":\"schedule\",\"queue\":\"api.q\",\"timerKey\":\"bad\",\"delayMs\":1000,\"txn\":\"t\",\"payload\":1,\"tenantId\":\"x\"}";
        HttpResponse<String> some = post("{\"operations\":[" + bad
                + ",{\"op\":\"schedule\",\"queue\":\"api.q\",\"timerKey\":\"ok\",\"delayMs\":3600000,\"txn\":\"t\",\"payload\":1}]}", null);
        assertThat(some.statusCode()).as(some.body()).isEqualTo(207);
        JsonNode rs = JSON.readTree(some.body()).get("results");
        assertThat(rs.get(0).get("type").asText()).isEqualTo("rejected");
        assertThat(rs.get(1).get("type").asText()).isEqualTo("scheduled");

        HttpResponse<String> all = post("[" + bad + ",{\"op\":\"explode\",\"queue\":\"api.q\",\"timerKey\":\"x\"}, 42]", null);
        assertThat(all.statusCode()).as(all.body()).isEqualTo(422);
        List<String> httpReasons = reasons(all.body());

        // the same three values from a Kafka producer, answered by the same bridge
        try (CommandSender kafka = new CommandSender(Map.of("bootstrap.servers", TestKafka.bootstrapServers()), auditB)) {
            List<String> kafkaReasons = kafka.sendAllAndAwait(List.of(
                    record(open, "api.q/bad", bad), record(open, "api.q/x", "{\"op\":\"explode\",\"queue\":\"api.q\",\"timerKey\":\"x\"}"),
                    record(open, null, "42")), Duration.ofSeconds(30)).stream()
                    .map(a -> ((AuditEvent.Rejected) a.verdict().orElseThrow()).reason().wireName()).toList();
            assertThat(httpReasons).isEqualTo(kafkaReasons).containsExactly("server_owned_field", "unknown_op", "malformed_json");
        }
    }

    @Test
    void theTokenPicksItsTenantsTopicAndABadOrForeignTokenIsRefused() throws Exception {
        Instant now = Instant.now();
        String a = signer.sign(TestTokens.claims("billing-svc", now, TENANT_A).build());
        HttpResponse<String> ok = post("[{\"op\":\"schedule\",\"queue\":\"api.jwt\",\"timerKey\":\"k\",\"delayMs\":3600000,\"txn\":\"t\",\"payload\":1}]", a);
        assertThat(ok.statusCode()).as(ok.body()).isEqualTo(200);
        assertThat(JSON.readTree(ok.body()).get("results").get(0).get("source").get("topic").asText()).isEqualTo(jwt);
        try (var c = db.dataSource().getConnection(); var st = c.createStatement();
                var rows = st.executeQuery("SELECT tenant_id, producer_sub FROM queen.log_timers WHERE queue = 'api.jwt'")) {
            assertThat(rows.next()).isTrue();
            assertThat(rows.getObject(1, UUID.class)).isEqualTo(TENANT_A);
            assertThat(rows.getString(2)).isEqualTo("billing-svc"); // the bridge took the sub from the token the API sent on
        }

        String foreign = signer.sign(TestTokens.claims("intruder", now, UUID.randomUUID()).build());
        HttpResponse<String> f = delete("/api/v1/timers/api.jwt/k", foreign);
        assertProblem(f, 403);
        String expired = signer.sign(TestTokens.claims("billing-svc", now.minus(Duration.ofHours(2)), TENANT_A).build());
        assertProblem(delete("/api/v1/timers/api.jwt/k", expired), 401);
        assertProblem(delete("/api/v1/timers/api.jwt/k", "not.a.jwt"), 401);
        assertThat(f.headers().firstValue("WWW-Authenticate")).hasValue("Bearer");
    }

    @Test
    void hostileRequestsAreRefusedBeforeAnythingIsWritten() throws Exception {
        long before = offsets();
        String big = "[{\"op\":\"schedule\",\"queue\":\"q\",\"timerKey\":\"k\",\"delayMs\":1,\"txn\":\"t\",\"payload\":\"" + "x".repeat(70_000) + "\"}]";
        assertProblem(post(big, null), 413);
        assertProblem(post("[{\"op\":", null), 400);
        assertProblem(post("{\"ops\":[]}", null), 400);
        assertProblem(post("[]", null), 400);
        String one = "{\"op\":\"cancel\",\"queue\":\"q\",\"timerKey\":\"k\"}";
        assertProblem(post("[" + String.join(",", java.util.Collections.nCopies(6, one)) + "]", null), 413);
        assertProblem(send(HttpRequest.newBuilder(uri("/api/v1/timers")).header("Content-Type", "text/plain")
                .POST(HttpRequest.BodyPublishers.ofString("[]")).build()), 415);
        assertProblem(send(HttpRequest.newBuilder(uri("/api/v1/timers")).GET().build()), 405);
        assertProblem(send(HttpRequest.newBuilder(uri("/admin")).GET().build()), 404);
        assertProblem(delete("/api/v1/timers/q/%E0%A4", null), 400);
        assertThat(offsets()).as("no command was written").isEqualTo(before);
    }

    @Test
    void keysInThePathAreOpaqueAsOnTheKafkaPath() throws Exception {
        HttpResponse<String> r = post("[{\"op\":\"schedule\",\"queue\":\"api.q\",\"timerKey\":\"../../etc/passwd\",\"delayMs\":3600000,"
                + "\"txn\":\"t\",\"payload\":1}]", null);
        assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
        HttpResponse<String> d = delete("/api/v1/timers/api.q/..%2F..%2Fetc%2Fpasswd", null);
        JsonNode c = JSON.readTree(d.body()).get("results").get(0);
        assertThat(c.get("type").asText()).isEqualTo("cancelled");
        assertThat(c.get("timerKey").asText()).isEqualTo("../../etc/passwd");
        // an encoded slash in the queue is a queue with a slash: rejected bad_queue, as a Kafka command naming it is
        HttpResponse<String> q = delete("/api/v1/timers/api.q%2F..%2Fother/k", null);
        assertThat(q.statusCode()).as(q.body()).isEqualTo(422);
        assertThat(reasons(q.body())).containsExactly("bad_queue");
        // a NUL in a key: the bridge's bad_timer_key when it comes in a body; in a path the server refuses it before any route
        // (Jetty takes no NUL in a path), nothing written either way
        assertThat(reasons(post("[{\"op\":\"cancel\",\"queue\":\"api.q\",\"timerKey\":\"a\\u0000b\"}]", null).body()))
                .containsExactly("bad_timer_key");
        // on a client of its own: Jetty's parser refuses it and closes the connection, which the shared client could
        // otherwise take from its pool for the next test's request before it sees the close
        assertProblem(HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build()
                .send(HttpRequest.newBuilder(uri("/api/v1/timers/api.q/a%00b")).DELETE().build(), HttpResponse.BodyHandlers.ofString()), 400);
    }

    @Test
    void aSlowClientIsCutOffWithoutHoldingOthersUp() throws Exception {
        Duration requestTimeout = HttpSettings.from(config(Map.of())).timeouts().request(); // the documented default
        try (Socket slow = new Socket("127.0.0.1", api.port())) {
            OutputStream out = slow.getOutputStream();
            out.write(("POST /api/v1/timers HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n[{\"op\":")
                    .getBytes(StandardCharsets.US_ASCII));
            out.flush();
            long t0 = System.nanoTime();
            long before = offsets();
            HttpResponse<String> other = delete("/api/v1/timers/api.q/slow-other", null);
            assertThat(other.statusCode()).isEqualTo(200);
            assertThat(Duration.ofNanos(System.nanoTime() - t0)).as("the other caller waited for nothing").isLessThan(requestTimeout);
            slow.setSoTimeout((int) requestTimeout.plusSeconds(10).toMillis());
            String answer;
            try {
                answer = new String(slow.getInputStream().readAllBytes(), StandardCharsets.US_ASCII);
            } catch (java.net.SocketException reset) {
                answer = "";
            }
            // answered 408 and closed by the server at api.request.timeout, nothing written of it
            assertThat(answer).startsWith("HTTP/1.1 408").contains("/problems/timeout", "api.request.timeout");
            assertThat(Duration.ofNanos(System.nanoTime() - t0)).isLessThan(requestTimeout.plusSeconds(3));
            assertThat(offsets()).isEqualTo(before + 1); // the other caller's cancel only
        }
    }

    @Test
    void aClientPastItsRateIsAnswered429() throws Exception {
        // Ten requests sent at once against a bucket of 2 refilled at 1 a second. Not "the third is refused": a request
        // that waits on its verdict on a loaded machine can take longer than a refill. What must hold at any speed is the
        // bucket's bound: no more granted than the burst plus one a second of the time they took, the rest answered 429
        // with Retry-After.
        try (HttpMain limited = HttpMain.start(HttpSettings.from(config(Map.of("api.rate.limit", "1", "api.rate.burst", "2"))))) {
            int n = 10;
            long t0 = System.nanoTime();
            List<java.util.concurrent.CompletableFuture<HttpResponse<String>>> sent = new java.util.ArrayList<>();
            for (int i = 0; i < n; i++) {
                sent.add(HTTP.sendAsync(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + limited.port() + "/api/v1/timers/api.q/rate-" + i))
                        .DELETE().build(), HttpResponse.BodyHandlers.ofString()));
            }
            List<HttpResponse<String>> answers = new java.util.ArrayList<>();
            for (var f : sent) {
                answers.add(f.get());
            }
            double seconds = (System.nanoTime() - t0) / 1e9;
            // a granted cancel is answered with its verdict, or 202 pending past the verdict timeout
            long granted = answers.stream().filter(r -> r.statusCode() == 200 || r.statusCode() == 202).count();
            List<HttpResponse<String>> refused = answers.stream().filter(r -> r.statusCode() == 429).toList();
            assertThat(granted + refused.size()).as("every answer is 200, 202 or 429").isEqualTo(n);
            assertThat(granted).as("granted within the burst and the refill over %.1f s", seconds)
                    .isLessThanOrEqualTo(2 + (long) Math.ceil(seconds));
            assertThat(granted).as("the burst itself is granted").isGreaterThanOrEqualTo(2);
            assertThat(refused).as("past the bucket, refused").isNotEmpty()
                    .allSatisfy(r -> assertThat(r.headers().firstValue("Retry-After")).isPresent());
        }
    }

    // ---- helpers

    static org.apache.kafka.clients.producer.ProducerRecord<byte[], byte[]> record(String topic, String key, String value) {
        return new org.apache.kafka.clients.producer.ProducerRecord<>(topic, key == null ? null : key.getBytes(StandardCharsets.UTF_8),
                value.getBytes(StandardCharsets.UTF_8));
    }

    static List<String> reasons(String body) throws Exception {
        List<String> out = new java.util.ArrayList<>();
        JSON.readTree(body).get("results").forEach(n -> out.add(n.path("reason").asText(n.get("type").asText())));
        return out;
    }

    static long offsets() throws Exception {
        try (var admin = TestKafka.admin()) {
            var parts = new HashMap<org.apache.kafka.common.TopicPartition, org.apache.kafka.clients.admin.OffsetSpec>();
            for (String t : List.of(open, jwt)) {
                for (int p = 0; p < 2; p++) {
                    parts.put(new org.apache.kafka.common.TopicPartition(t, p), org.apache.kafka.clients.admin.OffsetSpec.latest());
                }
            }
            return admin.listOffsets(parts).all().get().values().stream().mapToLong(i -> i.offset()).sum();
        }
    }

    static void assertProblem(HttpResponse<String> r, int status) throws Exception {
        assertThat(r.statusCode()).as(r.body()).isEqualTo(status);
        assertThat(r.headers().firstValue("Content-Type")).hasValue("application/problem+json");
        JsonNode p = JSON.readTree(r.body());
        assertThat(p.get("status").asInt()).isEqualTo(status);
        assertThat(p.get("type").asText()).startsWith("/problems/");
        OpenApiSchemas.validProblem(r.body());
    }

    static URI uri(String path) {
        return URI.create("http://127.0.0.1:" + api.port() + path);
    }

    static HttpResponse<String> post(String body, String token) throws Exception {
        HttpRequest.Builder b = HttpRequest.newBuilder(uri("/api/v1/timers")).header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString(body));
        if (token != null) {
            b.header("Authorization", "Bearer " + token);
        }
        return send(b.build());
    }

    static HttpResponse<String> delete(String path, String token) throws Exception {
        HttpRequest.Builder b = HttpRequest.newBuilder(uri(path)).DELETE();
        if (token != null) {
            b.header("Authorization", "Bearer " + token);
        }
        return send(b.build());
    }

    static HttpResponse<String> send(HttpRequest r) throws Exception {
        return HTTP.send(r, HttpResponse.BodyHandlers.ofString());
    }
}
