package io.queen.timers.e2e;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.nimbusds.jose.JOSEObjectType;
import com.nimbusds.jose.JWSAlgorithm;
import com.nimbusds.jose.JWSHeader;
import com.nimbusds.jose.crypto.ECDSASigner;
import com.nimbusds.jose.jwk.Curve;
import com.nimbusds.jose.jwk.ECKey;
import com.nimbusds.jose.jwk.JWKSet;
import com.nimbusds.jose.jwk.gen.ECKeyGenerator;
import com.nimbusds.jwt.JWTClaimsSet;
import com.nimbusds.jwt.SignedJWT;
import io.queen.timers.bridge.BridgeMain;
import io.queen.timers.sql.Migrations;
import io.queen.timers.sweeper.ChildSweeper;
import io.queen.timers.sweeper.Staging;
import io.queen.timers.testkit.PostgresDatabase;
import io.queen.timers.testkit.RawBatch;
import io.queen.timers.testkit.TestKafka;
import java.io.Writer;
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
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * A record that declares hundreds of MB (up to 2 GiB) in a few KB of zstd, through the real broker into a bridge JVM at
 * -Xmx256m (and a sweeper JVM): alone in its batch and in the middle of one, on a plain and on a jwt topic. The Kafka client
 * allocates the declared size before any check of ours runs; before UnreadableRecords the bridge died in poll and died again
 * at the same offset after every restart. Now: every record gets one verdict (the readable ones before it as usual, the
 * record and the rest of its compressed batch rejected/unreadable_record), the stored offsets move past them, the next
 * timers of every partition fire, and the bridge never exits.
 */
class UnreadableRecordIT {

    @RegisterExtension
    static final PostgresDatabase db = PostgresDatabase.initializedWith(Migrations::migrate);

    static final String TENANT = "00000000-0000-0000-0000-000000000001";
    static final String AUDIENCE = "queen-timers-test";
    static final String ISSUER = "https://issuer.test";
    static final long MB = 1L << 20;

    private final Staging staging = new Staging(db.dataSource());

