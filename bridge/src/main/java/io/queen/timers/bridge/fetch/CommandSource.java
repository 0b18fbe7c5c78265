package io.queen.timers.bridge.fetch;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.binder.kafka.KafkaClientMetrics;
import io.queen.timers.bridge.wire.RecordLimits;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
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
 * ({@link Fetched#heldBytes()}; the first record always, so a single large one is never stuck), partitions taken in turn from a rotating start so
 * that no topic's backlog goes first every time. An offset the reader does not read is handed over as
 * {@link Fetched.Unreadable} in its place, so the loop answers it like any record, in order, and no partition waits on
 * another's, except for a decompression stream: a compressed batch's stream opens only once what its codec declares fits
 * {@link StreamBudget} (bridge.decompression.max.bytes, one stream per topic), and until then its partition hands over
 * nothing and the others are read on. Not thread-safe, except {@link #wakeup()}.
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
        long end = -1;
        int failures;
        long retryAtNanos;
        String failing;
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
    private final Map<TopicPartition, Part> parts = new LinkedHashMap<>();
    private final Counter fetchErrors;
    private final KafkaClientMetrics groupMetrics;
    private int rotate;

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
        this.group = group;
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
     * resumed partitions, waiting at most {@code timeout} for the brokers when none is read ahead. Throws what the group's
     * consumer throws (no stored position yet, a fatal error), a {@link TopicAuthorizationException} when a fetch is
     * refused for it, and a {@link org.apache.kafka.common.errors.WakeupException} after {@link #wakeup()}.
     */
    public Polled poll(Duration timeout) {
        group.poll(Duration.ZERO);
        List<Fetched> items = new ArrayList<>();
        Map<TopicPartition, Long> outOfRange = new LinkedHashMap<>();
        drain(items);
        long deadline = System.nanoTime() + timeout.toNanos();
        while (items.isEmpty() && outOfRange.isEmpty()) {
            send();
            long left = Math.max(0, deadline - System.nanoTime());
            for (Fetcher.Result r : fetcher.poll(Duration.ofNanos(left))) {
                accept(r, outOfRange);
            }
            drain(items);
            if (deadline - System.nanoTime() <= 0) {
                break;
            }
        }
        send(); // read ahead while the caller applies, as Kafka's consumer does
        return new Polled(items, outOfRange);
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
     * Fetches for every resumed partition that has a position, none in flight and no backoff running, once nothing read
     * ahead is left to hand over. Why all at once: a broker answers one request per connection at a time, and holds a
     * fetch until one of its partitions has data (fetch.max.wait.ms). A fetch of only the partitions that had nothing
     * (sent while the others still held data) waits that long, and the others' next fetch waits behind it: with one idle
     * partition beside busy ones the bridge applied one fetch per long poll, about 1,500 commands/s at 2,000/s offered
     * (bench/results/2026-12-06/profile2000-9b5de4b.txt). One fetch of every partition returns as soon as any has data.
     * PRICE: the next fetch starts when the last partition's data is handed over, not while it is: one round trip per
     * batch on a bridge that is behind.
     */
    private void send() {
        Map<TopicPartition, Long> wanted = new LinkedHashMap<>();
        long now = System.nanoTime();
        for (Map.Entry<TopicPartition, Part> e : parts.entrySet()) {
            Part p = e.getValue();
            if (p.paused || p.position < 0) {
                continue;
            }
            if (p.reader != null) {
                return;
            }
            if (now - p.retryAtNanos >= 0 && !fetcher.inFlight(e.getKey())) {
                wanted.put(e.getKey(), p.position);
            }
        }
        if (!wanted.isEmpty()) {
            fetcher.send(wanted);
        }
    }

    private void accept(Fetcher.Result r, Map<TopicPartition, Long> outOfRange) {
        Part p = parts.get(r.tp());
        if (p == null || p.position != r.fetchOffset() || p.reader != null) {
            return; // revoked, or sought elsewhere while the fetch was out
        }
        if (r.error() == Errors.NONE) {
            p.failures = 0;
            p.failing = null;
            p.end = fetcher.isolation() == IsolationLevel.READ_COMMITTED && r.lastStable() >= 0
                    ? r.lastStable() : r.highWatermark();
            if (r.records().sizeInBytes() > 0) {
                p.reader = new PartitionReader(r.tp(), r.records(), p.position, fetcher.isolation(), r.aborted(),
                        decoder, checkCrcs, streams);
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
        p.retryAtNanos = System.nanoTime() + wait;
        if (p.failures == 1 || p.failures % 50 == 0) {
            LOG.warn("fetching {} at offset {} failed ({}), {} times in a row; fetching it again in {} ms", tp, p.position, why,
                    p.failures, Duration.ofNanos(wait).toMillis());
        }
    }

    /** Takes what was read ahead, partitions in turn from a start that moves on at every poll. */
    private void drain(List<Fetched> items) {
        if (parts.isEmpty()) {
            return;
        }
        List<Map.Entry<TopicPartition, Part>> order = new ArrayList<>(parts.entrySet());
        int start = Math.floorMod(rotate++, order.size());
        long bytes = 0;
        for (int i = 0; i < order.size() && items.size() < maxPollRecords && (items.isEmpty() || bytes < maxPollBytes); i++) {
            Map.Entry<TopicPartition, Part> e = order.get((start + i) % order.size());
            Part p = e.getValue();
            if (p.paused || p.reader == null) {
                continue;
            }
            while (items.size() < maxPollRecords && (items.isEmpty() || bytes < maxPollBytes)) {
                Fetched f;
                try {
                    f = p.reader.next();
                } catch (RuntimeException ex) {
                    // the log itself cannot be read past here (a batch header that does not parse): nothing is skipped;
                    // the partition is fetched again after a backoff, and readiness names it while it fails
                    closeReader(p);
                    failed(e.getKey(), p, "its log does not parse: " + ex);
                    break;
                }
                if (f == null) {
                    if (p.reader.waiting()) {
                        break; // its next batch's stream waits for its turn (StreamBudget): read on at a later poll
                    }
                    p.position = p.reader.position();
                    closeReader(p);
                    break;
                }
                items.add(f);
                p.position = f.offset() + 1;
                bytes += f.heldBytes();
            }
        }
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
