package io.queen.timers.bridge;

import static io.queen.timers.bridge.BridgeTestSupport.longQuery;
import static io.queen.timers.bridge.BridgeTestSupport.storedOffsetSum;
import static io.queen.timers.bridge.BridgeTestSupport.verdictsBySource;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import com.nimbusds.jwt.PlainJWT;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.queen.timers.bridge.crypto.EncryptionSettings;
import io.queen.timers.client.command.TimerCommand;
import io.queen.timers.client.command.WireFormat;
import io.queen.timers.core.config.Config;
import io.queen.timers.core.config.ConfigException;
import io.queen.timers.core.ops.ServiceHost;
import io.queen.timers.relay.AuditSettings;
import io.queen.timers.routes.RouteSettings;
import io.queen.timers.routes.auth.TestTokens;
import io.queen.timers.stack.ServiceSettings;
import io.queen.timers.stack.Stack;
import io.queen.timers.testkit.IndependentGcm;
import io.queen.timers.testkit.PerClass;
import io.queen.timers.testkit.TestKafka;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Date;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.Future;
import java.util.function.Consumer;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AlterConfigOp;
import org.apache.kafka.clients.admin.ConfigEntry;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.config.TopicConfig;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/** Producer identity (topic.<name>.auth=jwt) and payload encryption at schedule, through Kafka and PostgreSQL. */
class BridgeSecurityEndToEndIT {

    @RegisterExtension
    static final PerClass<Stack> stack = PerClass.of(Stack::shared);

    static final String TENANT = "00000000-0000-0000-0000-000000000001";
    static final UUID TENANT_ID = UUID.fromString(TENANT);
    static final String KEY_HEX = "8f".repeat(16) + "1e".repeat(16);

    @TempDir Path dir;

    @BeforeEach
    void clean() throws Exception {
        try (Connection c = stack.get().owner().getConnection(); Statement st = c.createStatement()) {
            st.execute("DELETE FROM queen.timer_audit_outbox; DELETE FROM queen.log_timers; DELETE FROM queen.queues");
        }
    }

