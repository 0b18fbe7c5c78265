package io.queen.timers.bridge;

import static io.queen.timers.bridge.BridgeTestSupport.longQuery;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.queen.timers.client.command.TimerCommand;
import io.queen.timers.relay.AuditSettings;
import io.queen.timers.routes.RouteSettings;
import io.queen.timers.stack.ServiceSettings;
import io.queen.timers.stack.Stack;
import io.queen.timers.testkit.PerClass;
import io.queen.timers.testkit.TestKafka;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.util.List;
import java.util.function.Consumer;
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
    static final PerClass<Stack> stack = PerClass.of(Stack::shared);

    static final String TENANT_B = "0000000b-0000-0000-0000-00000000000b";

    @Test
    void aNewGroupOnATopicHoldingRecordsWaitsWithoutTheSettingAndWithLatestSkipsThemAuditedToTheTopicsTenant() throws Exception {
        String topic = TestKafka.newTopic("cmd-start", 2);
        String group = stack.get().uniqueName("g-start-");
        Consumer<ServiceSettings> s = b -> b.set(RouteSettings.COMMAND_TOPICS, List.of(topic)).set(BridgeSettings.GROUP_ID, group)
                .set(AuditSettings.RELAY_ENABLED, false).topic(topic, "tenant", TENANT_B);
        try (KafkaProducer<byte[], byte[]> producer = TestKafka.commandProducer()) {
            send(producer, topic, 0, "latest.q", "old", 5); // partition 1 stays empty
            try (BridgeMain bridge = start(s, null)) {
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
            try (BridgeMain bridge = start(s, "latest")) {
                await().atMost(Duration.ofSeconds(60)).until(() -> storedOffset(group, topic, 0) == 5);
                send(producer, topic, 0, "latest.q", "new", 2);
                await().atMost(Duration.ofSeconds(60)).until(() -> storedOffset(group, topic, 0) == 7);
                await().atMost(Duration.ofSeconds(30)).until(() -> bridge.health().report().ready());
            }
        }
        assertThat(timers("latest.q")).as("only the records sent after the start").isEqualTo(2);
        assertThat(longQuery(stack.get().owner(), "SELECT count(*) FROM queen.log_timers WHERE queue = 'latest.q' AND timer_key LIKE 'old-%'"))
                .isZero();
        try (Connection c = stack.get().owner().getConnection(); Statement st = c.createStatement();
                ResultSet rs = st.executeQuery("SELECT tenant_id, event->>'from', event->>'to', event->>'by', event->>'reason'"
                        + " FROM queen.timer_audit_outbox WHERE type = 'offset_moved' AND event->>'group' = '" + group + "'")) {
            assertThat(rs.next()).isTrue();
            assertThat(rs.getString(1)).as("the tenant the bridge registered for the topic").isEqualTo(TENANT_B);
            assertThat(rs.getString(2)).isNull();
            assertThat(rs.getString(3)).isEqualTo("5");
            assertThat(rs.getString(4)).startsWith(Bridges.login(stack.get()) + "@");
            assertThat(rs.getString(5)).contains("bridge.start.position=latest", "[0, 5)", "no verdict");
            assertThat(rs.next()).isFalse();
        }
        assertThat(longQuery(stack.get().owner(), "SELECT count(*) FROM queen.bridge_topics WHERE group_id = '" + group + "' AND topic = '"
                + topic + "' AND tenant_id = '" + TENANT_B + "'")).isEqualTo(1);
    }

    @Test
    void withEarliestANewGroupAppliesEveryRetainedRecord() throws Exception {
        String topic = TestKafka.newTopic("cmd-earliest", 1);
        String group = stack.get().uniqueName("g-earliest-");
        Consumer<ServiceSettings> s = b -> b.set(RouteSettings.COMMAND_TOPICS, List.of(topic)).set(BridgeSettings.GROUP_ID, group)
                .set(AuditSettings.RELAY_ENABLED, false);
        try (KafkaProducer<byte[], byte[]> producer = TestKafka.commandProducer()) {
            send(producer, topic, 0, "earliest.q", "old", 5);
            try (BridgeMain bridge = start(s, "earliest")) {
                await().atMost(Duration.ofSeconds(60)).until(() -> storedOffset(group, topic, 0) == 5);
            }
        }
        assertThat(timers("earliest.q")).isEqualTo(5);
    }

    /** A test-sized bridge of the stack with {@code extra}'s settings and {@code startPosition} (null: unset, as it ships). */
    private static BridgeMain start(Consumer<ServiceSettings> settings, String startPosition) {
        return Bridges.start(stack.get(), settings.andThen(b -> b.set(BridgeSettings.START_POSITION, startPosition)),
                new SimpleMeterRegistry());
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
        return longQuery(stack.get().owner(), "SELECT count(*) FROM queen.log_timers WHERE queue = '" + queue + "'");
    }

    private static long storedOffset(String group, String topic, int partition) throws Exception {
        return longQuery(stack.get().owner(), "SELECT coalesce(max(next_offset), -1) FROM queen.bridge_offsets WHERE group_id = '" + group
                + "' AND topic = '" + topic + "' AND partition = " + partition);
    }
}