    @Test
    void aRecordDeclaringHundredsOfMegabytesIsAnsweredAndEveryPartitionGoesOn() throws Exception {
        staging.clear();
        String plain = TestKafka.newTopic("unreadable-plain", 2);
        String jwt = TestKafka.newTopic("unreadable-jwt", 1, TestKafka.BROKER_TIMESTAMPS);
        ECKey key = new ECKeyGenerator(Curve.P_256).keyID("k1").generate();
        Path keys = Files.createTempFile("unreadable", ".jwks");
        keys.toFile().deleteOnExit();
        Files.writeString(keys, new JWKSet(key.toPublicJWK()).toString(false));
        String token = token(key);
        String queue = "unreadable.q";
        Instant at = Instant.now().plusSeconds(20);

        Path bridgeLog = Path.of("target", "unreadable-bridge.log");
        Path sweeperLog = Path.of("target", "unreadable-sweeper.log");
        Process bridge = startBridge(plain, jwt, keys, bridgeLog);
        Process sweeper = ChildSweeper.start(db, "256m", Map.of(), sweeperLog);
        // source "topic/partition@offset" → the verdict it must get ("scheduled", or "rejected <reason>")
        Map<String, String> expected = new LinkedHashMap<>();
        try {
            // plain/0: two schedules, 300 MB of one letter, two more schedules, all in one zstd batch; then a schedule alone
            long base = end(plain, 0);
            RawBatch.send(TestKafka.bootstrapServers(), plain, 0, System.currentTimeMillis(), List.of(
                    schedule(queue, "p0-a", at, null), schedule(queue, "p0-b", at, null),
                    RawBatch.Rec.run(keyBytes(queue, "p0-bomb"), 300 * MB, (byte) 'a', List.of()),
                    schedule(queue, "p0-c", at, null), schedule(queue, "p0-d", at, null)));
            expected.put(plain + "/0@" + base, "scheduled");
            expected.put(plain + "/0@" + (base + 1), "scheduled");
            expected.put(plain + "/0@" + (base + 2), "rejected unreadable_record");
            expected.put(plain + "/0@" + (base + 3), "rejected unreadable_record");
            expected.put(plain + "/0@" + (base + 4), "rejected unreadable_record");
            // plain/1: a record declaring 2,000,000,000 bytes alone in its batch, between two schedules
            expected.put(source(send(plain, 1, queue, "p1-a", at, null)), "scheduled");
            long bomb = end(plain, 1);
            RawBatch.send(TestKafka.bootstrapServers(), plain, 1, System.currentTimeMillis(),
                    List.of(RawBatch.Rec.run(keyBytes(queue, "p1-bomb"), 2_000_000_000L, (byte) 'b', List.of())));
            expected.put(plain + "/1@" + bomb, "rejected unreadable_record");
            expected.put(source(send(plain, 1, queue, "p1-b", at, null)), "scheduled");
            // plain/1: 150 MB, which the heap can hold once but not with a copy: the client may hand it over (the parser
            // answers payload_too_large from its length) or fail to (unreadable_record); either way one verdict
            long mid = end(plain, 1);
            RawBatch.send(TestKafka.bootstrapServers(), plain, 1, System.currentTimeMillis(),
                    List.of(RawBatch.Rec.run(keyBytes(queue, "p1-mid"), 150 * MB, (byte) 'd', List.of())));
            expected.put(plain + "/1@" + mid, "rejected payload_too_large|rejected unreadable_record");
            expected.put(source(send(plain, 1, queue, "p1-c", at, null)), "scheduled");
            expected.put(source(send(plain, 0, queue, "p0-e", at, null)), "scheduled");
            // the jwt topic: a signed schedule, a signed record of 400 MB, a signed schedule, in one batch; then one alone
            long j = end(jwt, 0);
            List<String[]> auth = List.<String[]>of(new String[] {"queen-auth", token});
            RawBatch.send(TestKafka.bootstrapServers(), jwt, 0, System.currentTimeMillis(), List.of(
                    schedule(queue, "j-a", at, token),
                    RawBatch.Rec.run(keyBytes(queue, "j-bomb"), 400 * MB, (byte) 'c', auth),
                    schedule(queue, "j-b", at, token)));
            expected.put(jwt + "/0@" + j, "scheduled");
            expected.put(jwt + "/0@" + (j + 1), "rejected unreadable_record");
            expected.put(jwt + "/0@" + (j + 2), "rejected unreadable_record");
            expected.put(source(send(jwt, 0, queue, "j-c", at, token)), "scheduled");

            long scheduled = expected.values().stream().filter("scheduled"::equals).count();
            await().atMost(Duration.ofMinutes(4)).pollInterval(Duration.ofSeconds(1)).until(() -> {
                assertThat(bridge.isAlive()).as("the bridge is still running; log: " + bridgeLog.toAbsolutePath()).isTrue();
                assertThat(sweeper.isAlive()).as("the sweeper is still running; log: " + sweeperLog.toAbsolutePath()).isTrue();
                return staging.count("SELECT count(*) FROM queen.timer_audit_events WHERE type = 'fired'") >= scheduled
                        && verdicts().keySet().containsAll(expected.keySet());
            });
            assertThat(bridge.isAlive()).isTrue();
        } finally {
            RealBytesPipelineIT.stop(bridge);
            RealBytesPipelineIT.stop(sweeper);
        }
        Map<String, List<String>> got = verdicts();
        for (Map.Entry<String, String> e : expected.entrySet()) {
            assertThat(got.get(e.getKey())).as("the verdicts of " + e.getKey()).hasSize(1)
                    .allSatisfy(v -> assertThat(e.getValue().split("\\|")).contains(v));
        }
        assertThat(got.keySet()).as("no verdict for a record not sent").containsExactlyInAnyOrderElementsOf(expected.keySet());
        assertThat(staging.count("SELECT count(*) FROM queen.timer_audit_events WHERE type = 'fired'"))
                .isEqualTo(expected.values().stream().filter("scheduled"::equals).count());
        assertThat(staging.count("SELECT count(*) FROM queen.log_timers")).isZero();
        String log = Files.readString(bridgeLog);
        assertThat(log).contains("cannot be read by the Kafka client").doesNotContain("stopped on its own");
    }

    /** Every verdict of the outbox by source, as "scheduled" or "rejected <reason>". */
    private static Map<String, List<String>> verdicts() throws Exception {
        Map<String, List<String>> out = new HashMap<>();
        try (Connection c = db.dataSource().getConnection(); Statement st = c.createStatement();
                ResultSet rs = st.executeQuery("SELECT event->'source'->>'topic', event->'source'->>'partition',"
                        + " event->'source'->>'offset', type, event->>'reason' FROM queen.timer_audit_events"
                        + " WHERE event ? 'source' ORDER BY id, seq")) {
            while (rs.next()) {
                out.computeIfAbsent(rs.getString(1) + "/" + rs.getString(2) + "@" + rs.getString(3), k -> new ArrayList<>())
                        .add(rs.getString(4) + (rs.getString(5) == null ? "" : " " + rs.getString(5)));
            }
        }
        return out;
    }