    @Test
    void jwtTopicTakesTheProducerSubFromTheTokenAndRejectsEveryOtherRecord() throws Exception {
        String topic = TestKafka.newTopic("cmd-jwt", 1, TestKafka.BROKER_TIMESTAMPS);
        String group = stack.get().uniqueName("g-" + topic + "-");
        TestTokens.Signer signer = TestTokens.ec("k1");
        Path keys = dir.resolve("keys.jwks");
        TestTokens.writeJwks(keys, List.of(signer));
        Consumer<ServiceSettings> s = outboxOnly(topic, group).andThen(jwt(topic, keys));
        Instant now = Instant.now();
        String valid = signer.sign(TestTokens.claims("billing-svc", now, TENANT_ID).build());
        List<String> expect = new ArrayList<>();
        List<Future<RecordMetadata>> sends = new ArrayList<>();
        try (BridgeMain bridge = start(s);
                KafkaProducer<byte[], byte[]> producer = TestKafka.commandProducer()) {
            sends.add(send(producer, topic, "ok", valid));
            expect.add("scheduled");
            sends.add(send(producer, topic, "no-token", null));
            expect.add("rejected unauthenticated");
            sends.add(send(producer, topic, "alg-none", new PlainJWT(TestTokens.claims("billing-svc", now, TENANT_ID).build()).serialize()));
            expect.add("rejected unauthenticated");
            sends.add(send(producer, topic, "other-tenant",
                    signer.sign(TestTokens.claims("billing-svc", now, UUID.randomUUID()).build())));
            expect.add("rejected forbidden");
            sends.add(send(producer, topic, "expired", signer.sign(TestTokens.claims("billing-svc", now, TENANT_ID)
                    .expirationTime(Date.from(now.minusSeconds(600))).build())));
            expect.add("rejected unauthenticated");
            sends.add(send(producer, topic, "forged", TestTokens.ec("k1").sign(TestTokens.claims("admin", now, TENANT_ID).build())));
            expect.add("rejected unauthenticated");
            // signed by the trusted key, but for another service of another tenant: not bound to this topic
            sends.add(send(producer, topic, "other-audience", signer.sign(TestTokens.claims("billing-svc", now, OTHER_TENANT)
                    .audience(OTHER_AUDIENCE).build())));
            expect.add("rejected unauthenticated");
            sends.add(send(producer, topic, "unknown-kid", TestTokens.ec(PROBE_KID).sign(TestTokens.claims("billing-svc", now, TENANT_ID).build())));
            expect.add("rejected unauthenticated");
            sends.add(send(producer, topic, "no-tenant", signer.sign(TestTokens.claims("billing-svc", now, null).build())));
            expect.add("rejected forbidden");
            RecordHeaders h = new RecordHeaders();
            h.add("queen-op", bytes("schedule")).add("queen-queue", bytes("auth.q")).add("queen-timer-key", bytes("headers-form"))
                    .add("queen-delay-ms", bytes("3600000")).add("queen-txn", bytes("t-h")).add("queen-auth", bytes(valid));
            sends.add(producer.send(new ProducerRecord<>(topic, null, WireFormat.keyBytes("auth.q", "headers-form"), bytes("{\"h\":1}"), h)));
            expect.add("scheduled");
            producer.flush();
            await().atMost(Duration.ofSeconds(60)).until(() -> storedOffsetSum(stack.get().owner(), group) == sends.size());
        }
        Map<String, List<JsonNode>> verdicts = verdictsBySource("no-such-topic-" + UUID.randomUUID(), stack.get().owner());
        for (int i = 0; i < sends.size(); i++) {
            RecordMetadata m = sends.get(i).get();
            JsonNode e = verdicts.get(topic + "/" + m.partition() + "@" + m.offset()).get(0);
            String got = e.get("type").asText() + (e.has("reason") ? " " + e.get("reason").asText() : "");
            assertThat(got).as("record %d: %s", i, e).isEqualTo(expect.get(i));
            // a refusal's detail names which check failed, never another tenant, audience or which key ids exist
            assertThat(e.toString()).as("record %d", i).doesNotContain(OTHER_TENANT.toString(), OTHER_AUDIENCE, PROBE_KID, "\"k1\"", "'k1'");
            if (got.equals("scheduled")) {
                assertThat(e.path("producerSub").asText("(none)")).as("producerSub of record %d", i).isEqualTo("billing-svc");
            }
        }
        RecordMetadata otherAudience = sends.get(6).get();
        assertThat(verdicts.get(topic + "/" + otherAudience.partition() + "@" + otherAudience.offset()).get(0).path("error").asText())
                .contains("token not valid for this topic", "aud");
        RecordMetadata unknownKid = sends.get(7).get();
        assertThat(verdicts.get(topic + "/" + unknownKid.partition() + "@" + unknownKid.offset()).get(0).path("error").asText())
                .contains("unknown or invalid signing key");
        assertThat(longQuery(stack.get().owner(), "SELECT count(*) FROM queen.log_timers WHERE producer_sub = 'billing-svc'")).isEqualTo(2);
        assertThat(longQuery(stack.get().owner(), "SELECT count(*) FROM queen.log_timers")).isEqualTo(2);
    }

    /**
     * Revocation fails closed: a key file that cannot be parsed on reload (an edit removing a leaked key gone
     * wrong) refuses every token of its topic, a valid one included, and /health/ready names the topic and
     * the file; once the file is fixed the same token is accepted again and the bridge is ready.
     */
    @Test
    void aKeyFileBrokenOnReloadRejectsEveryTokenAndLeavesReadinessUntilFixed() throws Exception {
        String topic = TestKafka.newTopic("cmd-jwt-broken", 1, TestKafka.BROKER_TIMESTAMPS);
        String group = stack.get().uniqueName("g-" + topic + "-");
        TestTokens.Signer signer = TestTokens.ec("k1");
        Path keys = dir.resolve("keys.jwks");
        TestTokens.writeJwks(keys, List.of(signer));
        Consumer<ServiceSettings> s = outboxOnly(topic, group).andThen(jwt(topic, keys));
        String valid = signer.sign(TestTokens.claims("billing-svc", Instant.now(), TENANT_ID).build());
        HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();
        List<Future<RecordMetadata>> sends = new ArrayList<>();
        try (ServiceHost host = Bridges.host(stack.get(), s);
                KafkaProducer<byte[], byte[]> producer = TestKafka.commandProducer()) {
            HttpRequest ready = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + host.httpPort() + "/health/ready"))
                    .timeout(Duration.ofSeconds(5)).build();
            sends.add(send(producer, topic, "before", valid));
            producer.flush();
            await().atMost(Duration.ofSeconds(60)).until(() -> storedOffsetSum(stack.get().owner(), group) == 1);
            await().atMost(Duration.ofSeconds(60)).until(() -> http.send(ready, HttpResponse.BodyHandlers.ofString()).statusCode() == 200);

