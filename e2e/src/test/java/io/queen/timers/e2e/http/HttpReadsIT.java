package io.queen.timers.e2e.http;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.queen.timers.http.HttpMain;
import io.queen.timers.http.OpenApiSchemas;
import io.queen.timers.http.HttpSettings;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.queen.timers.client.audit.AuditEvent;
import io.queen.timers.core.config.ConfigException;
import io.queen.timers.core.config.ConfigLoader;
import io.queen.timers.routes.auth.TestTokens;
import io.queen.timers.sql.Migrations;
import io.queen.timers.testkit.AuditTopicReader;
import io.queen.timers.testkit.PostgresDatabase;
import io.queen.timers.testkit.TestCertificates;
import io.queen.timers.testkit.TestKafka;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyStore;
import java.security.cert.CertificateFactory;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import javax.net.ssl.SSLContext;
import javax.net.ssl.TrustManagerFactory;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Issue 42, point 1: the operator read routes through a real bridge, sweeper, broker and PostgreSQL (OperatorStack), the API connected
 * as a login of queen_operator (db.role.check on). Tenant B's topic takes no token; tenant A's takes jwt with an admin
 * claim. Every answer is held to its openapi.yaml schema.
 */
class HttpReadsIT {

    @RegisterExtension
    static final PostgresDatabase db = PostgresDatabase.initializedWith(Migrations::migrate);

    static final UUID TENANT_A = OperatorStack.TENANT_A;
    static final UUID TENANT_B = OperatorStack.TENANT_B;
    static final String ADMIN_CLAIM = OperatorStack.ADMIN_CLAIM;
    static final ObjectMapper JSON = new ObjectMapper();
    static final HttpClient HTTP = OperatorStack.HTTP;

    static OperatorStack stack;
    static String open;
    static String jwt;
    static String auditB;
    static TestTokens.Signer signer;
    static Map<String, String> settings;

    @BeforeAll
    static void start() throws Exception {
        stack = new OperatorStack(db, "reads", Map.of());
        open = stack.open;
        jwt = stack.jwt;
        auditB = stack.auditB;
        signer = stack.signer;
        settings = stack.settings;
    }

    static HttpSettings config(Map<String, String> overrides) {
        return stack.config(overrides);
    }

    @AfterAll
    static void stop() {
        if (stack != null) {
            stack.close();
        }
    }

