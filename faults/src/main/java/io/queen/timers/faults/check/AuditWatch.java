package io.queen.timers.faults.check;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.function.LongSupplier;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;

/**
 * The harness's own clock on the audit topics: a consumer (no group) that reads them from the beginning during the whole
 * run and notes, for each eventId, when it first read it. The lateness bound ({@link Lateness}) is judged on these times,
 * not on a time the system stamped. {@link #stop} reads on to the topics' ends as they are then (call it once the run
 * settled: everything published), so no event is left unread.
 *
 * <p>PRICE: one more consumer and a JSON scan of every audit event in the harness's JVM while it produces; an event
 * the harness's consumer is slow to read (a broker fault, the JVM busy) is observed that much later, so the bound
 * counts the harness's delay against the product (never in its favour).
 */
public final class AuditWatch implements AutoCloseable {

    private static final JsonFactory JSON = new JsonFactory();

    private final KafkaConsumer<byte[], byte[]> consumer;
    private final List<TopicPartition> parts;
    private final LongSupplier clock;
    private final Map<String, Long> firstRead = new java.util.concurrent.ConcurrentHashMap<>();
    private final Thread thread;
    private volatile boolean stopping;
    private volatile Throwable error;
    private volatile boolean drained;

    private AuditWatch(String bootstrap, List<String> topics, LongSupplier clock) {
        Properties p = new Properties();
        p.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        p.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
        p.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
        p.put(ConsumerConfig.MAX_PARTITION_FETCH_BYTES_CONFIG, Integer.toString(8 << 20));
        p.put(ConsumerConfig.FETCH_MAX_WAIT_MS_CONFIG, "100");
        this.consumer = new KafkaConsumer<>(p, new ByteArrayDeserializer(), new ByteArrayDeserializer());
        this.parts = topics.stream().flatMap(t -> consumer.partitionsFor(t, Duration.ofSeconds(60)).stream()
                .map(i -> new TopicPartition(t, i.partition()))).toList();
        consumer.assign(parts);
        consumer.seekToBeginning(parts);
        this.clock = clock;
        this.thread = new Thread(this::run, "audit-watch");
        thread.setDaemon(true);
    }

    /** Starts reading {@code topics} (which must exist) from their beginning. */
    public static AuditWatch start(String bootstrap, List<String> topics) {
        return start(bootstrap, topics, System::currentTimeMillis);
    }

    static AuditWatch start(String bootstrap, List<String> topics, LongSupplier clock) {
        AuditWatch w = new AuditWatch(bootstrap, topics, clock);
        w.thread.start();
        return w;
    }

    private void run() {
        try {
            Map<TopicPartition, Long> end = null;
            while (true) {
                if (stopping && end == null) {
                    end = consumer.endOffsets(parts, Duration.ofSeconds(60));
                }
                if (end != null) {
                    Map<TopicPartition, Long> e = end;
                    if (parts.stream().allMatch(tp -> consumer.position(tp, Duration.ofSeconds(60)) >= e.get(tp))) {
                        drained = true;
                        return;
                    }
                }
                var records = consumer.poll(Duration.ofMillis(200));
                long now = clock.getAsLong();
                for (ConsumerRecord<byte[], byte[]> r : records) {
                    String id = eventId(r.value());
                    if (id != null) {
                        firstRead.putIfAbsent(id, now);
                    }
                }
            }
        } catch (Throwable t) {
            error = t;
        }
    }

    /** The event's eventId, scanned without building a tree (the relay writes it first; any position is read). */
    static String eventId(byte[] value) {
        if (value == null) {
            return null;
        }
        try (JsonParser p = JSON.createParser(value)) {
            if (p.nextToken() != JsonToken.START_OBJECT) {
                return null;
            }
            while (p.nextToken() == JsonToken.FIELD_NAME) {
                String name = p.currentName();
                JsonToken v = p.nextToken();
                if ("eventId".equals(name) && v == JsonToken.VALUE_STRING) {
                    return p.getText();
                }
                p.skipChildren();
            }
            return null;
        } catch (Exception unreadable) {
            return null; // the checker reports an unreadable event; it has no time to judge
        }
    }

    /** Whether the watch has read {@code eventId} yet. */
    boolean hasRead(String eventId) {
        return firstRead.containsKey(eventId);
    }

    /**
     * Reads on to the topics' current ends, stops, and returns when each event was first read (epoch ms, by eventId).
     *
     * @throws IllegalStateException if the consumer failed or did not reach the ends within {@code timeout}: the run's
     *                               times would be incomplete
     */
    public Map<String, Long> stop(Duration timeout) throws InterruptedException {
        stopping = true;
        thread.join(timeout.toMillis());
        if (thread.isAlive() || !drained) {
            throw new IllegalStateException("the audit watch did not read to the topics' ends within " + timeout, error);
        }
        consumer.close(Duration.ofSeconds(5));
        return firstRead;
    }

    @Override
    public void close() throws InterruptedException {
        stopping = true;
        thread.join(5_000);
        if (!thread.isAlive()) {
            try {
                consumer.close(Duration.ofSeconds(5));
            } catch (IllegalStateException alreadyClosed) {
                // stop() closed it
            }
        }
    }
}
