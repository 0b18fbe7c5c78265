package io.queen.timers.e2e;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.queen.timers.core.ops.Dependencies;
import io.queen.timers.bridge.BridgeMain;
import io.queen.timers.bridge.BridgeSettings;
import io.queen.timers.sql.Migrations;
import io.queen.timers.sweeper.LogContents;
import io.queen.timers.sweeper.SweeperMain;
import io.queen.timers.sweeper.Sweepers;
import io.queen.timers.testkit.HostileRecords.HostileRecord;
import io.queen.timers.testkit.HostileRecords;
import io.queen.timers.testkit.PostgresDatabase;
import io.queen.timers.testkit.TestKafka;
import io.queen.timers.testkit.WireSchemas;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;
import java.util.UUID;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;
import javax.sql.DataSource;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The bridge against records nobody chose by hand, through the real broker and database: N seeded
 * hostile records (valid and invalid mixed) give exactly N verdicts, one per record; the bridge is
 * still running; and a valid command sent after them fires, its payload byte-exact in the log as the
 * log's decoder reads it. Volume: {@code -Dfuzz.records} (default 400); seed: {@code -Dfuzz.seed}
 * (default random, printed, and named in every failure).
 */
class HostileCommandsFuzzIT {

    @RegisterExtension
    static final PostgresDatabase db = PostgresDatabase.initializedWith(Migrations::migrate);

    /** Exact numbers, escapes and key order: what a default Jackson tree would have changed. */
    static final String EXACT_PAYLOAD = "{\"z\":0.12345678901234567890123,\"a\":1e400,\"big\":123456789012345678901234567890,"
            + "\"tiny\":-2.5E-400,\"s\":\"\\u00e9\\n\\/\\ud83d\\ude00\",\"arr\":[1.10,2.000]}";

    @Test
    void everyHostileRecordGetsExactlyOneVerdictAndTheBridgeStillFires() throws Exception {
        long seed = Long.getLong("fuzz.seed", new Random().nextLong());
        int n = Integer.getInteger("fuzz.records", 400);
        System.out.println("HostileCommandsFuzzIT: seed " + seed + ", " + n + " records (-Dfuzz.seed=" + seed + " repeats it)");
        try {
            run(seed, n);
        } catch (AssertionError | Exception e) {
            throw new AssertionError("fuzz failed with seed " + seed + " (-Dfuzz.seed=" + seed + "): " + e.getMessage(), e);
        }
    }