    @Test
    void listPagesByCursorPeekShowsASeriesNextOccurrencesAndFindAsksTheLog() throws Exception {
        assertThat(post("""
                [{"op":"schedule","queue":"reads.list","timerKey":"a","delayMs":3600000,"txn":"l-a","payload":{"n":1}},
                 {"op":"schedule","queue":"reads.list","timerKey":"b","delayMs":3600000,"txn":"l-b","payload":{"n":2}},
                 {"op":"schedule","queue":"reads.list","timerKey":"c","delayMs":3600000,"txn":"l-c","payload":{"n":3}},
                 {"op":"schedule","queue":"reads.list","timerKey":"hourly","every":"PT1H","txn":"l-series","payload":{"n":4}},
                 {"op":"schedule","queue":"reads.list","timerKey":"fires","delayMs":200,"txn":"l-fired","payload":{"n":5}}]""", null)
                .statusCode()).isEqualTo(200);

        HttpResponse<String> first = get("/api/v1/timers?queue=reads.list&limit=2", null);
        assertThat(first.statusCode()).as(first.body()).isEqualTo(200);
        OpenApiSchemas.valid("TimerPage", first.body());
        JsonNode page = JSON.readTree(first.body());
        assertThat(page.get("timers")).hasSize(2);
        List<String> keys = new ArrayList<>();
        JsonNode hourly = null;
        for (int pages = 1; ; pages++) {
            for (JsonNode t : page.get("timers")) {
                keys.add(t.get("timerKey").asText());
                if (t.get("timerKey").asText().equals("hourly")) {
                    hourly = t;
                }
            }
            if (page.get("nextCursor").isNull()) {
                break;
            }
            assertThat(pages).isLessThan(4);
            HttpResponse<String> more = get("/api/v1/timers?queue=reads.list&limit=2&cursor=" + page.get("nextCursor").asText(), null);
            OpenApiSchemas.valid("TimerPage", more.body());
            page = JSON.readTree(more.body());
        }
        assertThat(keys).startsWith("a", "b", "c").contains("hourly").doesNotHaveDuplicates();
        assertThat(hourly).isNotNull();
        assertThat(hourly.get("recurring").get("seriesTxn").asText()).isEqualTo("l-series");

        HttpResponse<String> peek = get("/api/v1/timers/reads.list/hourly?next=3", null);
        assertThat(peek.statusCode()).as(peek.body()).isEqualTo(200);
        OpenApiSchemas.valid("TimerDetail", peek.body());
        JsonNode series = JSON.readTree(peek.body());
        assertThat(series.get("payload").get("n").asInt()).isEqualTo(4);
        JsonNode next = series.get("recurring").get("nextOccurrences");
        assertThat(next).hasSize(3);
        assertThat(Duration.between(Instant.parse(next.get(0).asText()), Instant.parse(next.get(1).asText()))).isEqualTo(Duration.ofHours(1));
        JsonNode one = JSON.readTree(get("/api/v1/timers/reads.list/a", null).body());
        assertThat(one.get("payload").get("n").asInt()).isEqualTo(1);
        assertThat(one.get("recurring").isNull()).isTrue();

        await().atMost(Duration.ofSeconds(30)).untilAsserted(() -> {
            HttpResponse<String> f = get("/api/v1/timers:find?queue=reads.list&txn=l-fired", null);
            OpenApiSchemas.valid("Finding", f.body());
            assertThat(JSON.readTree(f.body()).get("hits")).hasSize(1);
        });
        JsonNode s = JSON.readTree(get("/api/v1/timers:find?queue=reads.list&txn=l-series", null).body());
        assertThat(s.get("found").asBoolean()).isTrue();
        assertThat(s.get("series").get(0).get("timerKey").asText()).isEqualTo("hourly");
        assertThat(JSON.readTree(get("/api/v1/timers:find?queue=reads.list&txn=never", null).body()).get("found").asBoolean()).isFalse();
        assertProblem(get("/api/v1/timers/reads.list/fires", null), 404); // fired: not pending any more
        assertProblem(get("/api/v1/timers?limit=2", null), 400); // no queue
        assertProblem(get("/api/v1/timers?queue=reads.list&limit=0", null), 400);
    }

    @Test
    void aKeyIsOpaqueAndPathTricksWalkNothing() throws Exception {
        assertThat(post("[{\"op\":\"schedule\",\"queue\":\"reads.keys\",\"timerKey\":\"../offsets\",\"delayMs\":3600000,\"txn\":\"k\",\"payload\":1}]",
                null).statusCode()).isEqualTo(200);
        HttpResponse<String> dots = get("/api/v1/timers/reads.keys/..%2Foffsets", null);
        assertThat(dots.statusCode()).as(dots.body()).isEqualTo(200);
        assertThat(JSON.readTree(dots.body()).get("timerKey").asText()).isEqualTo("../offsets");
        assertProblem(get("/api/v1/timers/reads.keys/..%2F..%2Fdead-letters", null), 404);
        assertProblem(get("/api/v1/dead-letters/..%2F..%2Foffsets", null), 404);
        assertProblem(get("/api/v1/dead-letters/%2E%2E", null), 404);
        assertProblem(get("/api/v1/timers/reads.keys/%C3%28", null), 400); // not UTF-8 once decoded
    }

