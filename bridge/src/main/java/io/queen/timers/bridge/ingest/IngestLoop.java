package io.queen.timers.bridge.ingest;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import io.queen.timers.bridge.apply.BatchApplier;
import io.queen.timers.bridge.apply.Decision;
import io.queen.timers.bridge.apply.Incoming;
import io.queen.timers.bridge.apply.OffsetAdvance;
import io.queen.timers.bridge.apply.Outcome;
import io.queen.timers.bridge.apply.Source;
import io.queen.timers.bridge.auth.TopicTimestamps;
import io.queen.timers.bridge.fetch.CommandSource;
import io.queen.timers.bridge.fetch.Fetched;
import io.queen.timers.bridge.wire.Command;
import io.queen.timers.bridge.wire.CommandParser;
import io.queen.timers.bridge.wire.Rejection;
import io.queen.timers.client.command.RejectReason;
import io.queen.timers.core.db.ErrorClass;
import io.queen.timers.core.db.SqlStates;
import io.queen.timers.core.health.LoopProgress;
import io.queen.timers.core.logging.TimerMdc;
import io.queen.timers.core.retry.Backoff;
import io.queen.timers.core.text.Printable;
import io.queen.timers.routes.TopicRoutes;
import io.queen.timers.routes.auth.AuthResult;
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
import org.apache.kafka.clients.consumer.ConsumerRebalanceListener;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.NoOffsetForPartitionException;
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
 * an offset the bridge does not read ({@link Fetched.Unreadable}: a record beyond the record limits, alone; one larger than
 * it decodes or that lies about its length, with the rest of its producer batch) is answered {@code rejected}/{@code unreadable_record} in its place, in
 * the same batch as its neighbours. A partition whose stored offset is out of range stops (never auto-reset). Not
 * thread-safe: runs on one thread; {@link #close()} may be called from any.
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
    private final CommandSource source;
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
    private final AtomicLong lag = new AtomicLong();
    private final AtomicBoolean running = new AtomicBoolean(true);
    private final AtomicReference<String> problem = new AtomicReference<>("starting");
    /** The pause before the next rewind after a failure; reset by an applied batch. */
    private final Backoff.Waits waits;

    /**
     * What the loop works with.
     *
     * @param source     the group's partitions and their records, read in bounded memory; closed when the loop ends
     * @param offsets    the group's stored offsets, read at every rewind
     * @param timestamps the jwt topics' timestamp settings, read again on every assignment and periodically; null when
     *                   no topic checks tokens
     */
    public record Parts(CommandSource source, TopicRoutes routes, CommandParser parser, BatchApplier applier, OffsetStore offsets,
                        TopicTimestamps timestamps) {}

    public IngestLoop(IngestSettings settings, Parts parts, MeterRegistry registry, LoopProgress progress) {
        this.settings = settings;
        this.timestamps = parts.timestamps();
        this.source = parts.source();
        this.routes = parts.routes();
        this.parser = parts.parser();
        this.applier = parts.applier();
        this.positions = new PartitionPositions(source, parts.offsets(), settings.topics(), routes, settings.startPosition());
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
                .description("Offsets answered rejected/unreadable_record: records the bridge does not read (a key or headers beyond"
                        + " the record limits, a body larger than it decodes, a length the batch does not hold, a failed checksum) and"
                        + " the rest of their batch where it cannot be read past them").register(registry);
        Gauge.builder("queen.timers.bridge.partitions.stopped", positions, PartitionPositions::waiting)
                .description("Command partitions stopped because their stored offset is out of range (an operator sets it),"
                        + " or because the group has none there and bridge.start.position is not set").register(registry);
        Gauge.builder("queen.timers.bridge.ingest.lag", lag, AtomicLong::get)
                .description("Records in the assigned command partitions not yet applied").baseUnit("records").register(registry);
    }

    @Override
    public void run() {
        source.subscribe(settings.topics(), new Rebalance());
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
                CommandSource.Polled polled;
                try {
                    polled = source.poll(settings.pollTimeout());
                } catch (NoOffsetForPartitionException e) {
                    // newly assigned, not sought yet (auto.offset.reset=none): the resync above seeks them, once the
                    // stored offsets can be read; until then poll throws at once, so wait here instead of spinning
                    idle(settings.pollTimeout());
                    continue;
                }
                positions.recheckStopped();
                List<Incoming> batch = gather(polled);
                if (!batch.isEmpty()) {
                    apply(batch);
                }
                lag.set(source.lag());
                // a cycle spent paused after a failure (waiting to resync) is not progress, nor one whose fetches fail;
                // a partition stopped on an out-of-range offset is reported on its own (stoppedPartitions), at once
                String p = problem.get();
                if (p == null) {
                    p = source.problem();
                }
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
            source.close(); // leaves the group: the partitions move on at once
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
     * The batch of one apply: this poll's offsets parsed, then more polls that return at once while offsets are read
     * ahead, until {@code batchMaxRecords} or {@code batchMaxBytes} of records ({@link Fetched#heldBytes()}: keys, values,
     * headers and their objects). Each poll's records are dropped once parsed, so the bridge holds one poll's records
     * (max.poll.records records, each within the record limits {@link CommandSource} reads by) plus the batch's parsed
     * commands (from at most {@code batchMaxBytes} of records): bridge.ingest.max.bytes in all, whatever
     * the producer's compression. Per partition the offsets stay in order; a rebalance between two polls is caught by the
     * offsets' check-and-set (the apply is fenced and re-read). A partition found out of range stops here.
     */
    private List<Incoming> gather(CommandSource.Polled first) {
        List<Incoming> batch = new ArrayList<>(Math.min(settings.batchMaxRecords(), first.items().size() * 4));
        CommandSource.Polled polled = first;
        long bytes = 0;
        while (true) {
            if (!polled.outOfRange().isEmpty()) {
                positions.stopOutOfRange(polled.outOfRange());
            }
            bytes += parseInto(polled.items(), batch);
            if (polled.items().isEmpty() || batch.size() >= settings.batchMaxRecords() || bytes >= settings.batchMaxBytes()
                    || !running.get()) {
                return batch;
            }
            try {
                polled = source.poll(Duration.ZERO);
            } catch (NoOffsetForPartitionException e) {
                return batch; // the next cycle's poll meets it again and handles it
            }
        }
    }

    /** Parses {@code items} into {@code batch}; returns the heap they held, as the poll counted it ({@link Fetched#heldBytes()}). */
    private long parseInto(List<Fetched> items, List<Incoming> batch) {
        long bytes = 0;
        for (Fetched f : items) {
            TopicRoutes.Route route = routes.route(f.partition().topic());
            if (f instanceof Fetched.Readable readable) {
                batch.add(incoming(readable.record(), route));
            } else {
                batch.add(unreadable((Fetched.Unreadable) f, route));
            }
            bytes += f.heldBytes();
        }
        return bytes;
    }

    /**
     * An offset the bridge does not read, answered rejected/unreadable_record: without a key (it was not read) and with
     * the topic's tenant (a token in it cannot be read either).
     */
    private Incoming unreadable(Fetched.Unreadable u, TopicRoutes.Route route) {
        Source first = new Source(u.partition().topic(), u.partition().partition(), u.first());
        String detail;
        if (u.offset() == u.first()) {
            if (u.alone()) {
                LOG.error("record {} is not read: {}; it alone is answered rejected (unreadable_record), the rest of its producer"
                        + " batch is read", first, u.why());
            } else {
                LOG.error("record {} is not read: {}; it and the rest of its producer batch are answered rejected (unreadable_record)",
                        first, u.why());
            }
            detail = "the bridge does not read this record: " + u.why();
        } else {
            detail = "the bridge does not read this record: it follows the unreadable record " + first
                    + " in one producer batch, which cannot be read past it";
        }
        unreadableAnswered.increment();
        return new Incoming(new Source(u.partition().topic(), u.partition().partition(), u.offset()), route.tenant(),
                route.producerSub(), new Rejection(RejectReason.UNREADABLE_RECORD, detail, null));
    }

    /** Apply the batch, then act on the outcome. */
    private void apply(List<Incoming> batch) {
        if (commit(batch)) {
            waits.reset();
            problem.set(null);
        }
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
        source.wakeup();
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
