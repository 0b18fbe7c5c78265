package io.queen.timers.bridge.fetch;

import io.queen.timers.core.text.Printable;
import java.nio.ByteBuffer;
import java.util.HashSet;
import java.util.Iterator;
import java.util.List;
import java.util.Optional;
import java.util.PriorityQueue;
import java.util.Set;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.common.IsolationLevel;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.apache.kafka.common.message.FetchResponseData;
import org.apache.kafka.common.record.TimestampType;
import org.apache.kafka.common.record.internal.ControlRecordType;
import org.apache.kafka.common.record.internal.Record;
import org.apache.kafka.common.record.internal.RecordBatch;
import org.apache.kafka.common.record.internal.Records;
import org.apache.kafka.common.utils.internals.BufferSupplier;
import org.apache.kafka.common.utils.internals.CloseableIterator;

/**
 * Reads the batches one fetch brought for one partition, in offset order from a position, and never holds more of a
 * record than {@code recordMaxBytes} of decompressed bytes, whatever the record declares.
 *
 * <p>Why it exists: Kafka's consumer allocates the body size a record declares before it reads it
 * ({@code DefaultRecord.readFrom}); inside a compressed batch a producer can declare up to 2 GiB in a few KB. The JVM's
 * answer to that allocation is an {@link OutOfMemoryError} on whichever thread meets the heap's edge, and with
 * {@code -XX:+ExitOnOutOfMemoryError} (the image's flag) the process exits, and exits again at the same offset after every
 * restart. Here a compressed batch is read with Kafka's bounded iterator: a record that declares more than
 * {@code recordMaxBytes} is refused before any allocation, and one that declares more than its stream holds is refused
 * after at most {@code recordMaxBytes}. An uncompressed batch is read in place: its records are slices of the fetched
 * bytes, which the broker's fetch limits already bound.
 *
 * <p>What is unreadable, exactly: the refused record and every later offset of its producer batch (the batch header names
 * its last offset), because a compressed batch is one stream and nothing after a record that lies about its length can be
 * found; a batch whose checksum fails, whole; a compressed batch of the legacy formats (magic 0 and 1), whole, because
 * Kafka's reader of those allocates what the inner record declares. Every other batch, before or after, of any producer,
 * is read as usual.
 *
 * <p>PRICE: a readable record that follows, in the same producer batch, a record larger than {@code recordMaxBytes} is
 * answered unreadable too: finding it would mean decompressing up to 2 GiB per oversized record, a CPU cost a producer
 * could buy with a few KB. Records below the position inside a batch (after a seek into its middle) are decompressed
 * again and dropped, as Kafka's consumer does. Transaction markers and aborted transactions are handled as Kafka's
 * consumer handles them under {@code read_committed}. Not thread-safe.
 */
final class PartitionReader {

    private final TopicPartition tp;
    private final Iterator<? extends RecordBatch> batches;
    private final int recordMaxBytes;
    private final boolean checkCrcs;
    private final BufferSupplier buffers;
    /** Aborted transactions of this fetch by first offset (read_committed); null under read_uncommitted. */
    private final PriorityQueue<FetchResponseData.AbortedTransaction> aborted;
    private final Set<Long> abortedProducers = new HashSet<>();
    private RecordBatch batch;
    private CloseableIterator<Record> records;
    /** The next offset to hand over. */
    private long next;
    /** Offsets [{@link #next}, unreadableEnd) are unreadable; the run's first offset and reason. */
    private long unreadableEnd = Long.MIN_VALUE;
    private long unreadableFirst;
    private String unreadableWhy;

    /**
     * @param records        the partition's records of one fetch response
     * @param from           the offset to read from (records below it are dropped)
     * @param aborted        the response's aborted transactions (null or empty when none)
     * @param recordMaxBytes the largest record body read from a compressed batch
     */
    PartitionReader(TopicPartition tp, Records records, long from, IsolationLevel isolation,
                    List<FetchResponseData.AbortedTransaction> aborted, int recordMaxBytes, boolean checkCrcs,
                    BufferSupplier buffers) {
        this.tp = tp;
        this.batches = records.batches().iterator();
        this.next = from;
        this.recordMaxBytes = recordMaxBytes;
        this.checkCrcs = checkCrcs;
        this.buffers = buffers;
        if (isolation == IsolationLevel.READ_COMMITTED) {
            this.aborted = new PriorityQueue<>((a, b) -> Long.compare(a.firstOffset(), b.firstOffset()));
            if (aborted != null) {
                this.aborted.addAll(aborted);
            }
        } else {
            this.aborted = null;
        }
    }

    /** The offset the next fetch of this partition starts at, once this reader is drained. */
    long position() {
        return next;
    }

