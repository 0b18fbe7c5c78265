package io.queen.timers.client.verdict;

import io.queen.timers.client.audit.AuditEvent;
import io.queen.timers.client.audit.AuditEvents;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;

/**
 * Sends commands and awaits each one's verdict from the audit topic, matched by the verdict's
 * {@code source} (topic, partition, offset of the command record). The audit consumer is assigned at
 * the topic's end when the sender opens, before anything is sent, so no verdict can slip past.
 *
 * <p>For tools, tests and request/response-minded producers; a service that produces at volume
 * sends with its own producer and consumes the audit topic as a stream. Not thread-safe.
 */
public final class CommandSender implements AutoCloseable {

    private final Map<String, Object> producerSettings;
    /** Made at the first send: a caller that sends with its own producer and only awaits here needs none. */
    private KafkaProducer<byte[], byte[]> producer;
    private final KafkaConsumer<byte[], byte[]> audit;
    private final Duration sendTimeout;

    /**
     * @param kafka client settings both clients share ({@code bootstrap.servers}, security, ...)
     * @param auditTopic where the bridge publishes the verdicts of the topic you send to
     */
    public CommandSender(Map<String, Object> kafka, String auditTopic) {
        this(kafka, auditTopic, DEFAULT_SEND_TIMEOUT);
    }

    /** How long a send waits for the broker unless told otherwise. */
    public static final Duration DEFAULT_SEND_TIMEOUT = Duration.ofSeconds(15);

    public CommandSender(Map<String, Object> kafka, String auditTopic, Duration sendTimeout) {
        this(kafka, kafka, auditTopic, sendTimeout);
    }

