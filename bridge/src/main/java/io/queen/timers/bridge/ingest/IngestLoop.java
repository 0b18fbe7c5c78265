package io.queen.timers.bridge.ingest;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import io.queen.timers.bridge.TopicRoutes;
import io.queen.timers.bridge.apply.BatchApplier;
import io.queen.timers.bridge.apply.Decision;
import io.queen.timers.bridge.apply.Incoming;
import io.queen.timers.bridge.apply.OffsetAdvance;
import io.queen.timers.bridge.apply.Outcome;
import io.queen.timers.bridge.apply.Source;
import io.queen.timers.bridge.auth.AuthResult;
import io.queen.timers.bridge.wire.Command;
import io.queen.timers.bridge.wire.CommandParser;
import io.queen.timers.bridge.wire.Parsed;
import io.queen.timers.bridge.wire.Rejection;
import io.queen.timers.core.db.ErrorClass;
import io.queen.timers.core.db.SqlStates;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.apache.kafka.clients.consumer.Consumer;
import org.apache.kafka.clients.consumer.ConsumerRebalanceListener;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.WakeupException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The bridge's consumer loop. Kafka's committed offsets play no part: positions come from
 * {@code queen.bridge_offsets}, which each batch advances in the same transaction as its timers.
 *
 * <p>One cycle: (re)seek if needed → poll → parse (and, on a jwt topic, authenticate) every record → apply the batch in one
 * transaction. When the apply fails (database unreachable, or any other error) the loop never skips:
 * it pauses every partition, backs off (100 ms doubling to {@code db.retry.backoff.max}), reads the
 * stored offsets again, seeks to them and resumes. When the apply is fenced (the stored offset is not
 * the one this consumer sought to: a zombie, or a commit whose acknowledgement was lost) it does
 * the same without waiting. Not thread-safe: runs on one thread; {@link #close()} may be called from any.
 */
public final class IngestLoop implements Runnable, AutoCloseable {

    private static final Logger LOG = LoggerFactory.getLogger(IngestLoop.class);
    private static final Duration MIN_BACKOFF = Duration.ofMillis(100);

    private final Consumer<byte[], byte[]> consumer;
    private final List<String> topics;
    private final TopicRoutes routes;
    private final CommandParser parser;
    private final BatchApplier applier;
    private final OffsetStore offsets;
    private final Duration pollTimeout;
    private final Duration maxBackoff;
    private final MeterRegistry registry;
    private final Timer applyTimer;
    private final Counter retries;
    private final AtomicLong lag = new AtomicLong();
    private final AtomicBoolean running = new AtomicBoolean(true);
    private final AtomicReference<String> problem = new AtomicReference<>("starting");
    /** The stored next offset each assigned partition was sought to (null value: none stored yet). */
    private final Map<TopicPartition, Long> expected = new HashMap<>();
    private boolean resync = true;
    private long retryAtNanos = System.nanoTime();
    private Duration backoff = MIN_BACKOFF;

    public IngestLoop(Consumer<byte[], byte[]> consumer, List<String> topics, TopicRoutes routes, CommandParser parser,
                      BatchApplier applier, OffsetStore offsets, Duration pollTimeout, Duration maxBackoff, MeterRegistry registry) {
        this.consumer = consumer;
        this.topics = List.copyOf(topics);
        this.routes = routes;
        this.parser = parser;
        this.applier = applier;
        this.offsets = offsets;
        this.pollTimeout = pollTimeout;
        this.maxBackoff = maxBackoff;
        this.registry = registry;
        this.applyTimer = Timer.builder("queen.timers.bridge.batch.apply")
                .description("One poll batch applied in one transaction (lock, fold, write, commit)").register(registry);
        this.retries = Counter.builder("queen.timers.bridge.batch.retries")
                .description("Batches not committed (database error or fenced) and read again from the stored offsets").register(registry);
        Gauge.builder("queen.timers.bridge.ingest.lag", lag, AtomicLong::get)
                .description("Records in the assigned command partitions not yet applied").baseUnit("records").register(registry);
    }

    @Override
    public void run() {
        consumer.subscribe(topics, new Rebalance());
        try {
            while (running.get()) {
                if (resync && System.nanoTime() - retryAtNanos >= 0) {
                    resync();
                }
                ConsumerRecords<byte[], byte[]> records = consumer.poll(pollTimeout);
                measureLag();
                if (!records.isEmpty()) {
                    apply(records);
                }
            }
        } catch (WakeupException e) {
            if (running.get()) {
                problem.set("stopped: " + e);
                throw e;
            }
        } catch (RuntimeException e) {
            problem.set("stopped: " + e); // a Kafka fatal error (authorization, fencing by the group): the process must restart
            throw e;
        } finally {
            consumer.close(); // leaves the group: the partitions move on at once
        }
    }

    /** Parse every record, apply the batch, then act on the outcome. */
    private void apply(ConsumerRecords<byte[], byte[]> records) {
        List<Incoming> batch = new ArrayList<>(records.count());
        List<OffsetAdvance> advances = new ArrayList<>();
        for (TopicPartition tp : records.partitions()) {
            List<ConsumerRecord<byte[], byte[]>> part = records.records(tp);
            TopicRoutes.Route route = routes.route(tp.topic());
            for (ConsumerRecord<byte[], byte[]> r : part) {
                batch.add(incoming(r, route));
            }
            advances.add(new OffsetAdvance(tp.topic(), tp.partition(), expected.get(tp), part.get(part.size() - 1).offset() + 1));
        }
        try {
            Outcome out = applyTimer.recordCallable(() -> applier.apply(batch, advances));
            if (out instanceof Outcome.Applied applied) {
                advances.forEach(a -> expected.put(new TopicPartition(a.topic(), a.partition()), a.next()));
                applied.decisions().forEach(this::count);
                backoff = MIN_BACKOFF;
                problem.set(null);
            } else {
                LOG.warn("batch of {} records from {} fenced: another consumer advanced the stored offsets; seeking to them",
                        batch.size(), records.partitions());
                retries.increment();
                pauseAndResync(Duration.ZERO);
            }
        } catch (Exception e) {
            ErrorClass c = SqlStates.classify(e);
            String msg = "cannot apply batch of " + batch.size() + " records from " + describe(advances) + " (" + c + "): " + e
                    + "; nothing skipped, retrying in " + backoff.toMillis() + " ms";
            if (c == ErrorClass.TRANSIENT) {
                LOG.warn(msg);
            } else {
                LOG.error(msg, e);
            }
            problem.set("database: " + e.getMessage());
            retries.increment();
            pauseAndResync(backoff);
            backoff = backoff.multipliedBy(2).compareTo(maxBackoff) > 0 ? maxBackoff : backoff.multipliedBy(2);
        }
    }

    /**
     * One record parsed, and on a topic with {@code auth=jwt} authenticated: a refused token turns the
     * record into an {@code unauthenticated} or {@code forbidden} rejection whatever its content, and a
     * valid one gives the producer sub.
     */
    private Incoming incoming(ConsumerRecord<byte[], byte[]> r, TopicRoutes.Route route) {
        Source source = new Source(r.topic(), r.partition(), r.offset());
        Parsed parsed = parser.parse(r.key(), r.value(), r.headers(), r.timestamp());
        String sub = route.producerSub();
        if (route.auth() != null) {
            AuthResult auth = route.auth().verify(r.headers(), r.timestamp(), route.tenant());
            if (auth instanceof AuthResult.Verified v) {
                sub = v.sub();
            } else {
                AuthResult.Refused refused = (AuthResult.Refused) auth;
                String key = parsed instanceof Command c ? c.kafkaKey() : ((Rejection) parsed).kafkaKey();
                parsed = new Rejection(refused.reason(), refused.detail(), key);
            }
        }
        return new Incoming(source, route.tenant(), sub, parsed);
    }

    /** Seek every assigned partition to its stored offset (the beginning when none is stored) and resume. */
    private void resync() {
        Collection<TopicPartition> assigned = consumer.assignment();
        try {
            Map<TopicPartition, Long> stored = offsets.load(topics);
            expected.clear();
            for (TopicPartition tp : assigned) {
                Long s = stored.get(tp);
                if (s != null) {
                    consumer.seek(tp, s);
                } else {
                    consumer.seekToBeginning(List.of(tp));
                }
                expected.put(tp, s);
            }
            consumer.resume(assigned);
            if (!assigned.isEmpty()) {
                LOG.info("consuming {} from the stored offsets {} (start = none stored yet)", assigned, describe(assigned));
            }
            resync = false;
            problem.set(null);
        } catch (Exception e) {
            LOG.warn("cannot read the stored offsets ({}); partitions stay paused, retrying in {} ms", e, backoff.toMillis());
            problem.set("database: " + e.getMessage());
            pauseAndResync(backoff);
            backoff = backoff.multipliedBy(2).compareTo(maxBackoff) > 0 ? maxBackoff : backoff.multipliedBy(2);
        }
    }

    private void pauseAndResync(Duration after) {
        consumer.pause(consumer.assignment());
        resync = true;
        retryAtNanos = System.nanoTime() + after.toNanos();
    }

    private void count(Decision d) {
        Counter.builder("queen.timers.commands").description("Commands consumed, by verdict (and reason when rejected)")
                .tag("verdict", d.verdict().wireName()).tag("reason", d.reason() == null ? "none" : d.reason().wireName())
                .register(registry).increment();
    }

    private void measureLag() {
        long sum = 0;
        for (TopicPartition tp : consumer.assignment()) {
            sum += consumer.currentLag(tp).orElse(0);
        }
        lag.set(sum);
    }

    private String describe(Collection<TopicPartition> assigned) {
        StringBuilder b = new StringBuilder();
        for (TopicPartition tp : assigned) {
            Long e = expected.get(tp);
            b.append(b.length() == 0 ? "" : ", ").append(tp).append('@').append(e == null ? "start" : e);
        }
        return b.toString();
    }

    private static String describe(List<OffsetAdvance> advances) {
        StringBuilder b = new StringBuilder();
        for (OffsetAdvance a : advances) {
            b.append(b.length() == 0 ? "" : ", ").append(a.topic()).append('/').append(a.partition())
                    .append("@").append(a.expected() == null ? "start" : a.expected()).append("..").append(a.next() - 1);
        }
        return b.toString();
    }

    /** Empty when the loop is applying; otherwise why not (for /health/ready). Any thread. */
    public Optional<String> problem() {
        return Optional.ofNullable(problem.get());
    }

    /** Finish the batch in hand, commit it, leave the group. Any thread; the loop's thread ends. */
    @Override
    public void close() {
        running.set(false);
        consumer.wakeup();
    }

    /** Newly assigned partitions wait, paused, until the loop has sought them to their stored offsets. */
    private final class Rebalance implements ConsumerRebalanceListener {
        @Override
        public void onPartitionsRevoked(Collection<TopicPartition> partitions) {
            expected.keySet().removeAll(partitions);
        }

        @Override
        public void onPartitionsLost(Collection<TopicPartition> partitions) {
            expected.keySet().removeAll(partitions);
        }

        @Override
        public void onPartitionsAssigned(Collection<TopicPartition> partitions) {
            if (!partitions.isEmpty()) {
                consumer.pause(partitions);
                resync = true;
            }
        }
    }
}
