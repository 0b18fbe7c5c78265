package io.queen.timers.inspect;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import javax.sql.DataSource;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;

/**
 * The bridge's stored positions in the command topics (queen.bridge_offsets, which only an operator moves), beside the
 * broker's log start and end: what the bridge has applied and how far behind it is. The CLI's {@code offsets get} and
 * the HTTP API's {@code GET /api/v1/offsets} read them here.
 */
public final class StoredOffsets {

    /** One stored offset: the next record the group applies from the partition. */
    public record Stored(String group, String topic, int partition, long next, Instant updatedAt) {}

    /** A stored offset with the broker's range of its partition (null when the broker was not asked or did not answer). */
    public record Row(Stored stored, Long logStart, Long logEnd) {

        public Long lag() {
            return logEnd == null ? null : logEnd - stored.next();
        }

        /** Whether the bridge can read on from it: outside [start, end] the partition is stopped until an operator sets it. */
        public Boolean inRange() {
            return logStart == null ? null : stored.next() >= logStart && stored.next() <= logEnd;
        }

        public Map<String, Object> fields() {
            Map<String, Object> f = new LinkedHashMap<>();
            f.put("group", stored.group());
            f.put("topic", stored.topic());
            f.put("partition", stored.partition());
            f.put("stored", stored.next());
            f.put("updatedAt", stored.updatedAt().toString());
            f.put("logStart", logStart);
            f.put("logEnd", logEnd);
            f.put("lag", lag());
            f.put("inRange", inRange());
            return f;
        }
    }

    private final DataSource ds;

    public StoredOffsets(DataSource ds) {
        this.ds = ds;
    }

    /** The stored offsets, by group, topic and partition; {@code group} and {@code topic} null for every one. */
    public List<Stored> read(String group, String topic) throws SQLException {
        List<Stored> rows = new ArrayList<>();
        try (Connection c = ds.getConnection();
                PreparedStatement st = c.prepareStatement("SELECT group_id, topic, \"partition\", next_offset, updated_at"
                        + " FROM queen.bridge_offsets WHERE (?::text IS NULL OR group_id = ?) AND (?::text IS NULL OR topic = ?)"
                        + " ORDER BY group_id, topic, \"partition\"")) {
            st.setString(1, group);
            st.setString(2, group);
            st.setString(3, topic);
            st.setString(4, topic);
            try (ResultSet rs = st.executeQuery()) {
                while (rs.next()) {
                    rows.add(new Stored(rs.getString("group_id"), rs.getString("topic"), rs.getInt("partition"), rs.getLong("next_offset"),
                            rs.getTimestamp("updated_at").toInstant()));
                }
            }
        }
        return rows;
    }

    /**
     * The command topics bridges registered for {@code tenant} alone (queen.bridge_topics): a caller that may see one
     * tenant sees the offsets of these topics only. A topic registered for several tenants is nobody's to show.
     */
    public Set<String> topicsOf(UUID tenant) throws SQLException {
        Set<String> out = new java.util.TreeSet<>();
        DeadLetters.BridgeTopics.read(ds).forEach((t, tenants) -> {
            if (tenants.equals(Set.of(tenant))) {
                out.add(t);
            }
        });
        return out;
    }

    /**
     * The rows with the broker's log start and end, asked with {@code consumerProps} (a consumer's settings; no group is
     * joined). @throws org.apache.kafka.common.KafkaException when the broker does not answer within {@code timeout}
     */
    public static List<Row> withBroker(List<Stored> rows, Map<String, Object> consumerProps, Duration timeout) {
        if (rows.isEmpty()) {
            return List.of();
        }
        List<TopicPartition> parts = rows.stream().map(r -> new TopicPartition(r.topic(), r.partition())).distinct().toList();
        Map<String, Object> props = new HashMap<>(consumerProps);
        props.remove(ConsumerConfig.GROUP_ID_CONFIG); // reads positions, joins no group
        props.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
        props.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
        Map<TopicPartition, Long> start;
        Map<TopicPartition, Long> end;
        try (var consumer = new KafkaConsumer<byte[], byte[]>(props)) {
            start = consumer.beginningOffsets(parts, timeout);
            end = consumer.endOffsets(parts, timeout);
        }
        return rows.stream().map(r -> {
            TopicPartition tp = new TopicPartition(r.topic(), r.partition());
            return new Row(r, start.get(tp), end.get(tp));
        }).toList();
    }

    /** The rows without the broker's range. */
    public static List<Row> alone(List<Stored> rows) {
        return rows.stream().map(r -> new Row(r, null, null)).toList();
    }
}
