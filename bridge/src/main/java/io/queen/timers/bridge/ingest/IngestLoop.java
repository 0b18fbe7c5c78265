package io.queen.timers.bridge.ingest;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.binder.kafka.KafkaClientMetrics;
import io.micrometer.core.instrument.Timer;
import io.queen.timers.bridge.TopicRoutes;
import io.queen.timers.bridge.apply.BatchApplier;
import io.queen.timers.bridge.apply.Decision;
import io.queen.timers.bridge.apply.Incoming;
import io.queen.timers.bridge.apply.OffsetAdvance;
import io.queen.timers.bridge.apply.Outcome;
import io.queen.timers.bridge.apply.Source;
import io.queen.timers.bridge.auth.AuthResult;
import io.queen.timers.bridge.auth.TopicTimestamps;
import io.queen.timers.bridge.wire.Command;
import io.queen.timers.bridge.wire.CommandParser;
import io.queen.timers.bridge.wire.Parsed;
import io.queen.timers.client.command.RejectReason;
import io.queen.timers.bridge.wire.Rejection;
import io.queen.timers.core.text.Printable;
import io.queen.timers.core.db.ErrorClass;
import io.queen.timers.core.db.SqlStates;
import io.queen.timers.core.health.LoopProgress;
import io.queen.timers.core.logging.TimerMdc;
import io.queen.timers.core.retry.Backoff;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Supplier;
import org.apache.kafka.clients.consumer.Consumer;
import org.apache.kafka.clients.consumer.ConsumerRebalanceListener;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.NoOffsetForPartitionException;
import org.apache.kafka.clients.consumer.OffsetOutOfRangeException;
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
 * it pauses every partition, backs off ({@link Backoff}: jittered under a ceiling of 100 ms doubling to
 * {@code db.retry.backoff.max}), reads the stored offsets again, seeks to them and resumes. When the apply is fenced (the stored offset is not
 * the one this consumer sought to: a zombie, or a commit whose acknowledgement was lost) it does
 * the same without waiting. A partition whose stored offset is out of range stops (never auto-reset):
 * {@link #stop}; one where the group has no stored offset gets its first ({@link #firstOffsets}), or waits paused
 * when it holds records and bridge.start.position is not set. Not thread-safe: runs on one thread; {@link #close()} may be called from any.
 */
public final class IngestLoop implements Runnable, AutoCloseable {

    private static final Logger LOG = LoggerFactory.getLogger(IngestLoop.class);
    private static final Duration MIN_BACKOFF = Duration.ofMillis(100);
    /** How often a stopped partition's stored offset is read again. */
    private static final Duration STOPPED_CHECK = Duration.ofSeconds(2);
    /**
     * How often the jwt topics' timestamp settings are read again while all are safe: an operator's change
     * makes no rebalance, so this bounds how long records it let producers date are read unnoticed.
     */
    static final Duration TIMESTAMPS_RECHECK = Duration.ofSeconds(10);
    private static final Duration TIMESTAMPS_MIN_BACKOFF = Duration.ofSeconds(1);

    private final Consumer<byte[], byte[]> consumer;
    private final KafkaClientMetrics consumerMetrics;
    private final List<String> topics;
    private final TopicRoutes routes;
    private final CommandParser parser;
    private final BatchApplier applier;
    private final OffsetStore offsets;
    private final Duration pollTimeout;
    private final long batchMaxBytes;
    private final int batchMaxRecords;
    /** Null when no topic checks tokens. */
    private final TopicTimestamps timestamps;
    /** jwt topics whose timestamp settings are unsafe: their partitions stay paused (never rejected) until safe. */
    private Set<String> held = Set.of();
    private long timestampsCheckAtNanos = System.nanoTime();
    private final Backoff.Waits timestampsWaits;
    private final MeterRegistry registry;
    private final LoopProgress progress;
    private final Timer applyTimer;
    private final Counter retries;
    private final Counter isolations;
    private final Counter unreadableAnswered;
    private final UnreadableRecords unreadable;
    /** What a gathering poll threw when it met a record the client cannot read: handled once the batch in hand is applied. */
    private Throwable unreadableMet;
    private final AtomicLong lag = new AtomicLong();
    private final AtomicBoolean running = new AtomicBoolean(true);
    private final AtomicReference<String> problem = new AtomicReference<>("starting");
    /** The stored next offset each assigned partition was sought to (null value: none stored yet). */
    private final Map<TopicPartition, Long> expected = new HashMap<>();
    /** Partitions stopped on an out-of-range stored offset, and that offset. Read by {@link #stoppedPartitions()} from any thread. */
    private final Map<TopicPartition, Long> stopped = new ConcurrentHashMap<>();
    /**
     * Partitions with no stored offset that hold records, waiting (paused) because bridge.start.position is not set,
     * and the log range they hold. Read by {@link #stoppedPartitions()} from any thread.
     */
    private final Map<TopicPartition, String> unstarted = new ConcurrentHashMap<>();
    /** bridge.start.position: earliest, latest, or null (unset). */
    private final String startPosition;
    private long stoppedCheckAtNanos = System.nanoTime();
    private boolean resync = true;
    private long retryAtNanos = System.nanoTime();
    private final Backoff.Waits waits;

    /**
     * @param batchMaxBytes   value bytes a batch gathers from successive polls before it is applied (half of bridge.ingest.max.bytes;
     *                        the consumer's max.poll.records bounds the other half)
     * @param batchMaxRecords records a batch gathers at most (bridge.batch.max.records)
     * @param timestamps      the jwt topics' timestamp settings, read again on every assignment and periodically; null when
     *                        no topic checks tokens
     * @param startPosition   bridge.start.position ({@code earliest}, {@code latest}) or null: where a partition with no
     *                        stored offset starts when it holds records; null keeps it paused
     * @param probes          makes a consumer of the same settings without a group and with max.poll.records 1, which reads
     *                        past a record the client cannot decode ({@link UnreadableRecords})
     */
    public IngestLoop(Consumer<byte[], byte[]> consumer, Supplier<Consumer<byte[], byte[]>> probes, List<String> topics,
                      TopicRoutes routes, CommandParser parser,
                      BatchApplier applier, OffsetStore offsets, Duration pollTimeout, long batchMaxBytes, int batchMaxRecords,
                      Duration maxBackoff, TopicTimestamps timestamps, String startPosition, MeterRegistry registry,
                      LoopProgress progress) {
        this.startPosition = startPosition;
        this.timestamps = timestamps;
        this.batchMaxBytes = batchMaxBytes;
        this.batchMaxRecords = batchMaxRecords;
        this.consumer = consumer;
        this.topics = List.copyOf(topics);
        this.routes = routes;
        this.parser = parser;
        this.applier = applier;
        this.offsets = offsets;
        this.pollTimeout = pollTimeout;
        this.waits = new Backoff(MIN_BACKOFF, maxBackoff).waits();
        this.timestampsWaits = new Backoff(TIMESTAMPS_MIN_BACKOFF, TIMESTAMPS_RECHECK).waits();
        this.registry = registry;
        this.progress = progress;
        this.applyTimer = Timer.builder("queen.timers.bridge.batch.apply")
                .description("One poll batch applied in one transaction (lock, fold, write, commit)").register(registry);
        this.retries = Counter.builder("queen.timers.bridge.batch.retries")
                .description("Batches not committed (database error or fenced) and read again from the stored offsets").register(registry);
        this.isolations = Counter.builder("queen.timers.bridge.batch.isolations")
                .description("Batches split in two because one of their records' values made the apply fail").register(registry);
        this.unreadableAnswered = Counter.builder("queen.timers.bridge.records.unreadable")
                .description("Offsets answered rejected/unreadable_record: records the Kafka client could not decode (a declared"
                        + " size beyond the heap, a batch that does not parse) and the rest of their compressed batch").register(registry);
        this.unreadable = new UnreadableRecords(probes, pollTimeout);
        Gauge.builder("queen.timers.bridge.partitions.stopped", this, l -> l.stopped.size() + l.unstarted.size())
                .description("Command partitions stopped because their stored offset is out of range (an operator sets it),"
                        + " or because the group has none there and bridge.start.position is not set").register(registry);
        // the consumer's own meters (kafka_consumer_*: fetch rate, records lag, coordinator); closed with it
        this.consumerMetrics = new KafkaClientMetrics(consumer);
        consumerMetrics.bindTo(registry);
        Gauge.builder("queen.timers.bridge.ingest.lag", lag, AtomicLong::get)
                .description("Records in the assigned command partitions not yet applied").baseUnit("records").register(registry);
    }

    @Override
    public void run() {
        consumer.subscribe(topics, new Rebalance());
        try {
            while (running.get()) {
                progress.begin();
                // a key file broken while no record comes is still noticed (readiness) within a cycle
                routes.refreshKeys();
                if (timestamps != null && System.nanoTime() - timestampsCheckAtNanos >= 0) {
                    checkTimestamps();
                }
                if (resync && System.nanoTime() - retryAtNanos >= 0) {
                    resync();
                }
                ConsumerRecords<byte[], byte[]> records;
                try {
                    records = consumer.poll(pollTimeout);
                } catch (NoOffsetForPartitionException e) {
                    // newly assigned, not sought yet (auto.offset.reset=none): the resync above seeks them, once the
                    // stored offsets can be read; until then poll throws at once, so wait here instead of spinning
                    idle(pollTimeout);
                    continue;
                } catch (OffsetOutOfRangeException e) {
                    stop(e.offsetOutOfRangePartitions());
                    continue;
                } catch (RuntimeException | OutOfMemoryError e) {
                    if (!UnreadableRecords.isUnreadable(e)) {
                        throw e;
                    }
                    salvage(e);
                    continue;
                }
                if ((!stopped.isEmpty() || !unstarted.isEmpty()) && !resync && System.nanoTime() - stoppedCheckAtNanos >= 0) {
                    // re-reads the stored offsets: a stopped (or unstarted) partition resumes once an operator set its offset
                    resync = true;
                    retryAtNanos = System.nanoTime();
                    stoppedCheckAtNanos = System.nanoTime() + STOPPED_CHECK.toNanos();
                }
                if (!records.isEmpty()) {
                    apply(gather(records));
                    if (unreadableMet != null) {
                        Throwable e = unreadableMet;
                        unreadableMet = null;
                        if (!resync) { // after a failed apply the resync's poll meets the record again
                            salvage(e);
                        }
                    }
                }
                measureLag();
                // a cycle spent paused after a failure (waiting to resync) is not progress; a partition stopped on
                // an out-of-range offset is reported on its own (stoppedPartitions), at once
                String p = problem.get();
                if (p == null) {
                    progress.completed();
                } else {
                    progress.failed(p);
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
            consumerMetrics.close();
            consumer.close(); // leaves the group: the partitions move on at once
        }
    }

    /** The log fields of the one record a line is about (log.format=json): its tenant, queue, key and trace id. */
    private static TimerMdc mdc(Incoming in) {
        if (in.parsed() instanceof Command c) {
            return TimerMdc.of(in.tenant(), c.queue(), c.timerKey(), c.trace() == null ? null : c.trace().traceId());
        }
        return TimerMdc.of(in.tenant(), null, null, null);
    }

    /**
     * The batch of one apply: this poll's records parsed, then more polls that return at once while records are
     * buffered, until {@code batchMaxRecords} or {@code batchMaxBytes} of values. Each poll's values are dropped
     * once parsed, so the bridge holds one poll's values (max.poll.records of the longest valid value) plus the
     * batch's parsed commands (at most {@code batchMaxBytes} of values): bridge.ingest.max.bytes in all, whatever
     * the producer's compression. Per partition the records stay in offset order; a rebalance between two polls is
     * caught by the offsets' check-and-set (the apply is fenced and re-read).
     */
    private List<Incoming> gather(ConsumerRecords<byte[], byte[]> first) {
        List<Incoming> batch = new ArrayList<>(Math.min(batchMaxRecords, first.count() * 4));
        long bytes = parseInto(first, batch);
        while (batch.size() < batchMaxRecords && bytes < batchMaxBytes && running.get()) {
            ConsumerRecords<byte[], byte[]> more;
            try {
                more = consumer.poll(Duration.ZERO);
            } catch (NoOffsetForPartitionException | OffsetOutOfRangeException e) {
                break; // the next cycle's poll meets it again and handles it
            } catch (RuntimeException | OutOfMemoryError e) {
                if (!UnreadableRecords.isUnreadable(e)) {
                    throw e;
                }
                // the batch in hand is whole (its records were handed over); the record that failed waits for salvage()
                unreadableMet = e;
                break;
            }
            if (more.isEmpty()) {
                break;
            }
            bytes += parseInto(more, batch);
        }
        return batch;
    }

    /** Parses {@code records} into {@code batch}; returns the bytes of their keys and values. */
    private long parseInto(ConsumerRecords<byte[], byte[]> records, List<Incoming> batch) {
        long bytes = 0;
        for (TopicPartition tp : records.partitions()) {
            TopicRoutes.Route route = routes.route(tp.topic());
            for (ConsumerRecord<byte[], byte[]> r : records.records(tp)) {
                batch.add(incoming(r, route));
                bytes += (r.key() == null ? 0 : r.key().length) + (r.value() == null ? 0 : r.value().length);
            }
        }
        return bytes;
    }

    /** Apply the batch, then act on the outcome. */
    private void apply(List<Incoming> batch) {
        if (commit(batch)) {
            waits.reset();
            problem.set(null);
        }
    }

    /**
     * A poll met a record the Kafka client cannot decode ({@link UnreadableRecords}): the consumer would meet it again at every
     * poll. Each partition is read from its stored offset one record per poll by a probe consumer, for at most
     * bridge.batch.max.records offsets: what it reads is applied as usual, in order; an unreadable run is answered
     * {@code rejected}/{@code unreadable_record}, one verdict per offset, and the stored offset moves past it. Then every
     * partition resyncs to its stored offset. A database failure on the way stops the salvage where it is (the apply paused
     * and resyncs): the next poll meets the record again and salvage goes on from the stored offsets.
     */
    private void salvage(Throwable cause) {
        LOG.error("a poll met a record the Kafka client cannot read ({}); reading every partition one record per poll from"
                + " its stored offset, to answer it", Printable.line(String.valueOf(cause)));
        consumer.pause(consumer.assignment());
        try {
            for (TopicPartition tp : List.copyOf(consumer.assignment())) {
                Long from = expected.get(tp);
                if (from == null || stopped.containsKey(tp) || unstarted.containsKey(tp) || held.contains(tp.topic())) {
                    continue; // never polled: not where the record was met
                }
                if (!salvage(tp, from) || !running.get()) {
                    return;
                }
            }
        } catch (RuntimeException e) {
            // the broker did not answer the probe (or refused it): nothing was skipped; the next poll meets the record again
            Duration wait = waits.next();
            LOG.warn("reading past an unreadable record stopped: {}; retrying in {} ms", Printable.line(String.valueOf(e)),
                    wait.toMillis());
            problem.set("kafka: " + Printable.line(String.valueOf(e.getMessage())));
            pauseAndResync(wait);
            return;
        }
        pauseAndResync(Duration.ZERO);
    }

    /** One partition of {@link #salvage(Throwable)}; false when an apply failed (it paused and resyncs). */
    private boolean salvage(TopicPartition tp, long from) {
        TopicRoutes.Route route = routes.route(tp.topic());
        try (UnreadableRecords.Scan scan = unreadable.scan(tp)) {
            long end = scan.end();
            long until = Math.min(end, from + batchMaxRecords);
            List<Incoming> batch = new ArrayList<>();
            long bytes = 0;
            long at = from;
            long retried = -1;
            while (at < until && running.get()) {
                ConsumerRecord<byte[], byte[]> r;
                try {
                    r = scan.next(at);
                } catch (RuntimeException | OutOfMemoryError e) {
                    if (!UnreadableRecords.isUnreadable(e)) {
                        throw e;
                    }
                    // an OutOfMemoryError may be the heap's moment, not the record: a fresh probe reads it once more
                    scan.fresh();
                    if (retried != at && scan.probe(at) == UnreadableRecords.Probe.READABLE) {
                        retried = at;
                        continue;
                    }
                    if (!batch.isEmpty() && !commit(batch)) {
                        return false;
                    }
                    batch = new ArrayList<>();
                    bytes = 0;
                    long runEnd = scan.endOfRun(at, end);
                    if (!answerUnreadable(tp, route, at, runEnd, e)) {
                        return false;
                    }
                    at = runEnd;
                    continue;
                }
                if (r == null) {
                    long next = scan.position();
                    if (next == at) {
                        break; // nothing came: the bridge's consumer goes on from here
                    }
                    at = next; // control records, or an aborted transaction's
                    continue;
                }
                batch.add(incoming(r, route));
                bytes += (r.key() == null ? 0 : r.key().length) + (r.value() == null ? 0 : r.value().length);
                at = r.offset() + 1;
                if (batch.size() >= batchMaxRecords || bytes >= batchMaxBytes) {
                    if (!commit(batch)) {
                        return false;
                    }
                    batch = new ArrayList<>();
                    bytes = 0;
                }
            }
            return batch.isEmpty() || commit(batch);
        }
    }

    /** Offsets {@code first..end-1} of {@code tp} answered rejected/unreadable_record, in chunks of bridge.batch.max.records. */
    private boolean answerUnreadable(TopicPartition tp, TopicRoutes.Route route, long first, long end, Throwable cause) {
        Source head = new Source(tp.topic(), tp.partition(), first);
        LOG.error("records {}..{} of {} cannot be read by the Kafka client ({}): each is answered rejected (unreadable_record)"
                + " and the stored offset moves to {}", first, end - 1, tp, Printable.line(String.valueOf(cause)), end);
        String why = "the Kafka client cannot read this record (" + Printable.line(String.valueOf(cause))
                + "): it declares a size beyond what the bridge holds, or its batch does not parse";
        String after = "the Kafka client cannot read this record: it follows the unreadable record " + head
                + " in one compressed producer batch, which the client reads as one stream";
        for (long o = first; o < end; ) {
            long to = Math.min(end, o + batchMaxRecords);
            List<Incoming> answers = new ArrayList<>((int) (to - o));
            for (long x = o; x < to; x++) {
                answers.add(new Incoming(new Source(tp.topic(), tp.partition(), x), route.tenant(), route.producerSub(),
                        new Rejection(RejectReason.UNREADABLE_RECORD, x == first ? why : after, null)));
            }
            if (!commit(answers)) {
                return false;
            }
            unreadableAnswered.increment(to - o);
            o = to;
        }
        return true;
    }

    /**
     * Applies {@code batch} (consecutive records of the poll, so consecutive per partition) in one
     * transaction. When it fails because of some record's values ({@link SqlStates#causedByValues}), the
     * batch is bisected and each half applied on its own, down to the one record that fails: that record
     * is answered {@code rejected}/{@code internal} with the error text and its offset is consumed, and the
     * rest of the batch is applied. Any other failure is the world's (an outage, a timeout, a fenced
     * offset): nothing of the batch is judged, every partition pauses and resyncs. Returns false then.
     */
    private boolean commit(List<Incoming> batch) {
        List<OffsetAdvance> advances = advances(batch);
        try {
            Outcome out = applyTimer.recordCallable(() -> applier.apply(batch, advances));
            if (out instanceof Outcome.Applied applied) {
                advances.forEach(a -> expected.put(new TopicPartition(a.topic(), a.partition()), a.next()));
                applied.decisions().forEach(this::count);
                return true;
            }
            LOG.warn("batch of {} records from {} fenced: another consumer advanced the stored offsets; seeking to them",
                    batch.size(), describe(advances));
            retries.increment();
            pauseAndResync(Duration.ZERO);
            return false;
        } catch (Exception e) {
            if (SqlStates.causedByValues(e) && !isInternalRejection(batch)) {
                if (batch.size() > 1) {
                    isolations.increment();
                    int half = batch.size() / 2;
                    return commit(batch.subList(0, half)) && commit(batch.subList(half, batch.size()));
                }
                Incoming in = batch.get(0);
                try (TimerMdc m = mdc(in)) {
                    LOG.error("record {} cannot be applied: {}; answering it rejected (internal), the rest of its batch goes on",
                            in.source(), errorText(e), e);
                }
                return commit(List.of(internal(in, e)));
            }
            ErrorClass c = SqlStates.classify(e);
            Duration wait = waits.next();
            String msg = "cannot apply batch of " + batch.size() + " records from " + describe(advances) + " (" + c + "): "
                    + Printable.line(String.valueOf(e)) + "; nothing skipped, retrying in " + wait.toMillis() + " ms";
            if (c == ErrorClass.TRANSIENT) {
                LOG.warn(msg);
            } else {
                LOG.error(msg, e);
            }
            problem.set("database: " + Printable.line(String.valueOf(e.getMessage())));
            retries.increment();
            pauseAndResync(wait);
            return false;
        }
    }

    /** One offset advance per partition of {@code batch}, from the offset it was sought (or last committed) to. */
    private List<OffsetAdvance> advances(List<Incoming> batch) {
        Map<TopicPartition, Long> last = new LinkedHashMap<>();
        for (Incoming in : batch) {
            last.put(new TopicPartition(in.source().topic(), in.source().partition()), in.source().offset());
        }
        List<OffsetAdvance> out = new ArrayList<>(last.size());
        last.forEach((tp, offset) -> out.add(new OffsetAdvance(tp.topic(), tp.partition(), expected.get(tp), offset + 1)));
        return out;
    }

    /**
     * The record that failed, answered rejected: the error text in the event, no key when the key was
     * the trouble. A rejection that still fails is no longer this record's fault (the outbox itself is
     * failing) and is treated as the world's.
     */
    private static Incoming internal(Incoming in, Exception e) {
        String key = in.parsed() instanceof Command c ? c.kafkaKey() : ((Rejection) in.parsed()).kafkaKey();
        Rejection r = new Rejection(RejectReason.INTERNAL, "cannot apply this record: " + errorText(e),
                key != null && CommandParser.isStorableKey(key) ? key : null);
        return new Incoming(in.source(), in.tenant(), in.producerSub(), r);
    }

    /** One line: the SQLSTATE and the server's first line for a database error, else the exception's first line. */
    private static String errorText(Exception e) {
        SQLException sql = SqlStates.find(e);
        String text = sql != null ? "SQLSTATE " + sql.getSQLState() + ": " + sql.getMessage() : e.toString();
        int nl = text.indexOf('\n');
        text = nl < 0 ? text : text.substring(0, nl);
        return Printable.line(text.length() > 500 ? text.substring(0, 500) + "…" : text);
    }

    private static boolean isInternalRejection(List<Incoming> batch) {
        return batch.size() == 1 && batch.get(0).parsed() instanceof Rejection r && r.reason() == RejectReason.INTERNAL
                && r.detail().startsWith("cannot apply this record: ");
    }

    /**
     * One record parsed, and on a topic with {@code auth=jwt} authenticated: a refused token turns the
     * record into an {@code unauthenticated} or {@code forbidden} rejection whatever its content, and a
     * valid one gives the producer sub.
     */
    private Incoming incoming(ConsumerRecord<byte[], byte[]> r, TopicRoutes.Route route) {
        Source source = new Source(r.topic(), r.partition(), r.offset());
        String sub = route.producerSub();
        Incoming.Authority authority = Incoming.Authority.TENANT;   // auth=none: no ownership (docs/security.md#producer-identity)
        if (route.auth() != null) {
            // the token first: the body of a record whose producer is not who it must be is never parsed
            AuthResult auth;
            try {
                auth = route.auth().verify(r.headers(), r.timestamp(), route.tenant());
            } catch (RuntimeException | StackOverflowError e) {
                // a bug met by this record's token: the record gets its verdict, the loop goes on
                auth = new AuthResult.Refused(RejectReason.INTERNAL, "internal error while verifying the token: " + Printable.line(String.valueOf(e)));
            }
            if (!(auth instanceof AuthResult.Verified v)) {
                AuthResult.Refused refused = (AuthResult.Refused) auth;
                return new Incoming(source, route.tenant(), sub, new Rejection(refused.reason(), refused.detail(), CommandParser.auditKey(r.key())));
            }
            sub = v.sub();
            authority = v.admin() ? Incoming.Authority.ADMIN : Incoming.Authority.OWNER;
        }
        return new Incoming(source, route.tenant(), sub, authority, parser.parse(r.key(), r.value(), r.headers(), r.timestamp()));
    }

    /**
     * Seek every assigned partition to its stored offset and resume. A partition with none stored gets its first one
     * ({@link #firstOffsets}); one that cannot be given one yet stays paused.
     */
    private void resync() {
        Collection<TopicPartition> assigned = consumer.assignment();
        try {
            Map<TopicPartition, Long> stored = offsets.load(topics);
            List<TopicPartition> none = assigned.stream().filter(tp -> !stored.containsKey(tp)).toList();
            if (!none.isEmpty()) {
                stored.putAll(firstOffsets(none));
            }
            expected.clear();
            for (TopicPartition tp : assigned) {
                Long s = stored.get(tp);
                if (s != null) {
                    consumer.seek(tp, s);
                    if (unstarted.remove(tp) != null) {
                        LOG.warn("partition {} starts at stored offset {}, set on purpose", tp, s);
                    }
                }
                expected.put(tp, s);
            }
            List<TopicPartition> resumed = new ArrayList<>();
            for (TopicPartition tp : assigned) {
                Long was = stopped.get(tp);
                if (was != null && !was.equals(stored.get(tp))) {
                    stopped.remove(tp);
                    LOG.warn("partition {} resumes at stored offset {}, set on purpose (it was stopped at out-of-range offset {})",
                            tp, stored.get(tp), was);
                }
                if (!stopped.containsKey(tp) && !unstarted.containsKey(tp) && !held.contains(tp.topic())) {
                    resumed.add(tp);
                }
            }
            consumer.resume(resumed);
            if (!assigned.isEmpty()) {
                LOG.info("consuming {} from the stored offsets {}", assigned, describe(assigned));
            }
            resync = false;
            problem.set(null);
        } catch (Exception e) {
            Duration wait = waits.next();
            LOG.warn("cannot read the stored offsets ({}); partitions stay paused, retrying in {} ms", e, wait.toMillis());
            problem.set("database: " + e.getMessage());
            pauseAndResync(wait);
        }
    }

    /**
     * The first stored offset of partitions where the group has none. Kafka never chooses it (auto.offset.reset=none):
     * an empty partition starts at its log start; one holding records where bridge.start.position says (its log start,
     * or its end with an offset_moved audit event), and without that setting it is left out and waits, paused, named by
     * readiness ({@link #stoppedPartitions()}): a new or mistyped group id must not replay a topic, nor skip it, without
     * a decision. Each is stored at once, so a restart before the first batch does not decide again.
     */
    private Map<TopicPartition, Long> firstOffsets(List<TopicPartition> none) throws SQLException {
        Duration t = Duration.ofSeconds(10);
        Map<TopicPartition, Long> begin = consumer.beginningOffsets(none, t);
        Map<TopicPartition, Long> end = consumer.endOffsets(none, t); // the last stable offset under read_committed
        Map<TopicPartition, Long> out = new HashMap<>();
        for (TopicPartition tp : none) {
            long b = begin.get(tp);
            long e = Math.max(b, end.get(tp));
            if (e == b) {
                out.put(tp, offsets.start(tp, b, "empty", b, e, routes.route(tp.topic()).tenant()));
                unstarted.remove(tp);
            } else if (startPosition == null) {
                if (unstarted.put(tp, b + ".." + (e - 1)) == null) {
                    LOG.error("partition {} WAITS: group {} has no stored offset there and it holds records {}..{}; set {}=earliest"
                            + " (apply them) or latest (skip them), or `queen-timers offsets set --group {} --topic {} --partition {}"
                            + " --offset N --reason ...`", tp, offsets.groupId(), b, e - 1, "bridge.start.position",
                            offsets.groupId(), tp.topic(), tp.partition());
                }
                // a position, or every poll throws NoOffsetForPartitionException and the other partitions stop too;
                // paused (never resumed while it waits), so nothing of it is fetched
                consumer.seek(tp, b);
                stoppedCheckAtNanos = System.nanoTime() + STOPPED_CHECK.toNanos();
            } else {
                long first = offsets.start(tp, "latest".equals(startPosition) ? e : b, startPosition, b, e, routes.route(tp.topic()).tenant());
                LOG.warn("partition {}: group {} had no stored offset; bridge.start.position={} starts it at {} (the log holds {}..{})",
                        tp, offsets.groupId(), startPosition, first, b, e - 1);
                out.put(tp, first);
                unstarted.remove(tp);
            }
        }
        return out;
    }

    /**
     * Reads the jwt topics' timestamp settings again: an unsafe topic's assigned partitions are paused (their records
     * wait in Kafka, none is rejected: they would be lost), a topic safe again resumes where it paused. When the broker
     * does not answer, the last state stands. Runs on the loop's thread, also from the rebalance listener.
     */
    private void checkTimestamps() {
        Set<String> now;
        try {
            now = timestamps.check();
        } catch (RuntimeException e) {
            Duration wait = timestampsWaits.next();
            LOG.warn("cannot read the jwt topics' timestamp settings ({}); keeping the last state, retrying in {} ms",
                    Printable.line(String.valueOf(e.getMessage())), wait.toMillis());
            timestampsCheckAtNanos = System.nanoTime() + wait.toNanos();
            return;
        }
        Set<String> was = held;
        held = now;
        List<TopicPartition> pause = new ArrayList<>();
        List<TopicPartition> resume = new ArrayList<>();
        for (TopicPartition tp : consumer.assignment()) {
            if (now.contains(tp.topic())) {
                pause.add(tp);
            } else if (was.contains(tp.topic()) && !resync && !stopped.containsKey(tp) && !unstarted.containsKey(tp)) {
                resume.add(tp); // paused with its position: it goes on from there (a pending resync resumes it otherwise)
            }
        }
        consumer.pause(pause);
        consumer.resume(resume);
        if (now.isEmpty()) {
            timestampsWaits.reset();
            timestampsCheckAtNanos = System.nanoTime() + TIMESTAMPS_RECHECK.toNanos();
        } else {
            timestampsCheckAtNanos = System.nanoTime() + timestampsWaits.next().toNanos();
        }
    }

    /**
     * The stored offset of these partitions is outside the log (topic recreated, or retention passed
     * it). Kafka would jump to one end and drop or replay commands without a verdict; instead the
     * partition stops here, loudly, until an operator sets its offset on purpose
     * ({@code queen-timers offsets set}, docs/commands.md). The other partitions go on.
     */
    private void stop(Map<TopicPartition, Long> outOfRange) {
        for (Map.Entry<TopicPartition, Long> e : outOfRange.entrySet()) {
            TopicPartition tp = e.getKey();
            consumer.pause(List.of(tp));
            if (stopped.put(tp, e.getValue()) == null) {
                LOG.error("partition {} STOPPED: its stored offset {} (group {}) is out of range{}; nothing is skipped on its own:"
                        + " move it on purpose with `queen-timers offsets set --group {} --topic {} --partition {} --offset N --reason ...`",
                        tp, e.getValue(), offsets.groupId(), logRange(tp), offsets.groupId(), tp.topic(), tp.partition());
            }
        }
        stoppedCheckAtNanos = System.nanoTime() + STOPPED_CHECK.toNanos();
    }

    private String logRange(TopicPartition tp) {
        try {
            Duration t = Duration.ofSeconds(5);
            return " (the log holds " + consumer.beginningOffsets(List.of(tp), t).get(tp) + ".." + consumer.endOffsets(List.of(tp), t).get(tp) + ")";
        } catch (RuntimeException e) {
            return "";
        }
    }

    private void idle(Duration d) {
        try {
            Thread.sleep(d.toMillis());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            running.set(false);
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
            b.append(b.length() == 0 ? "" : ", ").append(tp).append('@').append(e == null ? "waiting" : e);
        }
        return b.toString();
    }

    private static String describe(List<OffsetAdvance> advances) {
        if (advances.isEmpty()) {
            return "no partition";
        }
        StringBuilder b = new StringBuilder();
        for (OffsetAdvance a : advances) {
            b.append(b.length() == 0 ? "" : ", ").append(a.topic()).append('/').append(a.partition())
                    .append("@").append(a.expected() == null ? "start" : a.expected()).append("..").append(a.next() - 1);
        }
        return b.toString();
    }

    /**
     * Empty while no partition is stopped; otherwise which, at which stored offset, and what to do. A stopped
     * partition never resumes on its own, so readiness reports it at once rather than after
     * {@code health.failing.after} like a passing failure. Any thread.
     */
    public Optional<String> stoppedPartitions() {
        if (stopped.isEmpty() && unstarted.isEmpty()) {
            return Optional.empty();
        }
        StringBuilder b = new StringBuilder();
        if (!stopped.isEmpty()) {
            b.append("stopped on an out-of-range stored offset (set it with `queen-timers offsets set`):");
            stopped.forEach((tp, offset) -> b.append(' ').append(tp).append('@').append(offset));
        }
        if (!unstarted.isEmpty()) {
            b.append(b.length() == 0 ? "" : "; ").append("waiting: no stored offset of group ").append(offsets.groupId())
                    .append(" in partitions that hold records (set bridge.start.position=earliest or latest, or `queen-timers offsets set`):");
            unstarted.forEach((tp, range) -> b.append(' ').append(tp).append(" holds ").append(range));
        }
        return Optional.of(b.toString());
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
            if (!partitions.isEmpty()) {
                LOG.info("partitions revoked by a rebalance: {}", partitions);
            }
            expected.keySet().removeAll(partitions);
            stopped.keySet().removeAll(partitions);
            unstarted.keySet().removeAll(partitions);
        }

        @Override
        public void onPartitionsLost(Collection<TopicPartition> partitions) {
            // the group gave them to another member while this one was away (a pause, a long collection, a network
            // cut) longer than its session: its next apply is fenced by the stored offsets, never applied twice
            if (!partitions.isEmpty()) {
                LOG.warn("partitions LOST: this consumer was out of the group longer than its session: {}", partitions);
            }
            expected.keySet().removeAll(partitions);
            stopped.keySet().removeAll(partitions);
            unstarted.keySet().removeAll(partitions);
        }

        @Override
        public void onPartitionsAssigned(Collection<TopicPartition> partitions) {
            if (!partitions.isEmpty()) {
                consumer.pause(partitions);
                resync = true;
                if (timestamps != null && partitions.stream().anyMatch(tp -> timestamps.topics().contains(tp.topic()))) {
                    // a partition of a jwt topic is read only once its topic's timestamps are known to be safe now
                    checkTimestamps();
                }
            }
        }
    }
}
