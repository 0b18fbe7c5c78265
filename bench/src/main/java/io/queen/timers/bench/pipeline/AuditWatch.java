package io.queen.timers.bench.pipeline;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;

/**
 * Reads the audit topic from its beginning for the whole run, as any consumer of the audit would, and
 * keeps per phase (the phase is the queue-name prefix before the first '.'): how many {@code scheduled}
 * and {@code fired} events arrived, the broker timestamp of the last of each, and every fired timer's
 * {@code lateMs} (segment created_at − deliver_at, rendered by the relay).
 */
final class AuditWatch implements AutoCloseable {

    static final class Phase {
        final AtomicLong scheduled = new AtomicLong();
        final AtomicLong fired = new AtomicLong();
        volatile long lastScheduledMs;
        volatile long lastFiredMs;
        final List<Long> lateMs = java.util.Collections.synchronizedList(new ArrayList<>());
        /** Each fired event as {broker timestamp, lateMs}: the lateness of the timers fired inside a window (--backlog). */
        final List<long[]> firedAt = java.util.Collections.synchronizedList(new ArrayList<>());
        /** Each scheduled event's broker timestamp: the work a steady window did (SteadyReport). */
        final List<Long> scheduledAt = java.util.Collections.synchronizedList(new ArrayList<>());

        /** The fired events' broker timestamps and lateness, aligned (SteadyReport.Run). */
        long[][] fired() {
            synchronized (firedAt) {
                long[][] out = new long[2][firedAt.size()];
                for (int i = 0; i < firedAt.size(); i++) {
                    out[0][i] = firedAt.get(i)[0];
                    out[1][i] = firedAt.get(i)[1];
                }
                return out;
            }
        }

        /** The lateness of the timers whose fired event arrived within [fromMs, toMs], sorted. */
        List<Long> lateBetween(long fromMs, long toMs) {
            synchronized (firedAt) {
                return firedAt.stream().filter(f -> f[0] >= fromMs && f[0] <= toMs).map(f -> f[1]).sorted().toList();
            }
        }
    }

    private final ObjectMapper json = new ObjectMapper();
    private final Map<String, Phase> phases = new ConcurrentHashMap<>();
    private final KafkaConsumer<byte[], byte[]> consumer;
    private final Thread thread;
    private volatile boolean running = true;
    private volatile RuntimeException failure;

    AuditWatch(String bootstrap, String topic) {
        Properties p = new Properties();
        p.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        p.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
        p.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
        p.put(ConsumerConfig.MAX_POLL_RECORDS_CONFIG, "5000");
        consumer = new KafkaConsumer<>(p, new ByteArrayDeserializer(), new ByteArrayDeserializer());
        List<TopicPartition> parts = consumer.partitionsFor(topic, Duration.ofSeconds(60)).stream()
                .map(i -> new TopicPartition(topic, i.partition())).toList();
        consumer.assign(parts);
        consumer.seekToBeginning(parts);
        thread = new Thread(this::run, "audit-watch");
        thread.setDaemon(true);
        thread.start();
    }

    Phase phase(String name) {
        return phases.computeIfAbsent(name, n -> new Phase());
    }

    private void run() {
        try {
            while (running) {
                for (ConsumerRecord<byte[], byte[]> r : consumer.poll(Duration.ofMillis(200))) {
                    JsonNode e = json.readTree(r.value());
                    String queue = e.path("queue").asText("");
                    int dot = queue.indexOf('.');
                    Phase ph = phase(dot < 0 ? queue : queue.substring(0, dot));
                    switch (e.path("type").asText()) {
                        case "scheduled" -> {
                            ph.scheduledAt.add(r.timestamp());
                            ph.scheduled.incrementAndGet();
                            ph.lastScheduledMs = Math.max(ph.lastScheduledMs, r.timestamp());
                        }
                        case "fired" -> {
                            ph.lateMs.add(e.path("lateMs").asLong());
                            ph.firedAt.add(new long[] {r.timestamp(), e.path("lateMs").asLong()});
                            ph.fired.incrementAndGet();
                            ph.lastFiredMs = Math.max(ph.lastFiredMs, r.timestamp());
                        }
                        default -> { }
                    }
                }
            }
        } catch (Exception e) {
            if (running) {
                failure = new IllegalStateException("reading the audit topic failed", e);
            }
        } finally {
            consumer.close();
        }
    }

    /** Until {@code count} says n events of the phase arrived; throws after the timeout. */
    void await(String what, AtomicLong count, long n, Duration timeout) throws InterruptedException {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (count.get() < n) {
            if (failure != null) {
                throw failure;
            }
            if (System.nanoTime() > deadline) {
                throw new IllegalStateException("only " + count.get() + " of " + n + " " + what + " events within " + timeout);
            }
            Thread.sleep(20);
        }
    }

    @Override
    public void close() throws InterruptedException {
        running = false;
        consumer.wakeup();
        thread.join(10_000);
    }
}
