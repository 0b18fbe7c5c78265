package io.queen.timers.test;

import io.queen.timers.client.audit.AuditEvent;
import io.queen.timers.client.audit.AuditEvents;
import io.queen.timers.client.audit.EventType;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.UUID;
import java.util.function.Predicate;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.WakeupException;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;

/**
 * The stack's audit topic as a consumer reads it: every event since the stack started, parsed by the client
 * ({@link AuditEvents#parse}), one copy per event id (publishing is at-least-once). A thread of its own reads
 * the topic from its beginning, so an event is never missed however late the test asks for it; a list it returns
 * holds every event on the topic when it was asked for (it waits for the reader to reach the topic's end).
 *
 * <p>Thread-safe. PRICE: holds every event of the stack in memory (a test writes hundreds, not millions).
 */
public final class AuditLog implements AutoCloseable {

    private final KafkaConsumer<byte[], byte[]> consumer;
    private final Admin admin;
    private final List<TopicPartition> parts;
    /** The reader's position per partition after its last poll: what {@link #events()} waits for. */
    private final Map<TopicPartition, Long> positions = new ConcurrentHashMap<>();
    private final Thread thread;
    private final List<AuditEvent> events = new ArrayList<>();
    private final Set<UUID> seen = new HashSet<>();
    private volatile boolean running = true;
    private volatile RuntimeException failure;