    @Test
    void replayStagesTheTimerAgainAndDropGivesItUpEachWithItsAuditEvent() throws Exception {
        assertThat(post("""
                [{"op":"schedule","queue":"reads.dl","timerKey":"k1","delayMs":3600000,"txn":"t-1","payload":{"orderId":1}},
                 {"op":"schedule","queue":"reads.dl","timerKey":"k2","delayMs":3600000,"txn":"t-2","payload":{"orderId":2}}]""", null)
                .statusCode()).isEqualTo(200);
        stack.deadLetter(TENANT_B, "reads.dl", "k1", "k2");
        HttpResponse<String> list = get("/api/v1/dead-letters?queue=reads.dl", null);
        assertThat(list.statusCode()).as(list.body()).isEqualTo(200);
        JsonNode rows = JSON.readTree(list.body()).get("deadLetters");
        assertThat(rows).hasSize(2);
        String k1 = idOf(rows, "k1");
        String k2 = idOf(rows, "k2");
        HttpResponse<String> show = get("/api/v1/dead-letters/" + k1, null);
        OpenApiSchemas.valid("DeadLetter", show.body());
        JsonNode letter = JSON.readTree(show.body());
        assertThat(letter.get("payload").get("orderId").asInt()).isEqualTo(1);
        assertThat(letter.get("replayable").asBoolean()).isTrue();
        assertThat(count("SELECT count(*) FROM queen.log_timers WHERE queue = 'reads.dl'")).isZero();

        assertProblem(send(HttpRequest.newBuilder(uri("/api/v1/dead-letters/" + k1 + "/replay")).POST(HttpRequest.BodyPublishers.noBody())
                .build()), 400); // no reason
        HttpResponse<String> replay = send(HttpRequest.newBuilder(uri("/api/v1/dead-letters/" + k1 + "/replay?reason=downstream+fixed&delayMs=3600000"))
                .POST(HttpRequest.BodyPublishers.noBody()).build());
        assertThat(replay.statusCode()).as(replay.body()).isEqualTo(200);
        OpenApiSchemas.valid("Replay", replay.body());
        JsonNode r = JSON.readTree(replay.body());
        assertThat(r.get("verdict").get("type").asText()).isEqualTo("scheduled");
        assertThat(r.get("verdict").get("source").get("topic").asText()).isEqualTo(open); // through the command topic
        assertThat(r.get("state").asText()).isEqualTo("pending");
        assertThat(one("SELECT txn || ' ' || (payload IS NOT NULL) FROM queen.log_timers WHERE queue = 'reads.dl' AND timer_key = 'k1'"))
                .isEqualTo("t-1 true"); // staged again, by the bridge
        assertProblem(get("/api/v1/dead-letters/" + k1, null), 404);

        assertProblem(send(HttpRequest.newBuilder(uri("/api/v1/dead-letters/" + k2)).DELETE().build()), 400); // no reason
        HttpResponse<String> drop = send(HttpRequest.newBuilder(uri("/api/v1/dead-letters/" + k2 + "?reason=order%202%20refunded")).DELETE().build());
        assertThat(drop.statusCode()).as(drop.body()).isEqualTo(200);
        OpenApiSchemas.valid("Removal", drop.body());
        assertProblem(get("/api/v1/dead-letters/" + k2, null), 404);
        // the audit trail, as a consumer of the tenant's audit topic reads it
        await().atMost(Duration.ofSeconds(60)).untilAsserted(() -> {
            List<AuditEvent.DeadLetterRemoved> removed = AuditTopicReader.awaitEvents(auditB, (int) endOffset(auditB), Duration.ofSeconds(10))
                    .stream().filter(e -> e instanceof AuditEvent.DeadLetterRemoved d && d.queue().equals("reads.dl"))
                    .map(AuditEvent.DeadLetterRemoved.class::cast).toList();
            assertThat(removed).extracting(d -> d.how() + ":" + d.reason() + ":" + d.timerKey())
                    .containsExactlyInAnyOrder("replayed:downstream fixed:k1", "dropped:order 2 refunded:k2");
            assertThat(removed).allSatisfy(d -> assertThat(d.clientLabel()).contains("(queen-timers http dead-letters "));
        });
        assertThat(count("SELECT count(*) FROM queen.log_timers WHERE queue = 'reads.dl' AND timer_key = 'k2'")).isZero();
    }

