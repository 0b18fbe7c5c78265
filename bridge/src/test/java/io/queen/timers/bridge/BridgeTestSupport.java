package io.queen.timers.bridge;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.queen.timers.testkit.TestKafka;
import io.queen.timers.testkit.WireSchemas;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import javax.sql.DataSource;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.PartitionInfo;
import org.apache.kafka.common.TopicPartition;

/** What the bridge's integration tests share: reading the audit trail and the stored offsets (their bridges: {@link Bridges}). */
final class BridgeTestSupport {

    static final ObjectMapper JSON = new ObjectMapper();

    private BridgeTestSupport() {}

    /**
     * Every record of the audit topic {@code topic} from the beginning to its current end, values parsed
     * as JSON; each is checked against schemas/audit-event.schema.json and parsed by the client first.
     */
    static List<JsonNode> readAll(String topic) {
        Map<String, Object> props = TestKafka.consumerProps("unused");
        props.remove(org.apache.kafka.clients.consumer.ConsumerConfig.GROUP_ID_CONFIG); // assign() only: no coordinator to leave
        List<JsonNode> out = new ArrayList<>();
        try (KafkaConsumer<byte[], byte[]> c = new KafkaConsumer<>(props)) {
            List<PartitionInfo> infos = c.partitionsFor(topic, Duration.ofSeconds(10));
            if (infos == null || infos.isEmpty()) {
                return out;
            }
            List<TopicPartition> tps = infos.stream().map(i -> new TopicPartition(topic, i.partition())).toList();
            c.assign(tps);
            c.seekToBeginning(tps);
            Map<TopicPartition, Long> end = c.endOffsets(tps);
            long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
            while (tps.stream().anyMatch(tp -> c.position(tp) < end.get(tp))) {
                if (System.nanoTime() > deadline) {
                    throw new AssertionError("cannot read " + topic + " to its end");
                }
                pollValues(c, out);
            }
        }
        return out;
    }

    /** Reads the audit topic {@code topic} from the beginning until it holds at least {@code n} events (each checked as in {@link #readAll}). */
    static List<JsonNode> awaitRecords(String topic, int n, Duration timeout) {
        Map<String, Object> props = TestKafka.consumerProps("unused");
        props.remove(org.apache.kafka.clients.consumer.ConsumerConfig.GROUP_ID_CONFIG);
        List<JsonNode> out = new ArrayList<>();
        try (KafkaConsumer<byte[], byte[]> c = new KafkaConsumer<>(props)) {
            List<TopicPartition> tps = c.partitionsFor(topic, timeout).stream().map(i -> new TopicPartition(topic, i.partition())).toList();
            c.assign(tps);
            c.seekToBeginning(tps);
            long deadline = System.nanoTime() + timeout.toNanos();
            while (out.size() < n) {
                if (System.nanoTime() > deadline) {
                    throw new AssertionError("only " + out.size() + " of " + n + " records on " + topic + " after " + timeout);
                }
                pollValues(c, out);
            }
        }
        return out;
    }

    /** One poll of {@code c}: each record's value, checked by the schema and the client, as JSON, appended to {@code out}. */
    private static void pollValues(KafkaConsumer<byte[], byte[]> c, List<JsonNode> out) {
        for (ConsumerRecord<byte[], byte[]> r : c.poll(Duration.ofMillis(200))) {
            WireSchemas.auditEvent(r.value());
            try {
                out.add(JSON.readTree(r.value()));
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }
    }

    /**
     * The audit events not yet published, as the relay would publish them (the outbox per event: V026's
     * view), each checked as in {@link #readAll}.
     */
    static List<JsonNode> outbox(DataSource ds) throws SQLException, IOException {
        List<JsonNode> out = new ArrayList<>();
        try (Connection c = ds.getConnection(); Statement st = c.createStatement();
                ResultSet rs = st.executeQuery("SELECT (jsonb_build_object('eventId', event_id, 'type', type, 'at', created_at, 'tenant', tenant_id) || event)::text "
                        + "FROM queen.timer_audit_events ORDER BY id, seq")) {
            while (rs.next()) {
                String event = rs.getString(1);
                WireSchemas.auditEvent(event.getBytes(java.nio.charset.StandardCharsets.UTF_8));
                out.add(JSON.readTree(event));
            }
        }
        return out;
    }

    /**
     * The verdicts of every source record (topic/partition/offset), deduplicated by eventId (the relay is
     * at-least-once), from the audit topic and what is still in the outbox. A record with two different
     * events would show up as a list of two.
     */
    static Map<String, List<JsonNode>> verdictsBySource(String auditTopic, DataSource ds) throws SQLException, IOException {
        Map<String, JsonNode> byEventId = new LinkedHashMap<>();
        for (JsonNode e : readAll(auditTopic)) {
            byEventId.putIfAbsent(e.get("eventId").asText(), e);
        }
        for (JsonNode e : outbox(ds)) {
            byEventId.putIfAbsent(e.get("eventId").asText(), e);
        }
        Map<String, List<JsonNode>> bySource = new HashMap<>();
        for (JsonNode e : byEventId.values()) {
            JsonNode s = e.get("source");
            if (s != null) {
                bySource.computeIfAbsent(s.get("topic").asText() + "/" + s.get("partition").asInt() + "@" + s.get("offset").asLong(),
                        k -> new ArrayList<>()).add(e);
            }
        }
        return bySource;
    }

    static long storedOffsetSum(DataSource ds, String group) throws SQLException {
        return longQuery(ds, "SELECT coalesce(sum(next_offset), 0) FROM queen.bridge_offsets WHERE group_id = '" + group + "'");
    }

    static long longQuery(DataSource ds, String sql) throws SQLException {
        try (Connection c = ds.getConnection(); Statement st = c.createStatement(); ResultSet rs = st.executeQuery(sql)) {
            rs.next();
            return rs.getLong(1);
        }
    }
}
