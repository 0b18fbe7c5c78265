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
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.WakeupException;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;

/**
 * The stack's audit topic as a consumer reads it: every event since the stack started, parsed by the client
 * ({@link AuditEvents#parse}), one copy per event id (publishing is at-least-once). A thread of its own reads
 * the topic from its beginning, so an event is never missed however late the test asks for it.
 *
 * <p>Thread-safe. PRICE: holds every event of the stack in memory (a test writes hundreds, not millions).
 */
public final class AuditLog implements AutoCloseable {

    private final KafkaConsumer<byte[], byte[]> consumer;
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
        List<TopicPartition> parts = consumer.partitionsFor(topic, Duration.ofSeconds(30)).stream()
                .map(i -> new TopicPartition(topic, i.partition())).toList();
        consumer.assign(parts);
        consumer.seekToBeginning(parts);
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
            }
        } catch (WakeupException stopping) {
            // close()
        } catch (RuntimeException e) {
            failure = e;
        } finally {
            consumer.close(Duration.ofSeconds(2));
        }
    }

    /** Every event read so far, in the topic's order. */
    public synchronized List<AuditEvent> events() {
        return List.copyOf(events);
    }

    /** The events read so far about timer {@code timerKey} of {@code queue} (verdicts, fires, retries, dead letters). */
    public List<AuditEvent> eventsOf(String queue, String timerKey) {
        return events().stream().filter(about(queue, timerKey)).toList();
    }

    /** The events read so far that carry {@code txn} (a schedule's, a fire's or a dead letter's). */
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
                        + "; its events: " + eventsOf(queue, timerKey));
        return found;
    }

    /** The first event of {@code type} carrying {@code txn}, waiting for it up to {@code timeout}. */
    public <T extends AuditEvent> T awaitTxn(String txn, EventType type, Duration timeout) {
        @SuppressWarnings("unchecked")
        T found = (T) await(e -> e.type() == type && txn.equals(Fields.txn(e)), timeout,
                () -> "no " + type.wireName() + " event with txn " + txn + " within " + timeout + "; its events: " + eventsOfTxn(txn));
        return found;
    }

    /** The first event {@code wanted} accepts, waiting up to {@code timeout}; an {@link AssertionError} when none comes. */
    public AuditEvent await(Predicate<AuditEvent> wanted, Duration timeout) {
        return await(wanted, timeout, () -> "no such audit event within " + timeout + " (" + events().size() + " read)");
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
