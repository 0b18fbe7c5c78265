package io.queen.timers.testkit;

import io.queen.timers.embedded.SharedKafka;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;

/**
 * The one Kafka broker of this test JVM ({@link SharedKafka}: {@code QUEEN_TEST_KAFKA}, else an in-process single-node
 * KRaft broker). Tests isolate by topic: {@link #newTopic}.
 */
public final class TestKafka {

    private static final AtomicInteger COUNTER = new AtomicInteger();

    private TestKafka() {}

    public static String bootstrapServers() {
        return SharedKafka.bootstrapServers();
    }

    /** Topic settings of a command topic whose tokens are checked (auth=jwt): the broker stamps record timestamps. */
    public static final Map<String, String> BROKER_TIMESTAMPS = Map.of("message.timestamp.type", "LogAppendTime");

    /** Creates a topic no other test uses, with {@code partitions} partitions, and returns its name. */
    public static String newTopic(String prefix, int partitions) {
        return newTopic(prefix, partitions, Map.of());
    }

    /** {@link #newTopic(String, int)} with these topic settings ({@code message.timestamp.type}, ...). */
    public static String newTopic(String prefix, int partitions, Map<String, String> configs) {
        String name = prefix.toLowerCase(Locale.ROOT).replaceAll("[^a-z0-9._-]", "-") + "-" + COUNTER.incrementAndGet()
                + "-" + UUID.randomUUID().toString().substring(0, 8);
        createTopic(name, partitions, configs);
        return name;
    }

    public static void createTopic(String name, int partitions) {
        createTopic(name, partitions, Map.of());
    }

    public static void createTopic(String name, int partitions, Map<String, String> configs) {
        try (Admin admin = admin()) {
            admin.createTopics(List.of(new NewTopic(name, partitions, (short) 1).configs(configs))).all().get();
        } catch (ExecutionException e) {
            throw new IllegalStateException("cannot create topic " + name + ": " + e.getCause().getMessage(), e.getCause());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    public static Admin admin() {
        return Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers()));
    }

    /** Byte-array producer settings: acks=all, idempotent. */
    public static Map<String, Object> producerProps() {
        Map<String, Object> p = new HashMap<>();
        p.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers());
        p.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class.getName());
        p.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class.getName());
        p.put(ProducerConfig.ACKS_CONFIG, "all");
        p.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, true);
        p.put(ProducerConfig.LINGER_MS_CONFIG, 5);
        return p;
    }

    /**
     * The producer every test sends its well-formed commands with: each record is checked against the
     * command schemas first ({@link SchemaCheckedProducer}).
     */
    public static SchemaCheckedProducer commandProducer() {
        return new SchemaCheckedProducer(producerProps());
    }

    /** Byte-array consumer settings reading from the earliest offset. */
    public static Map<String, Object> consumerProps(String groupId) {
        Map<String, Object> p = new HashMap<>();
        p.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers());
        p.put(ConsumerConfig.GROUP_ID_CONFIG, groupId);
        p.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
        p.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
        p.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        p.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false);
        return p;
    }
}