    private void run(long seed, int n) throws Exception {
        String topic = "fuzz-" + UUID.randomUUID().toString().substring(0, 8);
        try (Admin admin = TestKafka.admin()) { // any timestamp a producer may set reaches the bridge
            admin.createTopics(List.of(new NewTopic(topic, 3, (short) 1).configs(Map.of(
                    "message.timestamp.before.max.ms", Long.toString(Long.MAX_VALUE),
                    "message.timestamp.after.max.ms", Long.toString(Long.MAX_VALUE))))).all().get();
        }
        String group = "fuzz-" + UUID.randomUUID();
        Random random = new Random(seed);
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        DataSource ds = db.dataSource();
        Map<String, String> histogram = new TreeMap<>();
        try (BridgeMain bridge = BridgeMain.start(BridgeSettings.from(BridgeSettings.definition().parse(bridgeSettings(topic, group))), Dependencies.defaults(registry));
                KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(TestKafka.producerProps())) {
            List<Future<RecordMetadata>> sends = new ArrayList<>();
            List<HostileRecord> records = new ArrayList<>();
            List<ProducerRecord<byte[], byte[]>> sent = new ArrayList<>();
            for (int i = 0; i < n; i++) {
                HostileRecord rec = HostileRecords.next(random, "fuzz.q");
                records.add(rec);
                Long ts = rec.timestampMs() < 0 ? null : rec.timestampMs(); // a v2 record always has one: "none" is the producer's clock
                sent.add(new ProducerRecord<>(topic, null, ts, rec.key(), rec.value(), rec.headers()));
                sends.add(producer.send(sent.get(i)));
            }
            producer.flush();
            Map<String, HostileRecord> bySource = new HashMap<>();
            Map<String, ProducerRecord<byte[], byte[]>> recordBySource = new HashMap<>();
            for (int i = 0; i < n; i++) {
                try {
                    RecordMetadata m = sends.get(i).get();
                    bySource.put(m.partition() + "@" + m.offset(), records.get(i));
                    recordBySource.put(m.partition() + "@" + m.offset(), sent.get(i));
                } catch (ExecutionException refused) {
                    histogram.merge("refused by the broker", "1", (a, b) -> Integer.toString(Integer.parseInt(a) + 1));
                }
            }
            await().atMost(Duration.ofSeconds(120)).until(() -> storedOffsets(ds, group) == bySource.size());

            Map<String, List<String>> verdicts = verdicts(ds, topic);
            assertThat(verdicts.keySet()).as("one verdict per acknowledged record").isEqualTo(bySource.keySet());
            verdicts.forEach((source, v) -> {
                assertThat(v).as("verdicts of %s: %s", source, HostileRecords.describe(bySource.get(source))).hasSize(1);
                histogram.merge(v.get(0), "1", (a, b) -> Integer.toString(Integer.parseInt(a) + 1));
            });
            assertThat(histogram).as("no record met a bug").doesNotContainKey("rejected/internal");
            // The published JSON Schemas are never more lenient than the bridge: what they refuse, the bridge rejects.
            verdicts.forEach((source, v) -> {
                List<String> schemaErrors = WireSchemas.commandErrors(recordBySource.get(source));
                if (!schemaErrors.isEmpty()) {
                    assertThat(v.get(0)).as("verdict on %s, which the schemas refuse (%s)", HostileRecords.describe(bySource.get(source)),
                            schemaErrors).startsWith("rejected");
                }
            });
            assertThat(bridge.health().report().ready()).as(bridge.health().report().text()).isTrue();

            // After all of that, a valid command is applied and fires, its payload exactly as sent.
            try (KafkaProducer<byte[], byte[]> valid = TestKafka.commandProducer()) {
                valid.send(new ProducerRecord<>(topic, "fuzz.after/last".getBytes(StandardCharsets.UTF_8),
                        HostileRecords.validSchedule("fuzz.after", "last", "after-" + seed, EXACT_PAYLOAD))).get();
            }
            try (SweeperMain sweeper = Sweepers.start(db, Map.of())) {
                await().atMost(Duration.ofSeconds(60)).until(() -> LogContents.read(ds).stream().anyMatch(m -> m.queue().equals("fuzz.after")));
            }
        }
        LogContents.Message fired = LogContents.read(ds).stream().filter(m -> m.queue().equals("fuzz.after")).findFirst().orElseThrow();
        assertThat(fired.txn()).isEqualTo("after-" + seed);
        assertThat(new String(fired.frame().payload(), StandardCharsets.UTF_8)).isEqualTo(EXACT_PAYLOAD);
        System.out.println("HostileCommandsFuzzIT: seed " + seed + ", verdicts " + histogram);
    }

    private static Map<String, String> bridgeSettings(String topic, String group) {
        Map<String, String> s = new HashMap<>();
        s.put("jdbc.url", db.jdbcUrl());
        s.put("jdbc.user", db.user());
        s.put("db.role.check", "false"); // the testkit connects as the server's superuser: the single-role opt-out (docs/schema-and-roles.md#database-roles)
        s.put("jdbc.password", db.password());
        s.put("jdbc.pool.size", "4");
        s.put("kafka.bootstrap.servers", TestKafka.bootstrapServers());
        s.put("command.topics", topic);
        s.put("audit.topic", topic + ".audit");
        s.put("audit.relay.enabled", "false"); // the verdicts stay in the outbox, where this test reads them
        s.put("bridge.group.id", group);
        s.put("bridge.payload.max.bytes", "65536");
        s.put("http.port", "0");
        s.put("bridge.start.position", "earliest"); // records sent before the group's first join are applied
        s.put("db.retry.backoff.max", "1s");
        return s;
    }

    private static long storedOffsets(DataSource ds, String group) throws Exception {
        try (Connection c = ds.getConnection(); Statement st = c.createStatement();
                ResultSet rs = st.executeQuery("SELECT coalesce(sum(next_offset), 0) FROM queen.bridge_offsets WHERE group_id = '" + group + "'")) {
            rs.next();
            return rs.getLong(1);
        }
    }

    /** partition@offset of each record of {@code topic} → its verdicts ("type" or "rejected/reason"). */
    private static Map<String, List<String>> verdicts(DataSource ds, String topic) throws Exception {
        Map<String, List<String>> out = new HashMap<>();
        try (Connection c = ds.getConnection(); Statement st = c.createStatement();
                ResultSet rs = st.executeQuery("SELECT (event->'source'->>'partition') || '@' || (event->'source'->>'offset'), type, event->>'reason'"
                        + " FROM queen.timer_audit_events WHERE event->'source'->>'topic' = '" + topic + "'")) {
            while (rs.next()) {
                out.computeIfAbsent(rs.getString(1), k -> new ArrayList<>()).add(rs.getString(3) == null ? rs.getString(2)
                        : rs.getString(2) + "/" + rs.getString(3));
            }
        }
        return out;
    }
}
