package io.queen.timers.bridge.fetch;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.binder.kafka.KafkaClientMetrics;
import io.queen.timers.bridge.wire.RecordLimits;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Collections;
import java.util.HashSet;
import java.util.IdentityHashMap;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.LongSupplier;
import org.apache.kafka.clients.consumer.Consumer;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRebalanceListener;
import org.apache.kafka.common.IsolationLevel;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.TopicAuthorizationException;
import org.apache.kafka.common.protocol.Errors;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The bridge's command partitions as it reads them: which are its own (a Kafka consumer group), and their records, read
 * in bounded memory ({@link Fetcher}, {@link PartitionReader}) instead of by that consumer.
 *
 * <p>The group's consumer only keeps the membership: it subscribes, heartbeats and runs the rebalance listener, and every
 * partition it is assigned is paused in it at once, so it never fetches and never decodes a record. Its positions follow
 * {@link #seek} only because a consumer without positions throws at every poll. The offsets of the partitions' ends come
 * from it too ({@code ListOffsets}: no record is read).
 *
 * <p>One {@link #poll} hands over at most {@code maxPollRecords} offsets and about {@code maxPollBytes} of heap: each record's
 * key, value and headers and the objects around them, counted from the wire's lengths before any exists
 * ({@link Fetched#heldBytes()}; the first record always, so a single large one is never stuck), one offset of each topic in
 * turn ({@link #drain}), so that every topic with something read ahead has a share of every poll however many partitions
 * another has. An offset the reader does not read is handed over as {@link Fetched.Unreadable} in its place, so the loop
 * answers it like any record, in order, and no partition waits on another's, except for a decompression stream: a
 * compressed batch's stream opens only once what its codec declares fits {@link StreamBudget}
 * (bridge.decompression.max.bytes, one stream per topic), and until then its partition hands over nothing and the others
 * are read on. A topic is fetched again once it has nothing left to hand over, whatever the other topics still hold
 * ({@link #send}). Not thread-safe, except {@link #wakeup()}.
 */
public final class CommandSource implements AutoCloseable {

    private static final Logger LOG = LoggerFactory.getLogger(CommandSource.class);

    /** What one poll handed over, and the partitions whose position the broker says is outside the log. */
    public record Polled(List<Fetched> items, Map<TopicPartition, Long> outOfRange) {
        public boolean isEmpty() {
            return items.isEmpty() && outOfRange.isEmpty();
        }
    }

    private static final class Part {
        /** The next offset to hand over; -1 until sought. */
        long position = -1;
        boolean paused = true;
        PartitionReader reader;
        /** The response {@link #reader} reads from, held whole while it does; null without a reader. */
        Fetcher.Response response;
        long end = -1;
        int failures;
        long retryAtNanos;
        String failing;
        /**
         * Not asked again before this by a fetch the broker answers at once: fetch.max.wait.ms after an answer that had
         * nothing past its position (when a long poll of it would have come back).
         */
        long quietUntilNanos;
    }

    private final Consumer<byte[], byte[]> group;
    private final Fetcher fetcher;
    private final RecordDecoder decoder;
    private final int maxPollRecords;
    private final long maxPollBytes;
    private final boolean checkCrcs;
    private final long backoffNanos;
    private final long backoffMaxNanos;
    private final StreamBudget streams;
    private final long fetchMaxBytes;
    private final long partitionMaxBytes;
    private final long maxWaitNanos;
    private final LongSupplier nanoTime;
    private final Map<TopicPartition, Part> parts = new LinkedHashMap<>();
    private final Counter fetchErrors;
    private final KafkaClientMetrics groupMetrics;
    private int rotate;
    private int sendTurn;
    /** When {@link #send} next has something to ask that it held back for a time (a quiet partition, a backoff); or MAX_VALUE. */
    private long nextSendNanos;

    /**
     * @param group          the group's consumer (auto.offset.reset=none, no auto-commit); closed with this source
     * @param config         the same consumer settings: security, fetch sizes and wait, isolation level, check.crcs
     * @param topics         the command topics (the fetcher's metadata asks for these only)
     * @param limits         what one record may hold, counted before it becomes objects ({@link RecordDecoder})
     * @param maxPollBytes   heap the records of one poll hold, about (at least one record): {@link Fetched#heldBytes()}
     * @param decompressionMaxBytes what the decompression streams of batches read part way hold together, as their codecs
     *                       declare it ({@link StreamBudget}): bridge.decompression.max.bytes
     */
    public CommandSource(Consumer<byte[], byte[]> group, ConsumerConfig config, List<String> topics, RecordLimits limits,
                         long maxPollBytes, long decompressionMaxBytes, MeterRegistry registry) {
        this(group, config, topics, limits, maxPollBytes, decompressionMaxBytes, registry, System::nanoTime);
    }

    /** The same, on the clock {@code nanoTime} (a test's, to step past a wait without waiting). */
    CommandSource(Consumer<byte[], byte[]> group, ConsumerConfig config, List<String> topics, RecordLimits limits,
                  long maxPollBytes, long decompressionMaxBytes, MeterRegistry registry, LongSupplier nanoTime) {
        this.group = group;
        this.nanoTime = nanoTime;
        this.fetchMaxBytes = config.getInt(ConsumerConfig.FETCH_MAX_BYTES_CONFIG);
        this.partitionMaxBytes = Math.min(fetchMaxBytes, config.getInt(ConsumerConfig.MAX_PARTITION_FETCH_BYTES_CONFIG));
        this.maxWaitNanos = Duration.ofMillis(config.getInt(ConsumerConfig.FETCH_MAX_WAIT_MS_CONFIG)).toNanos();
        this.fetcher = new Fetcher(config, topics);
        this.decoder = new RecordDecoder(limits);
        this.maxPollRecords = config.getInt(ConsumerConfig.MAX_POLL_RECORDS_CONFIG);
        this.maxPollBytes = maxPollBytes;
        this.streams = new StreamBudget(decompressionMaxBytes);
        this.checkCrcs = config.getBoolean(ConsumerConfig.CHECK_CRCS_CONFIG);
        this.backoffNanos = Duration.ofMillis(config.getLong(ConsumerConfig.RETRY_BACKOFF_MS_CONFIG)).toNanos();
        this.backoffMaxNanos = Math.max(backoffNanos, Duration.ofMillis(config.getLong(ConsumerConfig.RETRY_BACKOFF_MAX_MS_CONFIG)).toNanos());
        this.fetchErrors = Counter.builder("queen.timers.bridge.fetch.errors")
                .description("Fetches of a command partition answered with an error or not answered (a moved leader, a broker"
                        + " away); the partition is fetched again after a backoff").register(registry);
        // the group consumer's own meters (kafka_consumer_coordinator_*: rebalances, heartbeats); closed with it
        this.groupMetrics = new KafkaClientMetrics(group);
        groupMetrics.bindTo(registry);
        Gauge.builder("queen.timers.bridge.decompression.held.bytes", streams, StreamBudget::heldBytes)
                .description("What the decompression streams of the compressed batches being read hold together, as their codecs"
                        + " declared it before they opened (bridge.decompression.max.bytes at most)").baseUnit("bytes").register(registry);
    }

    /** Joins the group; {@code listener} runs inside {@link #poll}, after this source has taken on the change. */
    public void subscribe(Collection<String> topics, ConsumerRebalanceListener listener) {
        group.subscribe(topics, new ConsumerRebalanceListener() {
            @Override
            public void onPartitionsRevoked(Collection<TopicPartition> partitions) {
                drop(partitions);
                listener.onPartitionsRevoked(partitions);
            }

            @Override
            public void onPartitionsLost(Collection<TopicPartition> partitions) {
                drop(partitions);
                listener.onPartitionsLost(partitions);
            }

            @Override
            public void onPartitionsAssigned(Collection<TopicPartition> partitions) {
                group.pause(partitions); // the group's consumer never fetches
                partitions.forEach(tp -> parts.putIfAbsent(tp, new Part()));
                listener.onPartitionsAssigned(partitions);
            }
        });
    }

    public Set<TopicPartition> assignment() {
        return group.assignment();
    }

    /** The next offset of {@code tp} to hand over is {@code offset}; what was read ahead of it is dropped. */
    public void seek(TopicPartition tp, long offset) {
        Part p = part(tp);
        p.position = offset;
        closeReader(p);
        p.failures = 0;
        p.failing = null;
        group.seek(tp, offset); // a position for the group's consumer, which never fetches it
    }

    /**
     * Hands over nothing of these partitions until resumed; they go on from their position. What was read ahead of them is
     * dropped (fetched again once resumed), so that a paused partition holds no decompression stream and no place in line.
     */
    public void pause(Collection<TopicPartition> partitions) {
        for (TopicPartition tp : partitions) {
            Part p = part(tp);
            p.paused = true;
            closeReader(p);
        }
    }

    public void resume(Collection<TopicPartition> partitions) {
        partitions.forEach(tp -> part(tp).paused = false);
    }

    public Map<TopicPartition, Long> beginningOffsets(Collection<TopicPartition> partitions, Duration timeout) {
        return group.beginningOffsets(partitions, timeout);
    }

    /** The partitions' ends: the last stable offsets under read_committed. */
    public Map<TopicPartition, Long> endOffsets(Collection<TopicPartition> partitions, Duration timeout) {
        return group.endOffsets(partitions, timeout);
    }

    /**
     * The group's duties (heartbeat, rebalance: the listener runs here), then up to {@code maxPollRecords} offsets of the
     * resumed partitions, waiting at most {@code timeout} for the brokers when none is read ahead, or for the answer of a
     * fetch it sent at its start that the broker answers at once (a round trip; PRICE: a poll with a timeout pays it even
     * when something else was read ahead, so that what became due while the caller applied is handed over now). Throws what the group's
     * consumer throws (no stored position yet, a fatal error), a {@link TopicAuthorizationException} when a fetch is
     * refused for it, and a {@link org.apache.kafka.common.errors.WakeupException} after {@link #wakeup()}.
     */
    public Polled poll(Duration timeout) {
        group.poll(Duration.ZERO);
        List<Fetched> items = new ArrayList<>();
        Map<TopicPartition, Long> outOfRange = new LinkedHashMap<>();
        long deadline = System.nanoTime() + timeout.toNanos();
        receive(Duration.ZERO, outOfRange); // what came back while the caller applied
        send();
        if (fetcher.onlyAnsweredAtOnce()) {
            // what is due now is asked and its answer taken into this poll: a round trip, instead of a whole apply of the
            // caller's before it is handed over
            receive(Duration.ofNanos(Math.max(0, deadline - System.nanoTime())), outOfRange);
        }
        drain(items);
        while (items.isEmpty() && outOfRange.isEmpty()) {
            send();
            long wait = deadline - System.nanoTime();
            if (nextSendNanos != Long.MAX_VALUE) { // until send has more to ask: never zero, what it held back is ahead
                wait = Math.min(wait, nextSendNanos - nanoTime.getAsLong());
            }
            receive(Duration.ofNanos(Math.max(0, wait)), outOfRange);
            drain(items);
            if (deadline - System.nanoTime() <= 0) {
                break;
            }
        }
        send(); // read ahead while the caller applies, as Kafka's consumer does
        return new Polled(items, outOfRange);
    }

    private void receive(Duration wait, Map<TopicPartition, Long> outOfRange) {
        for (Fetcher.Result r : fetcher.poll(wait)) {
            accept(r, outOfRange);
        }
    }

    /** Records between each resumed partition's position and its end, as the last fetch saw it. */
    public long lag() {
        long sum = 0;
        for (Part p : parts.values()) {
            if (p.end >= 0 && p.position >= 0) {
                sum += Math.max(0, p.end - p.position);
            }
        }
        return sum;
    }

    /** Null while every resumed partition's last fetch succeeded; otherwise which fails and why. */
    public String problem() {
        for (Map.Entry<TopicPartition, Part> e : parts.entrySet()) {
            Part p = e.getValue();
            if (!p.paused && p.failing != null) {
                return "kafka: fetching " + e.getKey() + " at offset " + p.position + " fails (" + p.failing + "), "
                        + p.failures + " times in a row";
            }
        }
        return null;
    }

    /** Whether {@code tp} holds what a fetch brought that is not handed over yet (what a test observes). */
    boolean holdsReadAhead(TopicPartition tp) {
        Part p = parts.get(tp);
        return p != null && p.reader != null;
    }

    /** Whether a fetch of {@code tp} is out (what a test observes). */
    boolean fetching(TopicPartition tp) {
        return fetcher.inFlight(tp);
    }

    /** Makes a blocked {@link #poll} throw a wakeup. Any thread. */
    public void wakeup() {
        group.wakeup();
        fetcher.wakeup();
    }

    /** Leaves the group (its partitions move on at once) and closes the fetcher's connections. */
    @Override
    public void close() {
        parts.values().forEach(CommandSource::closeReader);
        try {
            groupMetrics.close();
            group.close();
        } finally {
            fetcher.close();
        }
    }

    /**
     * Fetches what has nothing left to hand over: a resumed partition with a position, none in flight and no backoff
     * running, once no partition of its topic holds read-ahead, whatever the other topics hold.
     *
     * <p>When nothing at all is read ahead, every such partition in one long poll per broker (fetch.max.wait.ms), which the
     * broker answers as soon as any of them has data. While something is read ahead, in a fetch the broker answers at once:
     * a broker answers one request per connection at a time, so a long poll of idle partitions sent while others still held
     * data would make those others' next fetch wait behind it, up to fetch.max.wait.ms for every round, which held a bridge
     * with one idle partition beside busy ones below the rate it was offered. Such a fetch asks a partition whose last answer
     * had nothing past its position no sooner than fetch.max.wait.ms after that answer (when a long poll would have come
     * back), so an idle partition costs one empty round trip per fetch.max.wait.ms, not a busy loop. Either fetch brings at
     * most what fetch.max.bytes leaves beside the responses held and those in flight, so that the fetched bytes the JVM holds
     * stay within fetch.max.bytes however the fetches interleave (and one batch: a broker returns the first batch it finds
     * whole, however large).
     *
     * <p>Why a partition waits for its own topic's read-ahead: a topic's partitions are fetched together, so that a topic
     * holds one round of read-ahead at a time; a tenant whose partitions are read slowly (their compressed batches one
     * after another, {@link StreamBudget}) piles up nothing, and takes no room from the others.
     *
     * <p>PRICE: a topic's next fetch starts when its last partition's data is handed over, not while it is: one round trip
     * per batch on a bridge that is behind. While other topics hold read-ahead an idle partition's new record waits up to
     * fetch.max.wait.ms for its fetch (as long as a long poll may hold it). While what is held fills fetch.max.bytes (more
     * than fetch.max.bytes / max.partition.fetch.bytes partitions' shares, 128 at the defaults), the drained topics wait
     * for room. With several brokers, a round's fetch.max.bytes is split between them.
     */
    private void send() {
        nextSendNanos = Long.MAX_VALUE;
        Set<String> holding = new HashSet<>();
        Set<Fetcher.Response> held = Collections.newSetFromMap(new IdentityHashMap<>());
        long heldBytes = 0;
        for (Map.Entry<TopicPartition, Part> e : parts.entrySet()) {
            Part p = e.getValue();
            if (p.reader != null) {
                holding.add(e.getKey().topic());
                if (held.add(p.response)) {
                    heldBytes += p.response.bytes;
                }
            }
        }
        long room = fetchMaxBytes - heldBytes - fetcher.inFlightMaxBytes();
        if (room < partitionMaxBytes) {
            return; // asked again once what is held is handed over, or what is in flight is back
        }
        boolean longPoll = holding.isEmpty();
        long now = nanoTime.getAsLong();
        Map<TopicPartition, Long> wanted = new LinkedHashMap<>();
        // the broker fills a response in the order of its request, and may return the first batch it finds whole: a start
        // that moves on gives that turn to each partition in turn
        List<Map.Entry<TopicPartition, Part>> order = new ArrayList<>(parts.entrySet());
        int start = order.isEmpty() ? 0 : Math.floorMod(sendTurn++, order.size());
        for (int i = 0; i < order.size(); i++) {
            Map.Entry<TopicPartition, Part> e = order.get((start + i) % order.size());
            Part p = e.getValue();
            if (p.paused || p.position < 0 || holding.contains(e.getKey().topic()) || fetcher.inFlight(e.getKey())) {
                continue;
            }
            long notBefore = longPoll ? p.retryAtNanos : Math.max(p.retryAtNanos, p.quietUntilNanos);
            if (now - notBefore < 0) {
                nextSendNanos = Math.min(nextSendNanos, notBefore);
                continue;
            }
            wanted.put(e.getKey(), p.position);
        }
        if (!wanted.isEmpty()) {
            fetcher.send(wanted, longPoll, room);
        }
    }

    private void accept(Fetcher.Result r, Map<TopicPartition, Long> outOfRange) {
        Part p = parts.get(r.tp());
        if (p == null || p.paused || p.position != r.fetchOffset() || p.reader != null) {
            // revoked, paused or sought elsewhere while the fetch was out: a paused partition holds no read-ahead, which
            // would hold its topic's next fetch for as long as it stays paused
            return;
        }
        if (r.error() == Errors.NONE) {
            p.failures = 0;
            p.failing = null;
            p.end = fetcher.isolation() == IsolationLevel.READ_COMMITTED && r.lastStable() >= 0
                    ? r.lastStable() : r.highWatermark();
            if (r.records().sizeInBytes() > 0) {
                p.reader = new PartitionReader(r.tp(), r.records(), r.aborted(), p.position,
                        new PartitionReader.Reading(fetcher.isolation(), decoder, checkCrcs, streams));
                p.response = r.response();
            } else if (p.end <= p.position) { // not when its records were left out of a full response: asked again at once
                p.quietUntilNanos = nanoTime.getAsLong() + maxWaitNanos;
            }
            return;
        }
        switch (r.error()) {
            case OFFSET_OUT_OF_RANGE -> outOfRange.put(r.tp(), r.fetchOffset());
            case TOPIC_AUTHORIZATION_FAILED -> throw new TopicAuthorizationException(Set.of(r.tp().topic()));
            default -> failed(r.tp(), p, r.error().name() + ": " + r.error().message());
        }
    }

    private void failed(TopicPartition tp, Part p, String why) {
        fetchErrors.increment();
        p.failures++;
        p.failing = why;
        long wait = Math.min(backoffMaxNanos, backoffNanos << Math.min(10, p.failures - 1));
        p.retryAtNanos = nanoTime.getAsLong() + wait;
        if (p.failures == 1 || p.failures % 50 == 0) {
            LOG.warn("fetching {} at offset {} failed ({}), {} times in a row; fetching it again in {} ms", tp, p.position, why,
                    p.failures, Duration.ofNanos(wait).toMillis());
        }
    }

    /**
     * Takes what was read ahead: one offset of each topic in turn, until the poll is full, so that a topic's share of a poll
     * does not depend on how many partitions it has or how large their records are; within a topic, one partition until it
     * has nothing more to hand over now, then the next. Both the first topic and each topic's first partition move on at
     * every poll.
     */
    private void drain(List<Fetched> items) {
        Map<String, ArrayDeque<Map.Entry<TopicPartition, Part>>> byTopic = new LinkedHashMap<>();
        for (Map.Entry<TopicPartition, Part> e : parts.entrySet()) {
            if (!e.getValue().paused && e.getValue().reader != null) {
                byTopic.computeIfAbsent(e.getKey().topic(), t -> new ArrayDeque<>()).add(e);
            }
        }
        if (byTopic.isEmpty()) {
            return;
        }
        int turn = rotate++;
        List<ArrayDeque<Map.Entry<TopicPartition, Part>>> topics = new ArrayList<>(byTopic.values());
        Collections.rotate(topics, -Math.floorMod(turn, topics.size()));
        for (ArrayDeque<Map.Entry<TopicPartition, Part>> line : topics) {
            for (int i = Math.floorMod(turn, line.size()); i > 0; i--) {
                line.addLast(line.pollFirst());
            }
        }
        long bytes = 0;
        while (!topics.isEmpty()) {
            for (Iterator<ArrayDeque<Map.Entry<TopicPartition, Part>>> it = topics.iterator(); it.hasNext(); ) {
                if (items.size() >= maxPollRecords || (!items.isEmpty() && bytes >= maxPollBytes)) {
                    return;
                }
                Fetched f = next(it.next());
                if (f == null) {
                    it.remove();
                    continue;
                }
                items.add(f);
                bytes += f.heldBytes();
            }
        }
    }

    /**
     * The next offset of the first partition in {@code line} (one topic's partitions with read-ahead) that has one to hand
     * over now; a partition that has none leaves the line, its reader closed once it is drained. Null when none has.
     */
    private Fetched next(ArrayDeque<Map.Entry<TopicPartition, Part>> line) {
        while (!line.isEmpty()) {
            Map.Entry<TopicPartition, Part> e = line.peekFirst();
            Part p = e.getValue();
            Fetched f;
            try {
                f = p.reader.next();
            } catch (RuntimeException ex) {
                // the log itself cannot be read past here (a batch header that does not parse): nothing is skipped;
                // the partition is fetched again after a backoff, and readiness names it while it fails
                closeReader(p);
                failed(e.getKey(), p, "its log does not parse: " + ex);
                line.pollFirst();
                continue;
            }
            if (f != null) {
                p.position = f.offset() + 1;
                return f;
            }
            if (!p.reader.waiting()) {
                p.position = p.reader.position();
                closeReader(p);
            } // else its next batch's stream waits for its turn (StreamBudget): read on at a later poll
            line.pollFirst();
        }
        return null;
    }

    private void drop(Collection<TopicPartition> partitions) {
        for (TopicPartition tp : partitions) {
            Part p = parts.remove(tp);
            if (p != null) {
                closeReader(p);
            }
        }
    }

    /**
     * Drops what was read ahead of {@code p}; its open batch's decompression stream (native memory, for zstd) is freed and
     * its bytes given back to the budget, and it leaves the line if it waited there.
     */
    private static void closeReader(Part p) {
        if (p.reader != null) {
            p.reader.close();
            p.reader = null;
            p.response = null;
        }
    }

    private Part part(TopicPartition tp) {
        Part p = parts.get(tp);
        if (p == null) {
            if (!group.assignment().contains(tp)) {
                throw new IllegalStateException("partition " + tp + " is not assigned to this bridge");
            }
            p = new Part();
            parts.put(tp, p);
        }
        return p;
    }
}
