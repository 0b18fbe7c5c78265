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
import java.util.List;
import java.util.Optional;
import java.util.Set;
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
 * The bridge's consumer loop: poll, parse (and, on a jwt topic, authenticate) every record, apply the batch in one
 * transaction. Where each partition is read from, and every rewind to the stored offsets, is {@link PartitionPositions}'s.
 *
 * <p>One cycle: (re)seek if needed → poll → parse → apply. When the apply fails (database unreachable, or any other error)
 * the loop never skips: it pauses every partition, backs off ({@link Backoff}: jittered under a ceiling of 100 ms doubling
 * to {@code db.retry.backoff.max}), reads the stored offsets again, seeks to them and resumes. When the apply is fenced (the
 * stored offset is not the one this consumer sought to: a zombie, or a commit whose acknowledgement was lost) it does the
 * same without waiting. A record whose values fail the apply is isolated and answered {@code rejected} ({@link #commit});
 * one the Kafka client cannot decode is read past and answered too ({@link #salvage(Throwable)}). A partition whose stored
 * offset is out of range stops (never auto-reset). Not thread-safe: runs on one thread; {@link #close()} may be called
 * from any.
 */
public final class IngestLoop implements Runnable, AutoCloseable {

    private static final Logger LOG = LoggerFactory.getLogger(IngestLoop.class);
    private static final Duration MIN_BACKOFF = Duration.ofMillis(100);
    /**
     * How often the jwt topics' timestamp settings are read again while all are safe: an operator's change
     * makes no rebalance, so this bounds how long records it let producers date are read unnoticed.
     */
    static final Duration TIMESTAMPS_RECHECK = Duration.ofSeconds(10);
    private static final Duration TIMESTAMPS_MIN_BACKOFF = Duration.ofSeconds(1);

    private final IngestSettings settings;
    private final Consumer<byte[], byte[]> consumer;
    private final KafkaClientMetrics consumerMetrics;
    private final TopicRoutes routes;
    private final CommandParser parser;
    private final BatchApplier applier;
    private final PartitionPositions positions;
    /** Null when no topic checks tokens. */
    private final TopicTimestamps timestamps;
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
    /** The pause before the next rewind after a failure; reset by an applied batch. */
    private final Backoff.Waits waits;

    /**
     * @param consumer   the group's consumer (auto.offset.reset=none, no auto-commit); closed when the loop ends
     * @param probes     makes a consumer of the same settings without a group and with max.poll.records 1, which reads
     *                   past a record the client cannot decode ({@link UnreadableRecords})
     * @param offsets    the group's stored offsets, read at every rewind
     * @param timestamps the jwt topics' timestamp settings, read again on every assignment and periodically; null when
     *                   no topic checks tokens
     */
    public IngestLoop(IngestSettings settings, Consumer<byte[], byte[]> consumer, Supplier<Consumer<byte[], byte[]>> probes,
                      TopicRoutes routes, CommandParser parser, BatchApplier applier, OffsetStore offsets,
                      TopicTimestamps timestamps, MeterRegistry registry, LoopProgress progress) {
        this.settings = settings;
        this.timestamps = timestamps;
        this.consumer = consumer;
        this.routes = routes;
        this.parser = parser;
        this.applier = applier;
        this.positions = new PartitionPositions(consumer, offsets, settings.topics(), routes, settings.startPosition());
        this.waits = new Backoff(MIN_BACKOFF, settings.maxBackoff()).waits();
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
        this.unreadable = new UnreadableRecords(probes, settings.pollTimeout());
        Gauge.builder("queen.timers.bridge.partitions.stopped", positions, PartitionPositions::waiting)
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
        consumer.subscribe(settings.topics(), new Rebalance());
        try {
            while (running.get()) {
                progress.begin();
                // a key file broken while no record comes is still noticed (readiness) within a cycle
                routes.refreshKeys();
                if (timestamps != null && System.nanoTime() - timestampsCheckAtNanos >= 0) {
                    checkTimestamps();
                }
                if (positions.resyncDue()) {
                    resync();
                }
                ConsumerRecords<byte[], byte[]> records;
                try {
                    records = consumer.poll(settings.pollTimeout());
                } catch (NoOffsetForPartitionException e) {
                    // newly assigned, not sought yet (auto.offset.reset=none): the resync above seeks them, once the
                    // stored offsets can be read; until then poll throws at once, so wait here instead of spinning
                    idle(settings.pollTimeout());
                    continue;
                } catch (OffsetOutOfRangeException e) {
                    positions.stopOutOfRange(e.offsetOutOfRangePartitions());
                    continue;
                } catch (RuntimeException | OutOfMemoryError e) {
                    if (!UnreadableRecords.isUnreadable(e)) {
                        throw e;
                    }
                    salvage(e);
                    continue;
                }
                positions.recheckStopped();
                if (!records.isEmpty()) {
                    apply(gather(records));
                    if (unreadableMet != null) {
                        Throwable e = unreadableMet;
                        unreadableMet = null;
                        if (!positions.resyncPending()) { // after a failed apply the resync's poll meets the record again
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
        List<Incoming> batch = new ArrayList<>(Math.min(settings.batchMaxRecords(), first.count() * 4));
        long bytes = parseInto(first, batch);
        while (batch.size() < settings.batchMaxRecords() && bytes < settings.batchMaxBytes() && running.get()) {
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
                Long from = positions.readFrom(tp);
                if (from == null) {
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
            positions.rewind(wait);
            return;
        }
        positions.rewind(Duration.ZERO);
    }

    /** One partition of {@link #salvage(Throwable)}; false when an apply failed (it paused and resyncs). */
    private boolean salvage(TopicPartition tp, long from) {
        TopicRoutes.Route route = routes.route(tp.topic());
        try (UnreadableRecords.Scan scan = unreadable.scan(tp)) {
            long end = scan.end();
            long until = Math.min(end, from + settings.batchMaxRecords());
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
                if (batch.size() >= settings.batchMaxRecords() || bytes >= settings.batchMaxBytes()) {
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
            long to = Math.min(end, o + settings.batchMaxRecords());
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
        List<OffsetAdvance> advances = positions.advances(batch);
        try {
            Outcome out = applyTimer.recordCallable(() -> applier.apply(batch, advances));
            if (out instanceof Outcome.Applied applied) {
                positions.advanced(advances);
                applied.decisions().forEach(this::count);
                return true;
            }
            LOG.warn("batch of {} records from {} fenced: another consumer advanced the stored offsets; seeking to them",
                    batch.size(), describe(advances));
            retries.increment();
            positions.rewind(Duration.ZERO);
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
            positions.rewind(wait);
            return false;
        }
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
     * Seeks every partition to its stored offset ({@link PartitionPositions#resync}); when the stored offsets cannot be
     * read, the partitions stay paused and it is tried again after a backoff.
     */
    private void resync() {
        try {
            positions.resync();
            problem.set(null);
        } catch (Exception e) {
            Duration wait = waits.next();
            LOG.warn("cannot read the stored offsets ({}); partitions stay paused, retrying in {} ms", e, wait.toMillis());
            problem.set("database: " + e.getMessage());
            positions.rewind(wait);
        }
    }

    /**
     * Reads the jwt topics' timestamp settings again: an unsafe topic's assigned partitions are paused, a topic safe
     * again resumes where it paused ({@link PartitionPositions#hold}). When the broker
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
        positions.hold(now);
        if (now.isEmpty()) {
            timestampsWaits.reset();
            timestampsCheckAtNanos = System.nanoTime() + TIMESTAMPS_RECHECK.toNanos();
        } else {
            timestampsCheckAtNanos = System.nanoTime() + timestampsWaits.next().toNanos();
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
     * Empty while no partition is stopped; otherwise which, at which stored offset, and what to do
     * ({@link PartitionPositions#stoppedPartitions()}). Any thread.
     */
    public Optional<String> stoppedPartitions() {
        return positions.stoppedPartitions();
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
            positions.forget(partitions);
        }

        @Override
        public void onPartitionsLost(Collection<TopicPartition> partitions) {
            // the group gave them to another member while this one was away (a pause, a long collection, a network
            // cut) longer than its session: its next apply is fenced by the stored offsets, never applied twice
            if (!partitions.isEmpty()) {
                LOG.warn("partitions LOST: this consumer was out of the group longer than its session: {}", partitions);
            }
            positions.forget(partitions);
        }

        @Override
        public void onPartitionsAssigned(Collection<TopicPartition> partitions) {
            if (!partitions.isEmpty()) {
                positions.assigned(partitions);
                if (timestamps != null && partitions.stream().anyMatch(tp -> timestamps.topics().contains(tp.topic()))) {
                    // a partition of a jwt topic is read only once its topic's timestamps are known to be safe now
                    checkTimestamps();
                }
            }
        }
    }
}
