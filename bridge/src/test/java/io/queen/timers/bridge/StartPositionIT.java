package io.queen.timers.bridge;

import static io.queen.timers.bridge.BridgeTestSupport.config;
import static io.queen.timers.bridge.BridgeTestSupport.longQuery;
import static io.queen.timers.bridge.BridgeTestSupport.settings;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.queen.timers.core.ops.Dependencies;
import io.queen.timers.client.command.TimerCommand;
import io.queen.timers.sql.Migrations;
import io.queen.timers.testkit.PostgresDatabase;
import io.queen.timers.testkit.TestKafka;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.util.Map;
import java.util.UUID;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Issue 24, point 5: a group with no stored offset never consumes a partition that holds records from its start on its
 * own (a new or mistyped bridge.group.id would replay every schedule, and fired timers would fire again): without
 * bridge.start.position it waits, paused, and readiness says so; {@code latest} starts at the log end, stored and audited
 * to the tenant that owns the topic; {@code earliest} applies every retained record.
 */
class StartPositionIT {

    @RegisterExtension
    static final PostgresDatabase db = PostgresDatabase.initializedWith(Migrations::migrate);

    static final String TENANT_B = "0000000b-0000-0000-0000-00000000000b";

    @Test
    void aNewGroupOnATopicHoldingRecordsWaitsWithoutTheSettingAndWithLatestSkipsThemAuditedToTheTopicsTenant() throws Exception {
        String topic = TestKafka.newTopic("cmd-start", 2);
        String group = "g-" + UUID.randomUUID();
        Map<String, String> s = settings(db, topic, TestKafka.newTopic("audit", 1), group);
        s.remove("bridge.start.position");
        s.put("audit.relay.enabled", "false");
        s.put("topic." + topic + ".tenant", TENANT_B);
        try (KafkaProducer<byte[], byte[]> producer = TestKafka.commandProducer()) {
            send(producer, topic, 0, "latest.q", "old", 5); // partition 1 stays empty
            try (BridgeMain bridge = BridgeMain.start(BridgeSettings.from(config(s)), Dependencies.defaults(new SimpleMeterRegistry()))) {
                await().atMost(Duration.ofSeconds(60)).until(() -> !bridge.health().report().ready()
                        && bridge.health().report().text().contains("bridge.start.position"));
                assertThat(bridge.health().report().text()).contains("waiting", group, topic + "-0 holds 0..4").doesNotContain(topic + "-1");
                send(producer, topic, 1, "other.q", "p1", 3); // the empty partition started at its beginning and goes on
                await().atMost(Duration.ofSeconds(60)).until(() -> storedOffset(group, topic, 1) == 3);
                Thread.sleep(3000); // while the waiting one consumes nothing
                assertThat(timers("other.q")).isEqualTo(3);
                assertThat(timers("latest.q")).isZero();
                assertThat(storedOffset(group, topic, 0)).isEqualTo(-1);
                assertThat(bridge.health().report().ready()).isFalse();
            }
            s.put("bridge.start.position", "latest");
            try (BridgeMain bridge = BridgeMain.start(BridgeSettings.from(config(s)), Dependencies.defaults(new SimpleMeterRegistry()))) {
                await().atMost(Duration.ofSeconds(60)).until(() -> storedOffset(group, topic, 0) == 5);
                send(producer, topic, 0, "latest.q", "new", 2);
                await().atMost(Duration.ofSeconds(60)).until(() -> storedOffset(group, topic, 0) == 7);
                await().atMost(Duration.ofSeconds(30)).until(() -> bridge.health().report().ready());
            }
        }
        assertThat(timers("latest.q")).as("only the records sent after the start").isEqualTo(2);
        assertThat(longQuery(db.dataSource(), "SELECT count(*) FROM queen.log_timers WHERE queue = 'latest.q' AND timer_key LIKE 'old-%'"))
                .isZero();
        try (Connection c = db.dataSource().getConnection(); Statement st = c.createStatement();
                ResultSet rs = st.executeQuery("SELECT tenant_id, event->>'from', event->>'to', event->>'by', event->>'reason'"
                        + " FROM queen.timer_audit_outbox WHERE type = 'offset_moved' AND event->>'group' = '" + group + "'")) {
            assertThat(rs.next()).isTrue();
            assertThat(rs.getString(1)).as("the tenant the bridge registered for the topic").isEqualTo(TENANT_B);
            assertThat(rs.getString(2)).isNull();
            assertThat(rs.getString(3)).isEqualTo("5");
            assertThat(rs.getString(4)).startsWith(db.user() + "@");
            assertThat(rs.getString(5)).contains("bridge.start.position=latest", "[0, 5)", "no verdict");
            assertThat(rs.next()).isFalse();
        }
        assertThat(longQuery(db.dataSource(), "SELECT count(*) FROM queen.bridge_topics WHERE group_id = '" + group + "' AND topic = '"
                + topic + "' AND tenant_id = '" + TENANT_B + "'")).isEqualTo(1);
    }

    @Test
    void withEarliestANewGroupAppliesEveryRetainedRecord() throws Exception {
        String topic = TestKafka.newTopic("cmd-earliest", 1);
        String group = "g-" + UUID.randomUUID();
        Map<String, String> s = settings(db, topic, TestKafka.newTopic("audit", 1), group);
        s.put("bridge.start.position", "earliest");
        s.put("audit.relay.enabled", "false");
        try (KafkaProducer<byte[], byte[]> producer = TestKafka.commandProducer()) {
            send(producer, topic, 0, "earliest.q", "old", 5);
            try (BridgeMain bridge = BridgeMain.start(BridgeSettings.from(config(s)), Dependencies.defaults(new SimpleMeterRegistry()))) {
                await().atMost(Duration.ofSeconds(60)).until(() -> storedOffset(group, topic, 0) == 5);
            }
        }
        assertThat(timers("earliest.q")).isEqualTo(5);
    }

    private static void send(KafkaProducer<byte[], byte[]> producer, String topic, int partition, String queue, String prefix, int n)
            throws Exception {
        for (int i = 0; i < n; i++) {
            ProducerRecord<byte[], byte[]> r = TimerCommand.schedule(queue, prefix + "-" + i).delay(Duration.ofHours(1)).txn("t").payload("1")
                    .envelope(topic);
            producer.send(new ProducerRecord<>(topic, partition, r.key(), r.value())).get();
        }
    }

    private static long timers(String queue) throws Exception {
        return longQuery(db.dataSource(), "SELECT count(*) FROM queen.log_timers WHERE queue = '" + queue + "'");
    }

    private static long storedOffset(String group, String topic, int partition) throws Exception {
        return longQuery(db.dataSource(), "SELECT coalesce(max(next_offset), -1) FROM queen.bridge_offsets WHERE group_id = '" + group
                + "' AND topic = '" + topic + "' AND partition = " + partition);
    }
}