    private static RawBatch.Rec schedule(String queue, String k, Instant at, String token) {
        return RawBatch.Rec.of(keyBytes(queue, k), value(queue, k, at),
                token == null ? List.of() : List.<String[]>of(new String[] {"queen-auth", token}));
    }

    private static byte[] value(String queue, String k, Instant at) {
        return ("{\"op\":\"schedule\",\"queue\":\"" + queue + "\",\"timerKey\":\"" + k + "\",\"deliverAt\":\"" + at
                + "\",\"txn\":\"t-" + k + "\",\"payload\":{\"k\":\"" + k + "\"}}").getBytes(StandardCharsets.UTF_8);
    }

    private static byte[] keyBytes(String queue, String k) {
        return (queue + "/" + k).getBytes(StandardCharsets.UTF_8);
    }

    private static RecordMetadata send(String topic, int partition, String queue, String k, Instant at, String token) throws Exception {
        try (KafkaProducer<byte[], byte[]> p = new KafkaProducer<>(TestKafka.producerProps())) {
            RecordHeaders h = new RecordHeaders();
            if (token != null) {
                h.add("queen-auth", token.getBytes(StandardCharsets.UTF_8));
            }
            return p.send(new ProducerRecord<>(topic, partition, null, keyBytes(queue, k), value(queue, k, at), h)).get();
        }
    }

    private static String source(RecordMetadata m) {
        return m.topic() + "/" + m.partition() + "@" + m.offset();
    }

    private static long end(String topic, int partition) throws Exception {
        var tp = new org.apache.kafka.common.TopicPartition(topic, partition);
        try (var admin = TestKafka.admin()) {
            return admin.listOffsets(Map.of(tp, org.apache.kafka.clients.admin.OffsetSpec.latest())).partitionResult(tp).get().offset();
        }
    }

    private static String token(ECKey key) throws Exception {
        Instant now = Instant.now();
        JWTClaimsSet claims = new JWTClaimsSet.Builder().subject("svc").issueTime(Date.from(now.minusSeconds(600)))
                .notBeforeTime(Date.from(now.minusSeconds(600))).expirationTime(Date.from(now.plusSeconds(600)))
                .audience(AUDIENCE).issuer(ISSUER).claim("tenant", TENANT).build();
        SignedJWT jwt = new SignedJWT(new JWSHeader.Builder(JWSAlgorithm.ES256).keyID(key.getKeyID()).type(JOSEObjectType.JWT).build(), claims);
        jwt.sign(new ECDSASigner(key));
        return jwt.serialize();
    }

    private Process startBridge(String plain, String jwt, Path keys, Path log) throws Exception {
        Properties p = new Properties();
        p.setProperty("jdbc.url", db.jdbcUrl());
        p.setProperty("jdbc.user", db.user());
        p.setProperty("db.role.check", "false"); // the testkit connects as the server's superuser: the single-role opt-out (docs/schema-and-roles.md#database-roles)
        p.setProperty("jdbc.password", db.password());
        p.setProperty("kafka.bootstrap.servers", TestKafka.bootstrapServers());
        p.setProperty("command.topics", plain + "," + jwt);
        p.setProperty("topic." + plain + ".tenant", TENANT);
        p.setProperty("topic." + jwt + ".tenant", TENANT);
        p.setProperty("topic." + jwt + ".auth", "jwt");
        p.setProperty("topic." + jwt + ".auth.keys.file", keys.toString());
        p.setProperty("topic." + jwt + ".auth.audience", AUDIENCE);
        p.setProperty("topic." + jwt + ".auth.issuer", ISSUER);
        p.setProperty("audit.relay.enabled", "false"); // the outbox is read here
        p.setProperty("bridge.group.id", "g-" + plain);
        p.setProperty("http.port", "0");
        p.setProperty("bridge.start.position", "earliest");
        Path config = Files.createTempFile("unreadable-bridge", ".properties");
        config.toFile().deleteOnExit();
        try (Writer w = Files.newBufferedWriter(config)) {
            p.store(w, "bridge of a test");
        }
        String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        return new ProcessBuilder(java, "-Xmx256m", "-XX:+UseSerialGC", "-cp", System.getProperty("java.class.path"),
                BridgeMain.class.getName(), "--config", config.toString())
                .redirectErrorStream(true).redirectOutput(log.toFile()).start();
    }
}