            Files.writeString(keys, "{\"keys\": [ half a file");
            sends.add(send(producer, topic, "during", valid));
            producer.flush();
            await().atMost(Duration.ofSeconds(60)).until(() -> storedOffsetSum(stack.get().owner(), group) == 2);
            HttpResponse<String> notReady = http.send(ready, HttpResponse.BodyHandlers.ofString());
            assertThat(notReady.statusCode()).as(notReady.body()).isEqualTo(503);
            assertThat(notReady.body()).contains("auth-keys: topic " + topic + ": verification key file " + keys, "cannot read it");

            TestTokens.writeJwks(keys, List.of(signer));
            sends.add(send(producer, topic, "after", valid));
            producer.flush();
            await().atMost(Duration.ofSeconds(60)).until(() -> storedOffsetSum(stack.get().owner(), group) == 3);
            await().atMost(Duration.ofSeconds(30)).until(() -> http.send(ready, HttpResponse.BodyHandlers.ofString()).statusCode() == 200);
        }
        Map<String, List<JsonNode>> verdicts = verdictsBySource("no-such-topic-" + UUID.randomUUID(), stack.get().owner());
        List<String> got = new ArrayList<>();
        for (Future<RecordMetadata> f : sends) {
            RecordMetadata m = f.get();
            List<JsonNode> events = verdicts.get(topic + "/" + m.partition() + "@" + m.offset());
            assertThat(events).hasSize(1);
            got.add(events.get(0).get("type").asText() + events.get(0).path("reason").asText(""));
        }
        assertThat(got).containsExactly("scheduled", "rejectedunauthenticated", "scheduled");
        assertThat(longQuery(stack.get().owner(), "SELECT count(*) FROM queen.log_timers")).isEqualTo(2);
    }

    @Test
    void jwtTopicWithAFixedProducerSubOrNoKeyFileIsASettingError() {
        String topic = "cmd-conflict";
        Consumer<ServiceSettings> s = outboxOnly(topic, "g").andThen(t -> t.topic(topic, "auth", "jwt")
                .topic(topic, "auth.audience", TestTokens.AUDIENCE).topic(topic, "auth.issuer", TestTokens.ISSUER));
        assertThatThrownBy(() -> RouteSettings.from(config(s)).routes()).isInstanceOf(ConfigException.class)
                .hasMessageContaining("topic.cmd-conflict.auth.keys.file");
        Consumer<ServiceSettings> unreadable = s.andThen(t -> t.topic(topic, "auth.keys.file", "/nonexistent/keys.jwks"));
        assertThatThrownBy(() -> RouteSettings.from(config(unreadable)).routes()).isInstanceOf(ConfigException.class)
                .hasMessageContaining("cannot read verification keys");
        assertThatThrownBy(() -> RouteSettings.from(config(unreadable.andThen(t -> t.topic(topic, "auth", "kerberos")))).routes())
                .hasMessageContaining("not one of [none, jwt]");
    }

    @Test
    void encryptedQueuesStoreQueensEnvelopeAndNeverTheClearPayload() throws Exception {
        exec("INSERT INTO queen.queues (tenant_id, name, encryption_enabled) VALUES ('" + TENANT + "', 'vault', true), ('"
                + TENANT + "', 'open', false)");
        String topic = TestKafka.newTopic("cmd-enc", 1);
        String group = stack.get().uniqueName("g-" + topic + "-");
        Consumer<ServiceSettings> s = outboxOnly(topic, group).andThen(t -> t.set(EncryptionSettings.KEY, KEY_HEX)
                .set(EncryptionSettings.QUEUES, List.of("secret.*")).set(BridgeSettings.ZSTD_THRESHOLD, 200));
        String secret = "{\"card\":\"4111-1111-1111-1111\"}";
        String big = "{\"card\":\"4111-1111-1111-1111\",\"pad\":\"" + "x".repeat(600) + "\"}";
        try (BridgeMain bridge = start(s);
                KafkaProducer<byte[], byte[]> producer = TestKafka.commandProducer()) {
            for (String[] t : new String[][] {{"vault", "a", secret}, {"secret.cards", "b", secret}, {"open", "c", secret},
                    {"vault", "big", big}}) {
                producer.send(TimerCommand.schedule(t[0], t[1]).delay(Duration.ofHours(1)).txn("t-" + t[1]).payload(t[2]).envelope(topic));
            }
            producer.flush();
            await().atMost(Duration.ofSeconds(60)).until(() -> storedOffsetSum(stack.get().owner(), group) == 4);
        }
        try (Connection c = stack.get().owner().getConnection(); Statement st = c.createStatement();
                ResultSet rs = st.executeQuery("SELECT queue, timer_key, encrypted, payload_zstd, payload FROM queen.log_timers ORDER BY timer_key")) {
            int n = 0;
            while (rs.next()) {
                n++;
                String key = rs.getString(2);
                byte[] stored = rs.getBytes(5);
                if (rs.getBoolean(4)) {
                    stored = com.github.luben.zstd.Zstd.decompress(stored, (int) com.github.luben.zstd.Zstd.getFrameContentSize(stored));
                }
                if (key.equals("c")) {
                    assertThat(rs.getBoolean(3)).isFalse();
                    assertThat(new String(stored, StandardCharsets.UTF_8)).isEqualTo(secret);
                    continue;
                }
                assertThat(rs.getBoolean(3)).as(key).isTrue();
                assertThat(new String(rs.getBytes(5), StandardCharsets.ISO_8859_1)).as(key).doesNotContain("4111");
                assertThat(new String(stored, StandardCharsets.UTF_8)).as(key).doesNotContain("4111").contains("\"authTag\"");
                IndependentGcm.Opened opened = IndependentGcm.open(stored, HexFormat.of().parseHex(KEY_HEX));
                assertThat(opened.ivBytes()).isEqualTo(16);
                assertThat(opened.tagBytes()).isEqualTo(16);
                assertThat(new String(opened.plaintext(), StandardCharsets.UTF_8)).isEqualTo(key.equals("big") ? big : secret);
                assertThat(rs.getBoolean(4)).as("zstd of %s", key).isEqualTo(key.equals("big"));
            }
            assertThat(n).isEqualTo(4);
        }
        // read, never written: still the two rows this test made
        assertThat(longQuery(stack.get().owner(), "SELECT count(*) FROM queen.queues")).isEqualTo(2);
    }

    @Test
    void encryptionRequiredWithoutAKeyIsAStartUpErrorAndLaterARejectionNeverAClearRow() throws Exception {
        String topic = TestKafka.newTopic("cmd-nokey", 1);
        String group = stack.get().uniqueName("g-" + topic + "-");
        Consumer<ServiceSettings> s = outboxOnly(topic, group);
        Consumer<ServiceSettings> withPattern = s.andThen(t -> t.set(EncryptionSettings.QUEUES, List.of("secret.*")));
        assertThatThrownBy(() -> start(withPattern)).isInstanceOf(ConfigException.class)
                .hasMessageContaining("encryption.queues").hasMessageContaining("QUEEN_ENCRYPTION_KEY");
        exec("INSERT INTO queen.queues (tenant_id, name, encryption_enabled) VALUES ('" + TENANT + "', 'vault', true)");
        assertThatThrownBy(() -> start(s)).isInstanceOf(ConfigException.class)
                .hasMessageContaining(TENANT + "/vault").hasMessageContaining("encryption.key");

        exec("DELETE FROM queen.queues");
        try (BridgeMain bridge = start(s);
                KafkaProducer<byte[], byte[]> producer = TestKafka.commandProducer()) {
            exec("INSERT INTO queen.queues (tenant_id, name, encryption_enabled) VALUES ('" + TENANT + "', 'vault', true)");
            producer.send(TimerCommand.schedule("vault", "a").delay(Duration.ofHours(1)).txn("t-a").payload("{\"card\":\"4111\"}").envelope(topic));
            producer.send(TimerCommand.schedule("other", "b").delay(Duration.ofHours(1)).txn("t-b").payload("{\"x\":1}").envelope(topic));
            producer.flush();
            await().atMost(Duration.ofSeconds(60)).until(() -> storedOffsetSum(stack.get().owner(), group) == 2);
        }
        List<JsonNode> events = BridgeTestSupport.outbox(stack.get().owner());
        assertThat(events).extracting(e -> e.get("type").asText() + " " + e.path("reason").asText(""))
                .containsExactly("rejected encryption_unavailable", "scheduled ");
        assertThat(events.get(0).get("error").asText()).contains("encryption.key");
        assertThat(longQuery(stack.get().owner(), "SELECT count(*) FROM queen.log_timers WHERE queue = 'vault'")).isZero();
        assertThat(longQuery(stack.get().owner(), "SELECT count(*) FROM queen.log_timers WHERE queue = 'other'")).isEqualTo(1);
    }

    /**
     * Issue 24: a jwt topic without an audience or an issuer would accept any token its key signed for
     * another purpose, so the bridge refuses to start, naming the topic and the missing setting.
     */
    @Test
    void aJwtTopicWithoutAudienceOrIssuerRefusesToStart() throws Exception {
        String topic = "cmd-unbound";
        Path keys = dir.resolve("keys.jwks");
        TestTokens.writeJwks(keys, List.of(TestTokens.ec("k1")));
        String group = stack.get().uniqueName("g-" + topic + "-");
        Consumer<ServiceSettings> keysOnly = outboxOnly(topic, group).andThen(t -> t.topic(topic, "auth", "jwt")
                .topic(topic, "auth.keys.file", keys.toString()));
        assertThatThrownBy(() -> start(keysOnly.andThen(t -> t.topic(topic, "auth.issuer", TestTokens.ISSUER)))).isInstanceOf(ConfigException.class)
                .hasMessageContaining("topic.cmd-unbound.auth=jwt needs topic.cmd-unbound.auth.audience");
        assertThatThrownBy(() -> start(keysOnly.andThen(t -> t.topic(topic, "auth.audience", TestTokens.AUDIENCE)))).isInstanceOf(ConfigException.class)
                .hasMessageContaining("topic.cmd-unbound.auth=jwt needs topic.cmd-unbound.auth.issuer");
        Consumer<ServiceSettings> bound = outboxOnly(topic, group).andThen(jwt(topic, keys));
        assertThatThrownBy(() -> RouteSettings.from(config(bound.andThen(t -> t.topic(topic, "auth.tenant.claim", "sometimes")))).routes())
                .hasMessageContaining("topic.cmd-unbound.auth.tenant.claim").hasMessageContaining("[required, optional]");
        Consumer<ServiceSettings> optional = bound.andThen(t -> t.topic(topic, "auth.tenant.claim", "optional"));
        assertThatThrownBy(() -> RouteSettings.from(config(optional.andThen(t -> t.topic(topic, "auth.max.token.lifetime", "30d")))).routes())
                .hasMessageContaining("topic.cmd-unbound.auth.max.token.lifetime").hasMessageContaining("out of range");
        assertThat(RouteSettings.from(config(optional.andThen(t -> t.topic(topic, "auth.max.token.lifetime", "15m")))).routes().route(topic).auth())
                .isNotNull();
    }

    /**
     * Issue 24, time a token can be trusted at: on a jwt topic left at CreateTime with the default (unbounded) window the
     * producer picks the time its token is checked at, so the bridge refuses to start, naming the topic and the
     * kafka-configs line that fixes it. The same topic stamped by the broker (LogAppendTime) starts, accepts a valid
     * token, and a record back-dated to when an expired token was still valid is rejected: the broker's time counts.
     */
    @Test
    void aJwtTopicWhoseProducersChooseTheTimestampRefusesToStartAndABrokerStampedOneWorks() throws Exception {
        TestTokens.Signer signer = TestTokens.ec("k1");
        Path keys = dir.resolve("keys.jwks");
        TestTokens.writeJwks(keys, List.of(signer));
        String unsafe = TestKafka.newTopic("cmd-jwt-createtime", 1);
        Consumer<ServiceSettings> refused = outboxOnly(unsafe, stack.get().uniqueName("g-unsafe-")).andThen(jwt(unsafe, keys));
        assertThatThrownBy(() -> start(refused)).isInstanceOf(ConfigException.class)
                .hasMessageContaining("jwt topic " + unsafe + " lets producers choose their record timestamps")
                .hasMessageContaining("message.timestamp.type=CreateTime")
                .hasMessageContaining("kafka-configs.sh --bootstrap-server " + TestKafka.bootstrapServers() + " --alter --entity-type topics"
                        + " --entity-name " + unsafe + " --add-config message.timestamp.type=LogAppendTime");
        // a jwt topic that does not exist cannot be checked: refused, with the command that creates it safely
        String missing = "cmd-jwt-missing-" + UUID.randomUUID();
        assertThatThrownBy(() -> start(outboxOnly(missing, stack.get().uniqueName("g-missing-")).andThen(jwt(missing, keys)))).isInstanceOf(ConfigException.class)
                .hasMessageContaining("does not exist").hasMessageContaining("--config message.timestamp.type=LogAppendTime");

        String topic = TestKafka.newTopic("cmd-jwt-logappend", 1, TestKafka.BROKER_TIMESTAMPS);
        String group = stack.get().uniqueName("g-" + topic + "-");
        Consumer<ServiceSettings> s = outboxOnly(topic, group).andThen(jwt(topic, keys));
        Instant now = Instant.now();
        String valid = signer.sign(TestTokens.claims("billing-svc", now, TENANT_ID).build());
        Instant longAgo = now.minus(Duration.ofHours(3));
        String expired = signer.sign(TestTokens.claims("billing-svc", longAgo, TENANT_ID).build());
        List<Future<RecordMetadata>> sends = new ArrayList<>();
        try (BridgeMain bridge = start(s);
                KafkaProducer<byte[], byte[]> producer = TestKafka.commandProducer()) {
            sends.add(send(producer, topic, "ok", valid));
            sends.add(send(producer, topic, "back-dated", expired, longAgo.plusSeconds(60).toEpochMilli()));
            producer.flush();
            await().atMost(Duration.ofSeconds(60)).until(() -> storedOffsetSum(stack.get().owner(), group) == 2);
        }
        assertThat(verdicts(topic, sends)).containsExactly("scheduled", "rejectedunauthenticated");
        assertThat(sends.get(1).get().timestamp()).as("the broker's time").isGreaterThan(now.minusSeconds(60).toEpochMilli());
    }

    /**
     * CreateTime is safe enough when the broker bounds a record's timestamp within the topic's clock skew on both sides
     * (message.timestamp.before/after.max.ms): it starts. Wider than the skew, it is refused; a wider skew admits it.
     */
    @Test
    void aJwtTopicAtCreateTimeStartsOnlyWhenTheBrokerBoundsTimestampsWithinTheSkew() throws Exception {
        TestTokens.Signer signer = TestTokens.ec("k1");
        Path keys = dir.resolve("keys.jwks");
        TestTokens.writeJwks(keys, List.of(signer));
        String topic = TestKafka.newTopic("cmd-jwt-bounded", 1, Map.of(TopicConfig.MESSAGE_TIMESTAMP_TYPE_CONFIG, "CreateTime",
                TopicConfig.MESSAGE_TIMESTAMP_BEFORE_MAX_MS_CONFIG, "120000", TopicConfig.MESSAGE_TIMESTAMP_AFTER_MAX_MS_CONFIG, "30000"));
        String group = stack.get().uniqueName("g-" + topic + "-");
        Consumer<ServiceSettings> s = outboxOnly(topic, group).andThen(jwt(topic, keys));
        // 120 s back is more than the default skew (60 s)
        assertThatThrownBy(() -> start(s)).isInstanceOf(ConfigException.class)
                .hasMessageContaining("jwt topic " + topic).hasMessageContaining("message.timestamp.before.max.ms=120000")
                .hasMessageContaining("topic." + topic + ".auth.clock.skew = 60000 ms");
        Consumer<ServiceSettings> skew = s.andThen(t -> t.topic(topic, "auth.clock.skew", Duration.ofMinutes(2)));
        String valid = signer.sign(TestTokens.claims("billing-svc", Instant.now(), TENANT_ID).build());
        List<Future<RecordMetadata>> sends = new ArrayList<>();
        try (BridgeMain bridge = start(skew);
                KafkaProducer<byte[], byte[]> producer = TestKafka.commandProducer()) {
            sends.add(send(producer, topic, "ok", valid));
            producer.flush();
            await().atMost(Duration.ofSeconds(60)).until(() -> storedOffsetSum(stack.get().owner(), group) == 1);
        }
        assertThat(verdicts(topic, sends)).containsExactly("scheduled");
    }

    /**
     * An operator turns a running jwt topic to producer-chosen timestamps: the bridge stops reading it (its records wait,
     * none is rejected), /health/ready says which topic and what to run; turned back, the waiting records are processed.
     */
    @Test
    void aJwtTopicMadeUnsafeWhileRunningIsPausedNotRejectedUntilFixed() throws Exception {
        TestTokens.Signer signer = TestTokens.ec("k1");
        Path keys = dir.resolve("keys.jwks");
        TestTokens.writeJwks(keys, List.of(signer));
        String topic = TestKafka.newTopic("cmd-jwt-altered", 1, TestKafka.BROKER_TIMESTAMPS);
        String group = stack.get().uniqueName("g-" + topic + "-");
        Consumer<ServiceSettings> s = outboxOnly(topic, group).andThen(jwt(topic, keys));
        String valid = signer.sign(TestTokens.claims("billing-svc", Instant.now(), TENANT_ID).build());
        HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();
        List<Future<RecordMetadata>> sends = new ArrayList<>();
        try (ServiceHost host = Bridges.host(stack.get(), s);
                KafkaProducer<byte[], byte[]> producer = TestKafka.commandProducer();
                Admin admin = TestKafka.admin()) {
            HttpRequest ready = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + host.httpPort() + "/health/ready"))
                    .timeout(Duration.ofSeconds(5)).build();
            sends.add(send(producer, topic, "before", valid));
            producer.flush();
            await().atMost(Duration.ofSeconds(60)).until(() -> storedOffsetSum(stack.get().owner(), group) == 1);
            await().atMost(Duration.ofSeconds(60)).until(() -> http.send(ready, HttpResponse.BodyHandlers.ofString()).statusCode() == 200);

            setTimestampType(admin, topic, "CreateTime");
            await().atMost(Duration.ofSeconds(60)).until(() -> http.send(ready, HttpResponse.BodyHandlers.ofString()).statusCode() == 503);
            HttpResponse<String> notReady = http.send(ready, HttpResponse.BodyHandlers.ofString());
            assertThat(notReady.body()).contains("auth-timestamps: jwt topic " + topic, "message.timestamp.type=CreateTime",
                    "--entity-name " + topic + " --add-config message.timestamp.type=LogAppendTime");
            sends.add(send(producer, topic, "during", valid));
            producer.flush();
            Thread.sleep(3000);
            assertThat(storedOffsetSum(stack.get().owner(), group)).as("a paused topic's record is not consumed").isEqualTo(1);
            assertThat(http.send(ready, HttpResponse.BodyHandlers.ofString()).statusCode()).isEqualTo(503);

            setTimestampType(admin, topic, "LogAppendTime");
            await().atMost(Duration.ofSeconds(60)).until(() -> storedOffsetSum(stack.get().owner(), group) == 2);
            await().atMost(Duration.ofSeconds(30)).until(() -> http.send(ready, HttpResponse.BodyHandlers.ofString()).statusCode() == 200);
        }
        assertThat(verdicts(topic, sends)).containsExactly("scheduled", "scheduled");
    }

    private static void setTimestampType(Admin admin, String topic, String type) throws Exception {
        admin.incrementalAlterConfigs(Map.of(new ConfigResource(ConfigResource.Type.TOPIC, topic), List.of(new AlterConfigOp(
                new ConfigEntry(TopicConfig.MESSAGE_TIMESTAMP_TYPE_CONFIG, type), AlterConfigOp.OpType.SET)))).all().get();
    }

    /** The one verdict of each sent record, as type + reason. */
    private static List<String> verdicts(String topic, List<Future<RecordMetadata>> sends) throws Exception {
        Map<String, List<JsonNode>> verdicts = verdictsBySource("no-such-topic-" + UUID.randomUUID(), stack.get().owner());
        List<String> got = new ArrayList<>();
        for (Future<RecordMetadata> f : sends) {
            RecordMetadata m = f.get();
            List<JsonNode> events = verdicts.get(topic + "/" + m.partition() + "@" + m.offset());
            assertThat(events).as("verdicts of offset %d", m.offset()).hasSize(1);
            got.add(events.get(0).get("type").asText() + events.get(0).path("reason").asText(""));
        }
        return got;
    }

    /** A bridge on {@code topic} as {@code group}, its verdicts left in the outbox (the relay off), where the tests read them. */
    private static Consumer<ServiceSettings> outboxOnly(String topic, String group) {
        return s -> s.set(RouteSettings.COMMAND_TOPICS, List.of(topic)).set(BridgeSettings.GROUP_ID, group)
                .set(AuditSettings.RELAY_ENABLED, false);
    }

    /** The settings of a jwt topic bound to the tests' audience and issuer (TestTokens.claims carries them). */
    private static Consumer<ServiceSettings> jwt(String topic, Path keys) {
        return s -> s.topic(topic, "auth", "jwt").topic(topic, "auth.keys.file", keys.toString())
                .topic(topic, "auth.audience", TestTokens.AUDIENCE).topic(topic, "auth.issuer", TestTokens.ISSUER);
    }

    /** A test-sized bridge of the stack, as its login, with {@code settings}. */
    private static BridgeMain start(Consumer<ServiceSettings> settings) {
        return Bridges.start(stack.get(), settings, new SimpleMeterRegistry());
    }

    /** {@code settings} on the stack's bridge settings, parsed as the bridge parses them at start. */
    private static Config config(Consumer<ServiceSettings> settings) {
        ServiceSettings s = Bridges.testSized(stack.get().settings(BridgeMain.SERVICE));
        settings.accept(s);
        return s.config();
    }

    static final UUID OTHER_TENANT = UUID.fromString("00000000-0000-0000-0000-0000000000b2");
    static final String OTHER_AUDIENCE = "payments-of-tenant-b2";
    static final String PROBE_KID = "probe-kid-7";

    private static Future<RecordMetadata> send(KafkaProducer<byte[], byte[]> p, String topic, String key, String token) {
        return send(p, topic, key, token, null);
    }

    /** @param timestamp the record's timestamp as the producer sets it; null: the producer's clock */
    private static Future<RecordMetadata> send(KafkaProducer<byte[], byte[]> p, String topic, String key, String token, Long timestamp) {
        RecordHeaders h = new RecordHeaders();
        if (token != null) {
            h.add("queen-auth", bytes(token));
        }
        return p.send(new ProducerRecord<>(topic, null, timestamp, WireFormat.keyBytes("auth.q", key),
                TimerCommand.schedule("auth.q", key).delay(Duration.ofHours(1)).txn("t-" + key).payload("{\"k\":1}").envelope(topic).value(), h));
    }

    private static void exec(String sql) throws Exception {
        try (Connection c = stack.get().owner().getConnection(); Statement st = c.createStatement()) {
            st.execute(sql);
        }
    }

    static byte[] bytes(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }
}
