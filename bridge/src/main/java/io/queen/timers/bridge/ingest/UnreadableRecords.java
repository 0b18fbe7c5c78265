package io.queen.timers.bridge.ingest;

import java.time.Duration;
import java.util.List;
import java.util.function.Supplier;
import org.apache.kafka.clients.consumer.Consumer;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.common.InvalidRecordException;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.CorruptRecordException;

/**
 * Finds the records the Kafka client itself cannot hand over, so that each gets a verdict instead of stopping the bridge.
 *
 * <p>Why it exists: the client decodes a record before any check of ours runs, and it allocates the body size the record
 * declares ({@code DefaultRecord.readFrom}). A producer can declare hundreds of MB (up to 2 GiB) in a few KB of zstd: the
 * allocation fails with {@link OutOfMemoryError} inside {@code poll}, whatever the heap, and every later poll meets the same
 * record. No setting of the client bounds it (its fetch limits count compressed bytes).
 *
 * <p>How: a probe consumer of its own (no group, {@code max.poll.records=1}) reads a partition one record per poll from the
 * stored offset, so the records before the unreadable one are handed over and answered as usual, and the poll that fails
 * names the first unreadable offset {@code O}. The client reads a compressed producer batch as one stream, so every offset
 * after {@code O} in the same batch is unreadable too, and seeking into it fails the same way: {@link #endOfRun} finds the
 * first readable offset after {@code O} by exponential then binary search, one failed allocation per probe (log₂ of the
 * batch's records).
 *
 * <p>PRICE: the offsets {@code O..end-1} are answered {@code rejected}/{@code unreadable_record} one verdict each, without
 * being read: the rest of the producer batch that holds the unreadable record (a batch is one producer's, so its trouble
 * stays its own) and, where another readable batch lies between two unreadable ones inside one search step, that batch too.
 * A failed allocation costs one full collection of the bridge's heap; a batch of n records after the unreadable one costs
 * about 2·log₂ n of them. Reading one record per poll is slower than the bridge's own polls; it lasts for at most
 * {@code scanRecords} records per partition, then the bridge's consumer goes on.
 */
final class UnreadableRecords {

    /** What a probe of one offset found. */
    enum Probe { READABLE, UNREADABLE }

    /** A run of offsets the client cannot read: {@code first} inclusive, {@code end} exclusive; {@code why} one line. */
    record Run(long first, long end, String why) {}

    private final Supplier<Consumer<byte[], byte[]>> probes;
    private final Duration pollTimeout;

    /**
     * @param probes      makes a probe consumer: the bridge's Kafka settings without a group, max.poll.records 1
     * @param pollTimeout how long one probe waits for a fetch to come back
     */
    UnreadableRecords(Supplier<Consumer<byte[], byte[]>> probes, Duration pollTimeout) {
        this.probes = probes;
        this.pollTimeout = pollTimeout;
    }

    /**
     * True when {@code t}, thrown by {@code poll}, is the client failing to decode a record: the allocation of a declared size
     * ({@link OutOfMemoryError}), a record or batch that does not parse, or the client refusing to go on past such a record
     * ("If needed, please seek past the record"). Authorization, fencing and the other fatal errors are not.
     */
    static boolean isUnreadable(Throwable t) {
        if (t instanceof OutOfMemoryError) {
            return true;
        }
        if (!(t instanceof KafkaException)) {
            return false;
        }
        for (Throwable c = t; c != null; c = c.getCause() == c ? null : c.getCause()) {
            if (c instanceof InvalidRecordException || c instanceof CorruptRecordException || c instanceof OutOfMemoryError) {
                return true;
            }
            if (c instanceof KafkaException && String.valueOf(c.getMessage()).contains("seek past the record")) {
                return true;
            }
        }
        return false;
    }

    /** A probe consumer, closed with this scan. Not thread-safe. */
    Scan scan(TopicPartition tp) {
        return new Scan(tp);
    }

    final class Scan implements AutoCloseable {
        private final TopicPartition tp;
        private Consumer<byte[], byte[]> probe;
        /** Where the probe reads next, as far as this scan knows; null after a fresh probe (none yet). */
        private Long at;

        private Scan(TopicPartition tp) {
            this.tp = tp;
            this.probe = probes.get();
            probe.assign(List.of(tp));
        }

        /** The partition's end (the last stable offset under read_committed). */
        long end() {
            return probe.endOffsets(List.of(tp), Duration.ofSeconds(10)).get(tp);
        }

        /**
         * The next record at or after {@code from}; null when none came within the poll timeout; throws what the client threw
         * when it cannot read the record there.
         */
        ConsumerRecord<byte[], byte[]> next(long from) {
            if (at == null || at != from) {
                probe.seek(tp, from); // a seek to where the probe already is would drop nothing, but costs a lookup
            }
            at = null;
            ConsumerRecords<byte[], byte[]> got = probe.poll(pollTimeout);
            at = probe.position(tp);
            return got.isEmpty() ? null : got.records(tp).get(0);
        }

        /** The offset the probe would read next (past control records and aborted transactions too). */
        long position() {
            return at != null ? at : probe.position(tp);
        }

        /**
         * The first offset after {@code first} (unreadable) that the client can read again, at most {@code end}: exponential
         * steps from {@code first}, then a binary search inside the last step.
         */
        long endOfRun(long first, long end) {
            long bad = first;
            long step = 1;
            long good = Math.min(first + 1, end);
            while (good < end && probe(good) == Probe.UNREADABLE) {
                bad = good;
                step *= 2;
                good = Math.min(first + step, end);
            }
            while (good - bad > 1) {
                long mid = bad + (good - bad) / 2;
                if (probe(mid) == Probe.UNREADABLE) {
                    bad = mid;
                } else {
                    good = mid;
                }
            }
            return good;
        }

        /** Seek to {@code offset} and read one record (or nothing: past the end, or no answer in time, both counted readable). */
        Probe probe(long offset) {
            try {
                next(offset);
                return Probe.READABLE;
            } catch (RuntimeException | OutOfMemoryError e) {
                if (!isUnreadable(e)) {
                    throw e;
                }
                fresh();
                return Probe.UNREADABLE;
            }
        }

        /**
         * A new probe consumer: after an {@link Error} inside the client its buffered fetch is left mid-record, and a later
         * seek to the same offset would meet it again instead of fetching.
         */
        void fresh() {
            probe.close();
            probe = probes.get();
            probe.assign(List.of(tp));
            at = null;
        }

        @Override
        public void close() {
            probe.close();
        }
    }
}
