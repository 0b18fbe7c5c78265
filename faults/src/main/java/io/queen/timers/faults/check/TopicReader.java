package io.queen.timers.faults.check;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.function.Consumer;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;

/** A plain consumer, no group: reads every partition of a topic from the beginning to its end at call time. */
public final class TopicReader {

    private TopicReader() {
    }

    static long readAll(String bootstrap, String topic, Consumer<ConsumerRecord<byte[], byte[]>> sink) {
        Properties p = new Properties();
        p.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        p.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
        p.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
        p.put(ConsumerConfig.MAX_PARTITION_FETCH_BYTES_CONFIG, Integer.toString(8 << 20));
        long n = 0;
        try (KafkaConsumer<byte[], byte[]> c = new KafkaConsumer<>(p, new ByteArrayDeserializer(), new ByteArrayDeserializer())) {
            List<TopicPartition> parts = c.partitionsFor(topic, Duration.ofSeconds(60)).stream()
                    .map(i -> new TopicPartition(topic, i.partition())).toList();
            c.assign(parts);
            c.seekToBeginning(parts);
            Map<TopicPartition, Long> end = c.endOffsets(parts, Duration.ofSeconds(60));
            while (parts.stream().anyMatch(tp -> c.position(tp, Duration.ofSeconds(60)) < end.get(tp))) {
                for (ConsumerRecord<byte[], byte[]> r : c.poll(Duration.ofMillis(500))) {
                    if (r.offset() < end.get(new TopicPartition(r.topic(), r.partition()))) {
                        sink.accept(r);
                        n++;
                    }
                }
            }
        }
        return n;
    }

    public static Map<TopicPartition, Long> endOffsets(String bootstrap, List<String> topics) {
        Properties p = new Properties();
        p.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        p.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
        try (KafkaConsumer<byte[], byte[]> c = new KafkaConsumer<>(p, new ByteArrayDeserializer(), new ByteArrayDeserializer())) {
            List<TopicPartition> parts = topics.stream().flatMap(t -> c.partitionsFor(t, Duration.ofSeconds(60)).stream()
                    .map(i -> new TopicPartition(t, i.partition()))).toList();
            return c.endOffsets(parts, Duration.ofSeconds(60));
        }
    }
}
