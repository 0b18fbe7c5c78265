package io.queen.timers.bridge;

import static io.queen.timers.bridge.BridgeTestSupport.longQuery;
import static io.queen.timers.bridge.BridgeTestSupport.storedOffsetSum;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.queen.timers.bridge.ingest.OffsetStore;
import io.queen.timers.client.command.TimerCommand;
import io.queen.timers.relay.AuditSettings;
import io.queen.timers.routes.RouteSettings;
import io.queen.timers.stack.ServiceSettings;
import io.queen.timers.stack.Stack;
import io.queen.timers.testkit.PerClass;
import io.queen.timers.testkit.TestKafka;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.RecordsToDelete;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Never skip silently: retention (here Admin.deleteRecords) passes the group's stored offset. The
 * partition stops with a clear error, a metric and readiness false, and moves only when an operator
 * sets its offset on purpose, which writes an offset_moved audit event.
 */
class OutOfRangeOffsetIT {

    @RegisterExtension
    static final PerClass<Stack> stack = PerClass.of(Stack::shared);

    @Test
    void anOutOfRangeStoredOffsetStopsThePartitionUntilAnOperatorMovesIt() throws Exception {
        String topic = TestKafka.newTopic("cmd-range", 2);
        String group = stack.get().uniqueName("g-range-");
        Consumer<ServiceSettings> s = b -> b.set(RouteSettings.COMMAND_TOPICS, List.of(topic)).set(BridgeSettings.GROUP_ID, group)
                .set(AuditSettings.RELAY_ENABLED, false);
        try (KafkaProducer<byte[], byte[]> producer = TestKafka.commandProducer()) {
            send(producer, topic, 0, 0, 10);
            send(producer, topic, 1, 0, 10);
            try (BridgeMain bridge = Bridges.start(stack.get(), s, new SimpleMeterRegistry())) {
                await().atMost(Duration.ofSeconds(60)).until(() -> storedOffsetSum(stack.get().owner(), group) == 20);
            }
            send(producer, topic, 0, 10, 10); // offsets 10..19 of partition 0, never applied
            try (Admin admin = TestKafka.admin()) {
                admin.deleteRecords(Map.of(new TopicPartition(topic, 0), RecordsToDelete.beforeOffset(15))).all().get();
            }
            SimpleMeterRegistry registry = new SimpleMeterRegistry();
            try (BridgeMain bridge = Bridges.start(stack.get(), s, registry)) {
                await().atMost(Duration.ofSeconds(60)).until(() -> !bridge.health().report().ready()
                        && bridge.health().report().text().contains("out-of-range"));
                assertThat(bridge.health().report().text()).contains("ingest-partitions: stopped")
                        .contains(topic + "-0@10").contains("queen-timers offsets set");
                assertThat(registry.get("queen.timers.bridge.partitions.stopped").gauge().value()).isEqualTo(1.0);

                send(producer, topic, 1, 10, 5); // the other partition goes on
                await().atMost(Duration.ofSeconds(60)).until(() -> storedOffsetSum(stack.get().owner(), group) == 10 + 15);
                Thread.sleep(3000); // and the stopped one stays where it is: nothing is skipped on its own
                assertThat(storedOffset(group, topic, 0)).isEqualTo(10);
                assertThat(bridge.health().report().ready()).isFalse();

                Long previous = new OffsetStore(stack.get().owner(), group).move(topic, 0, 15, "retention passed 10..14 in a test", false, null, "test").previous();
                assertThat(previous).isEqualTo(10);
                await().atMost(Duration.ofSeconds(60)).until(() -> storedOffset(group, topic, 0) == 20);
                await().atMost(Duration.ofSeconds(30)).until(() -> bridge.health().report().ready());
                assertThat(registry.get("queen.timers.bridge.partitions.stopped").gauge().value()).isZero();
            }
        }
        assertThat(longQuery(stack.get().owner(), "SELECT count(*) FROM queen.timer_audit_outbox WHERE type = 'offset_moved'"
                + " AND event->>'topic' = '" + topic + "' AND (event->>'from')::bigint = 10 AND (event->>'to')::bigint = 15"
                + " AND event->>'reason' = 'retention passed 10..14 in a test'")).isEqualTo(1);
        assertThat(longQuery(stack.get().owner(), "SELECT count(*) FROM queen.log_timers WHERE queue = 'range' AND timer_key LIKE 'p0-%'"))
                .as("partition 0: 0..9 before, 15..19 after the move").isEqualTo(15);
    }

    private static void send(KafkaProducer<byte[], byte[]> producer, String topic, int partition, int from, int n) throws Exception {
        for (int i = from; i < from + n; i++) {
            String key = "p" + partition + "-" + i;
            ProducerRecord<byte[], byte[]> r = TimerCommand.schedule("range", key).delay(Duration.ofHours(1)).txn("t").payload("1").envelope(topic);
            producer.send(new ProducerRecord<>(topic, partition, r.key(), r.value())).get();
        }
    }

    private static long storedOffset(String group, String topic, int partition) throws Exception {
        return longQuery(stack.get().owner(), "SELECT coalesce(max(next_offset), -1) FROM queen.bridge_offsets WHERE group_id = '" + group
                + "' AND topic = '" + topic + "' AND partition = " + partition);
    }
}
