package io.queen.timers.bridge.fetch;

import java.util.ArrayDeque;
import java.util.HashMap;
import java.util.Map;
import org.apache.kafka.common.TopicPartition;

/**
 * Which partitions may hold a decompression stream open, and what the open streams hold together: each counted for what
 * its batch's codec declares ({@link Decompression.Declared#bytes()}) from before the stream opens until it closes.
 *
 * <p>Two rules. The open streams together hold at most {@code maxBytes} (bridge.decompression.max.bytes). And a command
 * topic holds at most one stream open: however many of one tenant's partitions stop part way into batches that declare
 * the most a codec may, they hold one stream between them, and the rest of the budget is the other topics'. A partition
 * whose batch's stream may not open now waits in line, oldest first, and is read on when its turn and the room come: a
 * waiting partition whose topic is free goes before any that came after it, so a large stream is not passed for ever by
 * small ones. A stream closes when its batch is read to its end, or when its partition is paused, sought or revoked.
 *
 * <p>PRICE: the partitions of one topic read their compressed batches one after another, not a few records of each in
 * turn: a producer's long batch delays its own topic's other partitions until it is read (never another topic's). When
 * more topics are in the middle of a batch than the budget holds streams for (three of the largest, eleven of Kafka's
 * default zstd, at the default), a topic waits for another's batch to end. Nothing is decompressed twice. Not thread-safe,
 * except {@link #heldBytes()}.
 */
final class StreamBudget {

    private final long maxBytes;
    private final Map<String, TopicPartition> openByTopic = new HashMap<>();
    private final ArrayDeque<TopicPartition> waiting = new ArrayDeque<>();
    /** Read by the metrics' thread too ({@link #heldBytes()}). */
    private volatile long held;
    private long openedBytes;

    /** @param maxBytes what the open streams may hold together; at least {@link Decompression#LARGEST_STREAM_BYTES} */
    StreamBudget(long maxBytes) {
        if (maxBytes < Decompression.LARGEST_STREAM_BYTES) {
            throw new IllegalArgumentException("a decompression budget of " + maxBytes + " bytes cannot hold the largest stream a"
                    + " batch may open (" + Decompression.LARGEST_STREAM_BYTES + ")");
        }
        this.maxBytes = maxBytes;
    }

    /** Whether {@code tp} may open a stream of {@code bytes} now; if not, it waits in line (once). */
    boolean take(TopicPartition tp, long bytes) {
        if (!openByTopic.containsKey(tp.topic()) && held + bytes <= maxBytes && noneAhead(tp)) {
            waiting.remove(tp);
            openByTopic.put(tp.topic(), tp);
            held += bytes;
            openedBytes += bytes;
            return true;
        }
        if (!waiting.contains(tp)) {
            waiting.addLast(tp);
        }
        return false;
    }

    /** The stream {@code tp} took {@code bytes} for is closed. */
    void give(TopicPartition tp, long bytes) {
        if (openByTopic.remove(tp.topic(), tp)) {
            held -= bytes;
        }
    }

    /** {@code tp} no longer waits: its reader is dropped (paused, sought, revoked, failed). */
    void forget(TopicPartition tp) {
        waiting.remove(tp);
    }

    /** What the open streams hold now, as counted. */
    long heldBytes() {
        return held;
    }

    long maxBytes() {
        return maxBytes;
    }

    /** What every stream ever opened was counted for: what their opening could allocate, for the tests that measure it. */
    long openedBytes() {
        return openedBytes;
    }

    /** No partition ahead of {@code tp} in line waits for room (rather than for its own topic's open stream). */
    private boolean noneAhead(TopicPartition tp) {
        for (TopicPartition w : waiting) {
            if (w.equals(tp)) {
                return true;
            }
            if (!openByTopic.containsKey(w.topic())) {
                return false;
            }
        }
        return true;
    }
}
