package io.queen.timers.cli;

import com.fasterxml.jackson.databind.JsonNode;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.StringDeserializer;

/**
 * {@code --wait}: the bridge's verdict on the command just sent, read from the audit topic. Opened
 * (at the topic's end) before the command is sent, so the verdict cannot slip past; matched by the
 * event's {@code source} (topic, partition, offset of the command record).
 */
final class VerdictWaiter implements AutoCloseable {

    private final KafkaConsumer<String, String> consumer;

    VerdictWaiter(Map<String, Object> clientProps, String auditTopic) {
        Map<String, Object> p = new HashMap<>(clientProps);
        p.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName());
        p.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName());
        p.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false);
        p.remove(ConsumerConfig.GROUP_ID_CONFIG);
        p.putIfAbsent(ConsumerConfig.CLIENT_ID_CONFIG, "queen-timers-cli-wait");
        this.consumer = new KafkaConsumer<>(p);
        var infos = consumer.partitionsFor(auditTopic, Duration.ofSeconds(15));
        if (infos == null || infos.isEmpty()) {
            consumer.close();
            throw new UserError("audit topic " + auditTopic + " does not exist (set --audit-topic or QUEEN_AUDIT_TOPIC)");
        }
        List<TopicPartition> parts = infos.stream().map(i -> new TopicPartition(auditTopic, i.partition())).toList();
        consumer.assign(parts);
        consumer.seekToEnd(parts);
        parts.forEach(consumer::position);
    }

    /** The audit event whose source is {@code sent}, or empty after {@code timeout}. */
    Optional<JsonNode> await(RecordMetadata sent, Duration timeout) {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (System.nanoTime() < deadline) {
            for (ConsumerRecord<String, String> r : consumer.poll(Duration.ofMillis(200))) {
                JsonNode e;
                try {
                    e = Output.mapper().readTree(r.value());
                } catch (Exception notJson) {
                    continue;
                }
                JsonNode src = e.path("source");
                if (src.path("topic").asText().equals(sent.topic()) && src.path("partition").asInt(-1) == sent.partition()
                        && src.path("offset").asLong(-1) == sent.offset()) {
                    return Optional.of(e);
                }
            }
        }
        return Optional.empty();
    }

    @Override
    public void close() {
        consumer.close(Duration.ofSeconds(2));
    }
}