    /**
     * The next offset at or after the position, or null when this fetch holds no more. A batch whose header cannot be
     * read at all (the log itself is broken) throws: its end is unknown, so nothing after it can be placed.
     */
    Fetched next() {
        while (true) {
            if (next < unreadableEnd) {
                return new Fetched.Unreadable(tp, next++, unreadableFirst, unreadableWhy);
            }
            if (records != null) {
                Record r;
                try {
                    if (!records.hasNext()) {
                        next = Math.max(next, batch.nextOffset()); // a compacted batch keeps its last offset
                        closeBatch();
                        continue;
                    }
                    r = records.next();
                } catch (RuntimeException e) {
                    unreadable(batch.nextOffset(), describe(e));
                    continue;
                }
                if (r.offset() < next) {
                    continue; // sought into the middle of this batch
                }
                next = r.offset() + 1;
                return new Fetched.Readable(consumerRecord(r));
            }
            if (!batches.hasNext()) {
                return null;
            }
            batch = batches.next();
            if (batch.nextOffset() <= next) {
                batch = null;
                continue;
            }
            open();
        }
    }

    /** Sets up {@link #records} for {@link #batch}, or skips or refuses the batch. */
    private void open() {
        next = Math.max(next, batch.baseOffset()); // offsets between batches do not exist (compacted, or markers skipped)
        if (checkCrcs) {
            try {
                batch.ensureValid();
            } catch (RuntimeException e) {
                unreadable(batch.nextOffset(), "its batch " + batch.baseOffset() + ".." + batch.lastOffset()
                        + " fails its checksum (" + describe(e) + ")");
                return;
            }
        }
        if (aborted != null && batch.hasProducerId()) {
            // Kafka's consumer's rule: a transaction aborted in this fetch starts at or before the batch's last offset
            while (!aborted.isEmpty() && aborted.peek().firstOffset() <= batch.lastOffset()) {
                abortedProducers.add(aborted.poll().producerId());
            }
            if (batch.isControlBatch() && isAbortMarker(batch)) {
                abortedProducers.remove(batch.producerId());
            } else if (batch.isTransactional() && abortedProducers.contains(batch.producerId())) {
                skipBatch(); // a command of an aborted transaction never happened
                return;
            }
        }
        if (batch.isControlBatch()) {
            skipBatch(); // transaction markers are not commands
            return;
        }
        if (batch.isCompressed() && batch.magic() < RecordBatch.MAGIC_VALUE_V2) {
            unreadable(batch.nextOffset(), "it is in a compressed batch of the legacy format v" + batch.magic()
                    + ", whose records the bridge does not decompress");
            return;
        }
        try {
            records = batch.isCompressed() ? batch.streamingIterator(buffers, recordMaxBytes) : batch.streamingIterator(buffers);
        } catch (RuntimeException e) {
            unreadable(batch.nextOffset(), describe(e));
        }
    }

    /** Offsets from the position to {@code end} (exclusive) are unreadable for {@code why}. */
    private void unreadable(long end, String why) {
        unreadableFirst = next;
        unreadableEnd = end;
        unreadableWhy = why;
        closeBatch();
    }

    private void skipBatch() {
        next = Math.max(next, batch.nextOffset());
        batch = null;
    }

    private void closeBatch() {
        if (records != null) {
            records.close();
            records = null;
        }
        batch = null;
    }

    private String describe(RuntimeException e) {
        return Printable.line(e.getClass().getSimpleName() + ": " + e.getMessage()) + " (records at most "
                + recordMaxBytes + " bytes are read from a compressed batch)";
    }

    private static boolean isAbortMarker(RecordBatch control) {
        Iterator<Record> it = control.iterator(); // written by the broker: uncompressed, one small record
        if (!it.hasNext()) {
            return false;
        }
        return ControlRecordType.parse(it.next().key()) == ControlRecordType.ABORT;
    }

    private ConsumerRecord<byte[], byte[]> consumerRecord(Record r) {
        byte[] key = r.hasKey() ? bytes(r.key()) : null;
        byte[] value = r.hasValue() ? bytes(r.value()) : null;
        TimestampType type = batch.timestampType();
        int epoch = batch.partitionLeaderEpoch();
        return new ConsumerRecord<>(tp.topic(), tp.partition(), r.offset(), r.timestamp(), type,
                key == null ? -1 : key.length, value == null ? -1 : value.length, key, value,
                new RecordHeaders(r.headers()), epoch == RecordBatch.NO_PARTITION_LEADER_EPOCH ? Optional.empty() : Optional.of(epoch));
    }

    private static byte[] bytes(ByteBuffer b) {
        byte[] out = new byte[b.remaining()];
        b.duplicate().get(out);
        return out;
    }
}