    @Test
    void aDeadLetterWrittenBeforeKeysWereRecordedIsReplayedWithTheKeyNamed() throws Exception {
        assertThat(post("[{\"op\":\"schedule\",\"queue\":\"reads.old\",\"timerKey\":\"k3\",\"delayMs\":3600000,\"txn\":\"t-3\",\"payload\":3}]",
                null).statusCode()).isEqualTo(200);
        stack.deadLetter(TENANT_B, "reads.old", "k3");
        String id = idOf(JSON.readTree(get("/api/v1/dead-letters?queue=reads.old", null).body()).get("deadLetters"), "k3");
        stack.execute("DELETE FROM queen.timer_dlq_keys WHERE dlq_id = '" + id + "'"); // as before V128 recorded keys
        assertProblem(send(HttpRequest.newBuilder(uri("/api/v1/dead-letters/" + id + "/replay?reason=old&delayMs=3600000"))
                .POST(HttpRequest.BodyPublishers.noBody()).build()), 400);
        HttpResponse<String> r = send(HttpRequest.newBuilder(uri("/api/v1/dead-letters/" + id + "/replay?reason=old&delayMs=3600000&key=k3"))
                .POST(HttpRequest.BodyPublishers.noBody()).build());
        assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
        assertThat(one("SELECT txn FROM queen.log_timers WHERE queue = 'reads.old' AND timer_key = 'k3'")).isEqualTo("t-3");
    }

    @Test
    void aTokenSeesItsOwnTenantOnlyAndAProducersTokenIsRefused() throws Exception {
        assertThat(post("[{\"op\":\"schedule\",\"queue\":\"reads.ten\",\"timerKey\":\"b-only\",\"delayMs\":3600000,\"txn\":\"b\",\"payload\":1}]",
                null).statusCode()).isEqualTo(200);
        stack.deadLetter(TENANT_B, "reads.ten", "b-only");
        String bLetter = idOf(JSON.readTree(get("/api/v1/dead-letters?queue=reads.ten", null).body()).get("deadLetters"), "b-only");
        Instant now = Instant.now();
        String admin = signer.sign(TestTokens.claims("ops", now, TENANT_A).claim(ADMIN_CLAIM, true).build());
        String producer = signer.sign(TestTokens.claims("billing", now, TENANT_A).build());

        JsonNode list = JSON.readTree(get("/api/v1/timers?queue=reads.ten", admin).body());
        assertThat(list.get("timers")).isEmpty();
        assertProblem(get("/api/v1/timers/reads.ten/b-only", admin), 404);
        assertThat(JSON.readTree(get("/api/v1/timers:find?queue=reads.ten&txn=b", admin).body()).get("found").asBoolean()).isFalse();
        assertThat(JSON.readTree(get("/api/v1/dead-letters", admin).body()).get("deadLetters")).isEmpty();
        assertProblem(get("/api/v1/dead-letters/" + bLetter, admin), 404);
        assertProblem(send(HttpRequest.newBuilder(uri("/api/v1/dead-letters/" + bLetter + "/replay?reason=x"))
                .header("Authorization", "Bearer " + admin).POST(HttpRequest.BodyPublishers.noBody()).build()), 404);
        assertProblem(send(HttpRequest.newBuilder(uri("/api/v1/dead-letters/" + bLetter + "?reason=x"))
                .header("Authorization", "Bearer " + admin).DELETE().build()), 404);
        JsonNode offsets = JSON.readTree(get("/api/v1/offsets", admin).body()).get("offsets");
        offsets.forEach(o -> assertThat(o.get("topic").asText()).isEqualTo(jwt));
        assertThat(JSON.readTree(get("/api/v1/dead-letters/" + bLetter, null).body()).get("timerKey").asText()).isEqualTo("b-only"); // still there

        assertProblem(get("/api/v1/timers?queue=reads.ten", producer), 403);
        assertProblem(get("/api/v1/dead-letters", producer), 403);
    }

