package io.queen.timers.relay;

import static io.queen.timers.relay.AuditRelayIT.DEFAULT;
import static io.queen.timers.relay.AuditRelayIT.JSON;
import static io.queen.timers.relay.AuditRelayIT.OTHER;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.queen.timers.core.config.CommonSettings;
import io.queen.timers.core.config.ConfigDef;
import io.queen.timers.core.config.HealthSettings;
import io.queen.timers.core.health.LoopProgress;
import io.queen.timers.embedded.EmbeddedKafkaBroker;
import io.queen.timers.sql.Migrations;
import io.queen.timers.testkit.PostgresDatabase;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * One tenant's audit topic cannot stop the others. A broker of its own with auto-create OFF (as in
 * docker/docker-compose.yml), so a tenant's audit topic can be missing and then created.
 */
class HeldTopicIT {

    @RegisterExtension
    static final PostgresDatabase db = PostgresDatabase.initializedWith(Migrations::migrate);

    static EmbeddedKafkaBroker broker;

    @BeforeAll
    static void startBroker() {
        broker = EmbeddedKafkaBroker.startTemporary(Map.of("auto.create.topics.enable", "false"));
    }

    @AfterAll
    static void stopBroker() {
        if (broker != null) {
            broker.close();
        }
    }

    @Test
    void aMissingTopicHoldsOnlyItsOwnEventsWhichArriveInOrderWithTheirEventIdsOnceItExists() throws Exception {
        String audit = "audit.held";
        String otherTopic = audit + "." + OTHER;
        createTopic(audit);
        for (int i = 0; i < 30; i++) {
            insert(DEFAULT, "q/k" + (i % 3), "{\"n\":" + i + "}");
            insert(OTHER, "q/k" + (i % 3), "{\"n\":" + i + "}");
        }
        List<String> heldIds = eventIds(OTHER);
        Map<String, String> s = new HashMap<>();
        s.put("jdbc.url", db.jdbcUrl());
        s.put("kafka.bootstrap.servers", broker.bootstrapServers());
        s.put("audit.topic", audit);
        s.put("audit.relay.poll.interval", "50ms");
        s.put("audit.relay.batch.size", "7"); // many rounds, each mixing both tenants
        s.put("audit.relay.send.timeout", "1s");
        s.put("db.retry.backoff.max", "1s");
        var config = new ConfigDef().include(CommonSettings.definition()).include(AuditSettings.definition()).parse(s);
        LoopProgress progress = new LoopProgress("audit-relay", new HealthSettings(Duration.ofMinutes(1), Duration.ofMinutes(1)),
                Clock.systemUTC());
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        try (AuditRelay relay = new AuditRelay(db.dataSource(), AuditSettings.from(config), CommonSettings.from(config), registry, progress).start()) {
            // the default tenant's events flow although the other tenant's topic does not exist
            await().atMost(Duration.ofSeconds(60)).until(() -> count(DEFAULT) == 0);
            assertThat(readAll(audit)).hasSize(30);
            assertThat(count(OTHER)).isEqualTo(30);
            assertThat(relay.heldTopics()).containsOnlyKeys(otherTopic);
            assertThat(registry.get("queen.timers.audit.held.topics").gauge().value()).isEqualTo(1);
            assertThat(progress.problem()).hasValueSatisfying(p -> assertThat(p).contains("topic " + otherTopic + " since"));
            await().atMost(Duration.ofSeconds(30)).untilAsserted(() -> assertThat(
                    registry.get("queen.timers.audit.outbox.backlog").tag("topic", otherTopic).gauge().value()).isEqualTo(30));

            // ... and keep flowing while it stays missing (probes come and go)
            for (int i = 30; i < 40; i++) {
                insert(DEFAULT, "q/k" + (i % 3), "{\"n\":" + i + "}");
            }
            await().atMost(Duration.ofSeconds(30)).until(() -> count(DEFAULT) == 0);
            assertThat(count(OTHER)).isEqualTo(30);

            createTopic(otherTopic);
            await().atMost(Duration.ofSeconds(60)).until(() -> count(OTHER) == 0);
            await().atMost(Duration.ofSeconds(10)).until(() -> relay.heldTopics().isEmpty());
            assertThat(registry.get("queen.timers.audit.held.topics").gauge().value()).isZero();
            assertThat(progress.problem()).isEmpty();
        }
        List<JsonNode> defaultEvents = readAll(audit);
        assertThat(defaultEvents).hasSize(40);
        List<JsonNode> otherEvents = readAll(otherTopic);
        assertThat(otherEvents).extracting(e -> e.get("eventId").asText()).containsExactlyElementsOf(heldIds);
        assertThat(otherEvents).extracting(e -> e.get("n").asInt()).isSorted().hasSize(30);
    }

    private static void createTopic(String name) throws Exception {
        try (Admin admin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, broker.bootstrapServers()))) {
            admin.createTopics(List.of(new NewTopic(name, 1, (short) 1))).all().get();
        }
    }

    private static void insert(String tenant, String key, String event) throws Exception {
        try (Connection c = db.dataSource().getConnection();
                var st = c.prepareStatement("INSERT INTO queen.timer_audit_outbox (tenant_id, kafka_key, type, event) VALUES (?::uuid, ?, 'scheduled', ?::jsonb)")) {
            st.setString(1, tenant);
            st.setString(2, key);
            st.setString(3, event);
            st.executeUpdate();
        }
    }

    private static long count(String tenant) throws Exception {
        try (Connection c = db.dataSource().getConnection(); Statement st = c.createStatement();
                ResultSet rs = st.executeQuery("SELECT count(*) FROM queen.timer_audit_outbox WHERE tenant_id = '" + tenant + "'")) {
            rs.next();
            return rs.getLong(1);
        }
    }

    private static List<String> eventIds(String tenant) throws Exception {
        List<String> ids = new ArrayList<>();
        try (Connection c = db.dataSource().getConnection(); Statement st = c.createStatement();
                ResultSet rs = st.executeQuery("SELECT event_id FROM queen.timer_audit_outbox WHERE tenant_id = '" + tenant + "' ORDER BY id")) {
            while (rs.next()) {
                ids.add(rs.getString(1));
            }
        }
        return ids;
    }

    private static List<JsonNode> readAll(String topic) throws Exception {
        Map<String, Object> p = new HashMap<>();
        p.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, broker.bootstrapServers());
        p.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
        p.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
        List<JsonNode> out = new ArrayList<>();
        try (KafkaConsumer<byte[], byte[]> c = new KafkaConsumer<>(p)) {
            List<TopicPartition> tps = c.partitionsFor(topic, Duration.ofSeconds(10)).stream()
                    .map(i -> new TopicPartition(topic, i.partition())).toList();
            c.assign(tps);
            c.seekToBeginning(tps);
            Map<TopicPartition, Long> end = c.endOffsets(tps);
            while (tps.stream().anyMatch(tp -> c.position(tp) < end.get(tp))) {
                for (ConsumerRecord<byte[], byte[]> r : c.poll(Duration.ofMillis(200))) {
                    out.add(JSON.readTree(r.value()));
                }
            }
        }
        return out;
    }
}
