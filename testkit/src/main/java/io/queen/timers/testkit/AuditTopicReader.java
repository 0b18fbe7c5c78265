package io.queen.timers.testkit;

import io.queen.timers.client.audit.AuditEvent;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.TopicPartition;

/** Reads an audit topic of the test broker as a consumer would: every event checked by the schema and parsed by the client. */
public final class AuditTopicReader {

    private AuditTopicReader() {}

    /**
     * Partition 0 of {@code topic} from its beginning until it holds {@code n} distinct events (publishing is
     * at-least-once: a copy with a seen eventId is dropped); an AssertionError when they do not come within {@code timeout}.
     */
    public static List<AuditEvent> awaitEvents(String topic, int n, Duration timeout) {
        Map<String, Object> props = TestKafka.consumerProps("unused");
        props.remove(ConsumerConfig.GROUP_ID_CONFIG);
        List<AuditEvent> out = new ArrayList<>();
        long deadline = System.nanoTime() + timeout.toNanos();
        try (KafkaConsumer<byte[], byte[]> c = new KafkaConsumer<>(props)) {
            TopicPartition tp = new TopicPartition(topic, 0);
            c.assign(List.of(tp));
            c.seekToBeginning(List.of(tp));
            while (out.size() < n) {
                if (System.nanoTime() > deadline) {
                    throw new AssertionError("only " + out.size() + " of " + n + " audit events on " + topic + " within " + timeout);
                }
                for (ConsumerRecord<byte[], byte[]> r : c.poll(Duration.ofMillis(200))) {
                    AuditEvent e = WireSchemas.auditEvent(r.value());
                    if (out.stream().noneMatch(o -> o.meta().eventId().equals(e.meta().eventId()))) {
                        out.add(e);
                    }
                }
            }
        }
        return out;
    }
}