    @Test
    void offsetsShowTheTenantsTopicsWithTheBrokersRange() throws Exception {
        post("[{\"op\":\"schedule\",\"queue\":\"reads.off\",\"timerKey\":\"o\",\"delayMs\":3600000,\"txn\":\"o\",\"payload\":1}]", null);
        await().atMost(Duration.ofSeconds(30)).untilAsserted(() -> {
            HttpResponse<String> r = get("/api/v1/offsets", null);
            assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
            OpenApiSchemas.valid("Offsets", r.body());
            JsonNode rows = JSON.readTree(r.body()).get("offsets");
            assertThat(rows).isNotEmpty();
            rows.forEach(o -> {
                assertThat(o.get("topic").asText()).isEqualTo(open);
                assertThat(o.get("logEnd").asLong()).isGreaterThanOrEqualTo(o.get("stored").asLong());
                assertThat(o.get("inRange").asBoolean()).isTrue();
            });
        });
    }

    @Test
    void readsRefuseToStartAsARoleThatIsNotTheOperators() {
        // the superuser the bridge runs as here: the start check refuses it, naming the fix
        assertThatThrownBy(() -> HttpMain.start(config(Map.of("api.reads.enabled", "true", "db.role.check", "true"))).close())
                .isInstanceOf(ConfigException.class).hasMessageContaining("http");
    }