    /**
     * @param producer settings of the producer that sends the commands
     * @param consumer settings of the consumer that reads the verdicts (another principal, say)
     */
    public CommandSender(Map<String, Object> producer, Map<String, Object> consumer, String auditTopic, Duration sendTimeout) {
        this.sendTimeout = sendTimeout;
        Map<String, Object> c = new HashMap<>(consumer);
        c.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
        c.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
        c.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false);
        c.remove(ConsumerConfig.GROUP_ID_CONFIG); // assigned, never subscribed: no group to join or leave
        c.putIfAbsent(ConsumerConfig.CLIENT_ID_CONFIG, "queen-timers-client-verdicts");
        this.audit = new KafkaConsumer<>(c);
        try {
            var infos = audit.partitionsFor(auditTopic, sendTimeout);
            if (infos == null || infos.isEmpty()) {
                throw new IllegalArgumentException("audit topic " + auditTopic + " does not exist");
            }
            List<TopicPartition> parts = infos.stream().map(i -> new TopicPartition(auditTopic, i.partition())).toList();
            audit.assign(parts);
            audit.seekToEnd(parts);
            parts.forEach(audit::position); // resolve the end now: a verdict written after this point is seen
        } catch (RuntimeException e) {
            audit.close();
            throw e;
        }
        this.producerSettings = new HashMap<>(producer);
    }

    /** Sends {@code command} and waits for the broker's acknowledgement. */
    public RecordMetadata send(ProducerRecord<byte[], byte[]> command) {
        try {
            return producer().send(command).get(sendTimeout.toMillis() + 1000, TimeUnit.MILLISECONDS);
        } catch (ExecutionException e) {
            throw new IllegalStateException("Kafka did not accept the command " + describe(command) + ": " + e.getCause().getMessage(),
                    e.getCause());
        } catch (TimeoutException e) {
            throw new IllegalStateException("Kafka did not acknowledge the command " + describe(command) + " within " + sendTimeout);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while sending " + describe(command));
        }
    }

    /**
     * Sends {@code command} and returns the bridge's verdict on it, or throws when none came within
     * {@code timeout} (is a bridge consuming the topic?).
     */
    public AuditEvent.Verdict sendAndAwait(ProducerRecord<byte[], byte[]> command, Duration timeout) {
        RecordMetadata sent = send(command);
        return await(sent, timeout).orElseThrow(() -> new IllegalStateException("no verdict for " + sent.topic() + "["
                + sent.partition() + "]@" + sent.offset() + " within " + timeout + " (is a bridge consuming " + sent.topic() + "?)"));
    }

    /** The verdict on the record at {@code sent}, or empty after {@code timeout}. Other events are skipped. */
    public Optional<AuditEvent.Verdict> await(RecordMetadata sent, Duration timeout) {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (System.nanoTime() < deadline) {
            for (ConsumerRecord<byte[], byte[]> r : audit.poll(Duration.ofMillis(200))) {
                AuditEvent e;
                try {
                    e = AuditEvents.parse(r.value());
                } catch (AuditEvents.MalformedEvent notOurs) {
                    continue; // not an event of this format: not the answer
                }
                if (e instanceof AuditEvent.Verdict v && v.source().topic().equals(sent.topic())
                        && v.source().partition() == sent.partition() && v.source().offset() == sent.offset()) {
                    return Optional.of(v);
                }
            }
        }
        return Optional.empty();
    }

    /** One command of {@link #sendAllAndAwait}: where it was written, and its verdict (empty when none came in time). */
    public record Answer(RecordMetadata sent, Optional<AuditEvent.Verdict> verdict) {}

    /**
     * Sends every command, then awaits all their verdicts together: one poll loop collects each verdict whichever order
     * the audit topic returns them in (commands on different keys land on different partitions, so their verdicts
     * may come in any order; awaiting them one by one with {@link #await} would skip, and lose, the others). The answers
     * are in the order of {@code commands}; a command whose verdict did not come within {@code timeout} has an empty one.
     */
    public List<Answer> sendAllAndAwait(List<ProducerRecord<byte[], byte[]>> commands, Duration timeout) {
        List<java.util.concurrent.Future<RecordMetadata>> futures = new java.util.ArrayList<>();
        for (ProducerRecord<byte[], byte[]> c : commands) {
            futures.add(producer().send(c));
        }
        List<RecordMetadata> sent = new java.util.ArrayList<>();
        for (int i = 0; i < futures.size(); i++) {
            try {
                sent.add(futures.get(i).get(sendTimeout.toMillis() + 1000, TimeUnit.MILLISECONDS));
            } catch (ExecutionException e) {
                throw new IllegalStateException("Kafka did not accept the command " + describe(commands.get(i)) + ": "
                        + e.getCause().getMessage(), e.getCause());
            } catch (TimeoutException e) {
                throw new IllegalStateException("Kafka did not acknowledge the command " + describe(commands.get(i)) + " within " + sendTimeout);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException("interrupted while sending " + describe(commands.get(i)));
            }
        }
        Map<AuditEvent.Source, AuditEvent.Verdict> found = new HashMap<>();
        java.util.Set<AuditEvent.Source> wanted = new java.util.HashSet<>();
        sent.forEach(m -> wanted.add(new AuditEvent.Source(m.topic(), m.partition(), m.offset())));
        long deadline = System.nanoTime() + timeout.toNanos();
        while (found.size() < wanted.size() && System.nanoTime() < deadline) {
            for (ConsumerRecord<byte[], byte[]> r : audit.poll(Duration.ofMillis(100))) {
                AuditEvent e;
                try {
                    e = AuditEvents.parse(r.value());
                } catch (AuditEvents.MalformedEvent notOurs) {
                    continue;
                }
                if (e instanceof AuditEvent.Verdict v && wanted.contains(v.source())) {
                    found.putIfAbsent(v.source(), v); // publishing is at-least-once: the first copy answers
                }
            }
        }
        return sent.stream().map(m -> new Answer(m, Optional.ofNullable(found.get(new AuditEvent.Source(m.topic(), m.partition(),
                m.offset()))))).toList();
    }

    private KafkaProducer<byte[], byte[]> producer() {
        if (producer == null) {
            Map<String, Object> p = new HashMap<>(producerSettings);
            p.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class.getName());
            p.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class.getName());
            p.put(ProducerConfig.ACKS_CONFIG, "all");
            p.putIfAbsent(ProducerConfig.MAX_BLOCK_MS_CONFIG, (int) sendTimeout.toMillis());
            p.putIfAbsent(ProducerConfig.DELIVERY_TIMEOUT_MS_CONFIG, (int) sendTimeout.toMillis());
            p.putIfAbsent(ProducerConfig.REQUEST_TIMEOUT_MS_CONFIG, (int) Math.max(1000, sendTimeout.toMillis() - 1000));
            p.putIfAbsent(ProducerConfig.CLIENT_ID_CONFIG, "queen-timers-client");
            producer = new KafkaProducer<>(p);
        }
        return producer;
    }

    private static String describe(ProducerRecord<byte[], byte[]> r) {
        return "to " + r.topic() + (r.key() == null ? "" : " keyed '" + new String(r.key(), java.nio.charset.StandardCharsets.UTF_8) + "'");
    }

    @Override
    public void close() {
        try {
            if (producer != null) {
                producer.close(Duration.ofSeconds(5));
            }
        } finally {
            audit.close(Duration.ofSeconds(2));
        }
    }
}