    AuditLog(Map<String, Object> kafka, String topic) {
        Map<String, Object> c = new HashMap<>(kafka);
        c.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
        c.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
        c.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false);
        c.remove(ConsumerConfig.GROUP_ID_CONFIG); // assigned, never subscribed
        c.put(ConsumerConfig.CLIENT_ID_CONFIG, "queen-timers-test-audit");
        consumer = new KafkaConsumer<>(c);
        parts = consumer.partitionsFor(topic, Duration.ofSeconds(30)).stream()
                .map(i -> new TopicPartition(topic, i.partition())).toList();
        consumer.assign(parts);
        consumer.seekToBeginning(parts);
        Map<String, Object> a = new HashMap<>(kafka);
        a.remove(ConsumerConfig.GROUP_ID_CONFIG);
        admin = Admin.create(a);
        thread = new Thread(this::loop, "queen-timers-test-audit");
        thread.setDaemon(true);
        thread.start();
    }

    private void loop() {
        try {
            while (running) {
                for (ConsumerRecord<byte[], byte[]> r : consumer.poll(Duration.ofMillis(100))) {
                    AuditEvent e;
                    try {
                        e = AuditEvents.parse(r.value());
                    } catch (AuditEvents.MalformedEvent notAnEvent) {
                        continue;
                    }
                    synchronized (this) {
                        if (seen.add(e.meta().eventId())) {
                            events.add(e);
                            notifyAll();
                        }
                    }
                }
                for (TopicPartition tp : parts) {
                    positions.put(tp, consumer.position(tp));
                }
            }
        } catch (WakeupException stopping) {
            // close()
        } catch (RuntimeException e) {
            failure = e;
        } finally {
            consumer.close(Duration.ofSeconds(2));
            admin.close(Duration.ofSeconds(2));
        }
    }

    /**
     * Every event on the topic as of this call, in the topic's order: waits (up to 10 s) until the reader has read
     * up to the topic's end as it is now, so a verdict a {@code CommandSender} has already seen is in the list.
     */
    public List<AuditEvent> events() {
        catchUp(Duration.ofSeconds(10));
        synchronized (this) {
            return List.copyOf(events);
        }
    }

    /** What the reader has read, without waiting (the await messages: they hold this object's monitor). */
    private synchronized List<AuditEvent> readSoFar() {
        return List.copyOf(events);
    }

    private void catchUp(Duration timeout) {
        Map<TopicPartition, Long> ends = new HashMap<>();
        try {
            Map<TopicPartition, OffsetSpec> latest = new HashMap<>();
            parts.forEach(tp -> latest.put(tp, OffsetSpec.latest()));
            admin.listOffsets(latest).all().get(timeout.toMillis(), TimeUnit.MILLISECONDS)
                    .forEach((tp, info) -> ends.put(tp, info.offset()));
        } catch (ExecutionException | TimeoutException e) {
            throw new IllegalStateException("cannot read the audit topic's end: " + e, e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted", e);
        }
        long deadline = System.nanoTime() + timeout.toNanos();
        while (ends.entrySet().stream().anyMatch(e -> positions.getOrDefault(e.getKey(), 0L) < e.getValue())) {
            if (failure != null) {
                throw new IllegalStateException("the audit topic reader failed: " + failure, failure);
            }
            if (System.nanoTime() > deadline) {
                throw new AssertionError("the audit reader did not reach the topic's end " + ends + " within " + timeout
                        + " (at " + positions + ")");
            }
            try {
                Thread.sleep(10);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException("interrupted", e);
            }
        }
    }

    /** The events about timer {@code timerKey} of {@code queue} (verdicts, fires, retries, dead letters), as {@link #events()}. */
    public List<AuditEvent> eventsOf(String queue, String timerKey) {
        return events().stream().filter(about(queue, timerKey)).toList();
    }

    /** The events that carry {@code txn}, as {@link #events()} (a schedule's, a fire's or a dead letter's). */
    public List<AuditEvent> eventsOfTxn(String txn) {
        return events().stream().filter(e -> txn.equals(Fields.txn(e))).toList();
    }

    /**
     * The first event of {@code type} about timer {@code timerKey} of {@code queue}, waiting for it up to {@code timeout};
     * an {@link AssertionError} naming the events seen for that timer when none comes.
     */
    public <T extends AuditEvent> T await(String queue, String timerKey, EventType type, Duration timeout) {
        @SuppressWarnings("unchecked")
        T found = (T) await(about(queue, timerKey).and(e -> e.type() == type), timeout,
                () -> "no " + type.wireName() + " event for " + queue + "/" + timerKey + " within " + timeout
                        + "; its events: " + readSoFar().stream().filter(about(queue, timerKey)).toList());
        return found;
    }

    /** The first event of {@code type} carrying {@code txn}, waiting for it up to {@code timeout}. */
    public <T extends AuditEvent> T awaitTxn(String txn, EventType type, Duration timeout) {
        @SuppressWarnings("unchecked")
        T found = (T) await(e -> e.type() == type && txn.equals(Fields.txn(e)), timeout,
                () -> "no " + type.wireName() + " event with txn " + txn + " within " + timeout + "; its events: " + readSoFar().stream().filter(e -> txn.equals(Fields.txn(e))).toList());
        return found;
    }

    /** The first event {@code wanted} accepts, waiting up to {@code timeout}; an {@link AssertionError} when none comes. */
    public AuditEvent await(Predicate<AuditEvent> wanted, Duration timeout) {
        return await(wanted, timeout, () -> "no such audit event within " + timeout + " (" + readSoFar().size() + " read)");
    }

    private synchronized AuditEvent await(Predicate<AuditEvent> wanted, Duration timeout, java.util.function.Supplier<String> why) {
        long deadline = System.nanoTime() + timeout.toNanos();
        int from = 0;
        while (true) {
            for (int i = from; i < events.size(); i++) {
                if (wanted.test(events.get(i))) {
                    return events.get(i);
                }
            }
            from = events.size();
            if (failure != null) {
                throw new IllegalStateException("the audit topic reader failed: " + failure, failure);
            }
            long left = deadline - System.nanoTime();
            if (left <= 0) {
                throw new AssertionError(why.get());
            }
            try {
                wait(Math.max(1, Math.min(200, left / 1_000_000)));
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException("interrupted while waiting for an audit event", e);
            }
        }
    }

    private static Predicate<AuditEvent> about(String queue, String timerKey) {
        return e -> queue.equals(Fields.queue(e)) && Objects.equals(timerKey, Fields.timerKey(e));
    }

    @Override
    public void close() {
        running = false;
        consumer.wakeup();
        try {
            thread.join(5_000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /** The timer an event names, whatever its type (null where the type names none). */
    static final class Fields {
        private Fields() {}

        static String queue(AuditEvent e) {
            if (e instanceof AuditEvent.TimerVerdict v) {
                return v.queue();
            } else if (e instanceof AuditEvent.Fired f) {
                return f.queue();
            } else if (e instanceof AuditEvent.Retrying r) {
                return r.queue();
            } else if (e instanceof AuditEvent.DeadLettered d) {
                return d.queue();
            } else if (e instanceof AuditEvent.Skipped s) {
                return s.queue();
            } else if (e instanceof AuditEvent.DeadLetterRemoved d) {
                return d.queue();
            }
            return null;
        }

        static String timerKey(AuditEvent e) {
            if (e instanceof AuditEvent.TimerVerdict v) {
                return v.timerKey();
            } else if (e instanceof AuditEvent.Fired f) {
                return f.timerKey();
            } else if (e instanceof AuditEvent.Retrying r) {
                return r.timerKey();
            } else if (e instanceof AuditEvent.DeadLettered d) {
                return d.timerKey();
            } else if (e instanceof AuditEvent.Skipped s) {
                return s.timerKey();
            } else if (e instanceof AuditEvent.DeadLetterRemoved d) {
                return d.timerKey();
            }
            return null;
        }

        static String txn(AuditEvent e) {
            if (e instanceof AuditEvent.Scheduled s) {
                return s.txn();
            } else if (e instanceof AuditEvent.Rescheduled r) {
                return r.txn();
            } else if (e instanceof AuditEvent.Fired f) {
                return f.txn();
            } else if (e instanceof AuditEvent.Retrying r) {
                return r.txn();
            } else if (e instanceof AuditEvent.DeadLettered d) {
                return d.txn();
            } else if (e instanceof AuditEvent.Skipped s) {
                return s.txn();
            } else if (e instanceof AuditEvent.DeadLetterRemoved d) {
                return d.txn();
            }
            return null;
        }
    }
}