    @Test
    void theApiPortServesTlsFromAPkcs12KeystoreOrPemAndThePasswordFromAFile() throws Exception {
        TestCertificates certs = TestCertificates.create();
        Path pw = certs.directory().resolve("api-pw");
        Files.writeString(pw, certs.storePassword() + "\n");
        Map<String, String> env = new HashMap<>();
        env.put("QUEEN_API_TLS_KEYSTORE_FILE", certs.serverKeyStore().toString());
        env.put("QUEEN_API_TLS_KEYSTORE_PASSWORD_FILE", pw.toString()); // as every secret: the password from a file
        Path file = certs.directory().resolve("api.properties");
        StringBuilder props = new StringBuilder();
        settings.forEach((k, v) -> props.append(k).append('=').append(v).append('\n'));
        Files.writeString(file, props);
        HttpClient tls = HttpClient.newBuilder().sslContext(trusting(certs.caPem())).connectTimeout(Duration.ofSeconds(5)).build();
        try (HttpMain https = HttpMain.start(HttpSettings.from(ConfigLoader.load(HttpSettings.definition(), file, env)))) {
            HttpResponse<String> r = tls.send(HttpRequest.newBuilder(URI.create("https://localhost:" + https.port() + "/api/v1/timers"))
                    .header("Content-Type", "application/json").POST(HttpRequest.BodyPublishers.ofString(
                            "[{\"op\":\"schedule\",\"queue\":\"reads.tls\",\"timerKey\":\"t\",\"delayMs\":3600000,\"txn\":\"t\",\"payload\":1}]"))
                    .build(), HttpResponse.BodyHandlers.ofString());
            assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
            assertThat(JSON.readTree(r.body()).get("results").get(0).get("type").asText()).isEqualTo("scheduled");
            // plain HTTP to the TLS port gets no answer
            assertThatThrownBy(() -> HTTP.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + https.port() + "/api/v1/timers"))
                    .timeout(Duration.ofSeconds(5)).GET().build(), HttpResponse.BodyHandlers.ofString())).isInstanceOf(java.io.IOException.class);
        }
        Path pem = certs.directory().resolve("api.pem");
        Files.writeString(pem, Files.readString(certs.serverKeyPem()) + Files.readString(certs.serverCertPem()));
        env.put("QUEEN_API_TLS_KEYSTORE_FILE", pem.toString());
        env.remove("QUEEN_API_TLS_KEYSTORE_PASSWORD_FILE");
        try (HttpMain https = HttpMain.start(HttpSettings.from(ConfigLoader.load(HttpSettings.definition(), file, env)))) {
            HttpResponse<String> r = tls.send(HttpRequest.newBuilder(URI.create("https://localhost:" + https.port() + "/api/v1/timers/reads.tls/t"))
                    .DELETE().build(), HttpResponse.BodyHandlers.ofString());
            assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
            assertThat(JSON.readTree(r.body()).get("results").get(0).get("type").asText()).isEqualTo("cancelled");
        }
        env.put("QUEEN_API_TLS_KEYSTORE_FILE", certs.serverKeyStore().toString());
        env.put("QUEEN_API_TLS_KEYSTORE_PASSWORD", "wrong");
        assertThatThrownBy(() -> HttpMain.start(HttpSettings.from(ConfigLoader.load(HttpSettings.definition(), file, env))).close())
                .isInstanceOf(ConfigException.class).hasMessageContaining("api.tls.keystore.file").hasMessageNotContaining("wrong");
    }

    static long endOffset(String topic) throws Exception {
        org.apache.kafka.common.TopicPartition tp = new org.apache.kafka.common.TopicPartition(topic, 0);
        try (var admin = TestKafka.admin()) {
            return admin.listOffsets(Map.of(tp, org.apache.kafka.clients.admin.OffsetSpec.latest())).partitionResult(tp).get().offset();
        }
    }

    static SSLContext trusting(Path caPem) throws Exception {
        KeyStore trust = KeyStore.getInstance("PKCS12");
        trust.load(null, null);
        try (var in = Files.newInputStream(caPem)) {
            trust.setCertificateEntry("ca", CertificateFactory.getInstance("X.509").generateCertificate(in));
        }
        TrustManagerFactory tmf = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
        tmf.init(trust);
        SSLContext ctx = SSLContext.getInstance("TLS");
        ctx.init(null, tmf.getTrustManagers(), null);
        return ctx;
    }

    static String idOf(JsonNode rows, String key) {
        for (JsonNode r : rows) {
            if (r.get("timerKey").asText().equals(key)) {
                return r.get("id").asText();
            }
        }
        throw new AssertionError("no dead letter " + key + " in " + rows);
    }

    static HttpResponse<String> post(String body, String token) throws Exception {
        HttpRequest.Builder b = HttpRequest.newBuilder(uri("/api/v1/timers")).header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString(body));
        if (token != null) {
            b.header("Authorization", "Bearer " + token);
        }
        return send(b.build());
    }

    static HttpResponse<String> get(String path, String token) throws Exception {
        HttpRequest.Builder b = HttpRequest.newBuilder(uri(path)).GET();
        if (token != null) {
            b.header("Authorization", "Bearer " + token);
        }
        return send(b.build());
    }

    static URI uri(String path) {
        return URI.create(stack.url(path));
    }

    static HttpResponse<String> send(HttpRequest r) throws Exception {
        return HTTP.send(r, HttpResponse.BodyHandlers.ofString());
    }

    static void assertProblem(HttpResponse<String> r, int status) {
        assertThat(r.statusCode()).as(r.body()).isEqualTo(status);
        assertThat(r.headers().firstValue("Content-Type")).hasValue("application/problem+json");
        OpenApiSchemas.validProblem(r.body());
    }

    static long count(String sql) throws Exception {
        return Long.parseLong(one(sql));
    }

    static String one(String sql) throws Exception {
        try (Connection c = db.dataSource().getConnection(); Statement st = c.createStatement(); ResultSet rs = st.executeQuery(sql)) {
            assertThat(rs.next()).as(sql).isTrue();
            return rs.getString(1);
        }
    }
}
