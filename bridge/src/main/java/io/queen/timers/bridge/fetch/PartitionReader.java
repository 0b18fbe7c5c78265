package io.queen.timers.bridge.fetch;

import io.queen.timers.bridge.wire.RecordLimits;
import io.queen.timers.core.text.Printable;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.util.HashSet;
import java.util.Iterator;
import java.util.List;
import java.util.Optional;
import java.util.PriorityQueue;
import java.util.Set;
import org.apache.kafka.common.IsolationLevel;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.message.FetchResponseData;
import org.apache.kafka.common.record.internal.DefaultRecordBatch;
import org.apache.kafka.common.record.internal.MemoryRecords;
import org.apache.kafka.common.record.internal.RecordBatch;
import org.apache.kafka.common.utils.internals.BufferSupplier;

/**
 * Reads the batches one fetch brought for one partition, in offset order from a position, and makes objects of a record
 * only once its key, value and headers are counted within {@link RecordLimits}, whatever the record declares.
 *
 * <p>Why it exists: Kafka's consumer allocates the body size a record declares before it reads it
 * ({@code DefaultRecord.readFrom}); inside a compressed batch a producer can declare up to 2 GiB in a few KB. And once a
 * record is read, Kafka makes objects of each of its headers, about 90 bytes of heap for 2 bytes of record. The JVM's
 * answer to either is an {@link OutOfMemoryError} on whichever thread meets the heap's edge, and with
 * {@code -XX:+ExitOnOutOfMemoryError} (the image's flag) the process exits, and exits again at the same offset after every
 * restart. Here each record is read from the batch's (decompressed) bytes by {@link RecordDecoder}: a body longer than
 * {@link RecordLimits#bodyMaxBytes()} is never read into memory, and a record beyond a limit is answered unreadable
 * before any of it is an object.
 *
 * <p>What is unreadable, exactly: a record beyond a limit whose length is honest (its fields fill it exactly), alone: the
 * next record of its batch is read as usual; a record whose body is longer than the longest a record within the limits
 * can hold, alone in an uncompressed batch (stepped over) and with every later offset of its producer batch in a
 * compressed one (the batch header names its last offset), because finding the next record would mean decompressing
 * what it declares; a record whose framing lies (a length its fields do not fill, a field past its end, an offset out of
 * order, a stream that ends early), with every later offset of its batch, since nothing after it can be placed; a batch
 * whose checksum fails, whole; a batch of the legacy formats (magic 0 and 1), whole; a compressed batch whose codec
 * declares more than the bridge decompresses with ({@link Decompression}: a zstd window or a snappy chunk beyond 8 MiB),
 * whole. Every other batch, before or after, of any producer, is read as usual.
 *
 * <p>A compressed batch's stream is opened only once what it will hold is read from its codec's header and admitted by the
 * {@link StreamBudget} its partitions share; until then this reader hands over nothing ({@link #next()} returns null
 * and {@link #waiting()} says why), and is asked again later.
 *
 * <p>PRICE: a readable record that follows, in the same compressed producer batch, a record longer than the body limit,
 * or one whose framing lies, is answered unreadable too: finding it would mean decompressing up to 2 GiB per such record,
 * a CPU cost a producer could buy with a few KB. A legacy batch is never read: no broker the bridge supports writes one
 * (Kafka has written every batch in format v2 since 3.0; only a log kept from before could hold one). Records below the
 * position inside a batch (after a seek into its middle) are decompressed again and dropped, as Kafka's consumer does.
 * Transaction markers and aborted transactions are handled as Kafka's consumer handles them under
 * {@code read_committed}. Not thread-safe.
 */
final class PartitionReader {

    /** Where a v2 batch's records start: after its 61-byte header. */
    private static final int RECORDS_OFFSET = 61;
    /** Where a batch's attributes are: their low 3 bits name its codec. */
    private static final int ATTRIBUTES_OFFSET = 21;

    private final TopicPartition tp;
    /** The fetch's bytes, from its first batch: where each batch's compressed records are read from. */
    private final ByteBuffer log;
    private final Iterator<? extends RecordBatch> batches;
    private final RecordDecoder decoder;
    private final boolean checkCrcs;
    private final StreamBudget streams;
    /** Aborted transactions of this fetch by first offset (read_committed); null under read_uncommitted. */
    private final PriorityQueue<FetchResponseData.AbortedTransaction> aborted;
    private final Set<Long> abortedProducers = new HashSet<>();
    /** Where the next batch the iterator yields starts in {@link #log}: batches lie end to end. */
    private int nextBatchAt;
    private RecordBatch batch;
    private RecordDecoder.Batch view;
    /** The open batch's compressed records, as {@link Decompression} reads them. */
    private byte[] data;
    private int dataAt;
    private int dataLength;
    /** What the open batch's codec declares: set while its stream waits for its turn, until the stream opens. */
    private Decompression.Declared pending;
    /** What the open stream was admitted for by {@link #streams}; 0 when none is open. */
    private long streamBytes;
    private boolean waiting;
    /** The open batch's records, decompressed as they are read; null between batches. */
    private InputStream records;
    private int recordsLeft;
    /** The last offset read in the open batch. */
    private long lastRead;
    /** The next offset to hand over. */
    private long next;
    /** Offsets [{@link #next}, unreadableEnd) are unreadable; the run's first offset and reason. */
    private long unreadableEnd = Long.MIN_VALUE;
    private long unreadableFirst;
    private String unreadableWhy;

    /**
     * How a source reads its partitions, the same for each of them.
     *
     * @param decoder reads each record within its limits; shared by the partitions of one source
     * @param streams admits each compressed batch's stream; shared by the partitions of one source
     */
    record Reading(IsolationLevel isolation, RecordDecoder decoder, boolean checkCrcs, StreamBudget streams) {}

    /**
     * @param records the partition's records of one fetch response
     * @param aborted the response's aborted transactions (null or empty when none)
     * @param from    the offset to read from (records below it are dropped)
     */
    PartitionReader(TopicPartition tp, MemoryRecords records, List<FetchResponseData.AbortedTransaction> aborted, long from, Reading reading) {
        this.tp = tp;
        this.log = records.buffer();
        this.nextBatchAt = log.position();
        this.batches = records.batches().iterator();
        this.next = from;
        this.decoder = reading.decoder();
        this.checkCrcs = reading.checkCrcs();
        this.streams = reading.streams();
        if (reading.isolation() == IsolationLevel.READ_COMMITTED) {
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
     * After {@link #next()} returned null: true when this fetch holds more, but the next batch's decompression stream waits
     * for its turn ({@link StreamBudget}); false when it holds no more.
     */
    boolean waiting() {
        return waiting;
    }

    /**
     * The next offset at or after the position, or null when this fetch holds no more or its next batch waits for its
     * stream ({@link #waiting()}). A batch whose header cannot be read at all (the log itself is broken) throws: its end
     * is unknown, so nothing after it can be placed.
     */
    Fetched next() {
        waiting = false;
        while (true) {
            if (next < unreadableEnd) {
                return new Fetched.Unreadable(tp, next++, unreadableFirst, unreadableEnd, unreadableWhy);
            }
            if (pending != null) {
                if (!openStream()) {
                    waiting = true;
                    return null;
                }
                continue;
            }
            if (records != null) {
                if (recordsLeft == 0) {
                    next = Math.max(next, batch.nextOffset()); // a compacted batch keeps its last offset
                    closeBatch();
                    continue;
                }
                RecordDecoder.Decoded d;
                try {
                    d = decoder.read(records, view, lastRead, next);
                } catch (IOException | RuntimeException e) {
                    unreadable(batch.nextOffset(), describe(e));
                    continue;
                }
                recordsLeft--;
                lastRead = d.offset();
                if (d instanceof RecordDecoder.Below) {
                    continue; // sought into the middle of this batch
                }
                next = d.offset() + 1;
                if (d instanceof RecordDecoder.Whole w) {
                    return new Fetched.Readable(w.record(), w.heldBytes());
                }
                RecordDecoder.OverLimit o = (RecordDecoder.OverLimit) d;
                return new Fetched.Unreadable(tp, o.offset(), o.offset(), o.offset() + 1, Printable.line(o.why()));
            }
            if (!batches.hasNext()) {
                return null;
            }
            batch = batches.next();
            int at = nextBatchAt;
            nextBatchAt += batch.sizeInBytes();
            if (batch.nextOffset() <= next) {
                batch = null;
                continue;
            }
            open(at);
        }
    }

    /** Sets up {@link #records} for {@link #batch}, which starts at {@code at} in the log, or skips or refuses it. */
    private void open(int at) {
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
        if (batch.magic() < RecordBatch.MAGIC_VALUE_V2 || !(batch instanceof DefaultRecordBatch v2)) {
            unreadable(batch.nextOffset(), "it is in a batch of the legacy format v" + batch.magic()
                    + ", which no Kafka broker the bridge supports writes, and which the bridge does not read");
            return;
        }
        if (aborted != null && batch.hasProducerId()) {
            // Kafka's consumer's rule: a transaction aborted in this fetch starts at or before the batch's last offset
            while (!aborted.isEmpty() && aborted.peek().firstOffset() <= batch.lastOffset()) {
                abortedProducers.add(aborted.poll().producerId());
            }
            if (batch.isControlBatch() && isAbortMarker(v2)) {
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
        Integer count = batch.countOrNull();
        if (count == null || count < 0) {
            unreadable(batch.nextOffset(), "its batch " + batch.baseOffset() + ".." + batch.lastOffset() + " declares "
                    + count + " records");
            return;
        }
        try {
            view = view(v2);
            recordsLeft = count;
            lastRead = batch.baseOffset() - 1;
            if (!view.compressed()) {
                records = v2.recordInputStream(BufferSupplier.NO_CACHING); // the batch's own bytes: no buffer
                return;
            }
            compressedRecords(at, batch.sizeInBytes());
            pending = Decompression.declare(log.getShort(at + ATTRIBUTES_OFFSET) & 0x07, data, dataAt, dataLength);
        } catch (Decompression.Refused e) {
            unreadable(batch.nextOffset(), "its batch " + batch.baseOffset() + ".." + batch.lastOffset() + " is not decompressed: "
                    + e.getMessage());
        } catch (RuntimeException e) {
            unreadable(batch.nextOffset(), describe(e));
        }
    }

    /**
     * The compressed records of the batch at {@code at}: in place in the fetch's heap buffer, where a fetch response holds
     * them (records in a direct buffer, which no fetch response is, are copied: at most the batch's size, already held).
     */
    private void compressedRecords(int at, int size) {
        dataLength = size - RECORDS_OFFSET;
        if (dataLength < 0) {
            throw new IllegalStateException("its batch of " + size + " bytes is shorter than a batch's header");
        }
        if (log.hasArray()) {
            data = log.array();
            dataAt = log.arrayOffset() + at + RECORDS_OFFSET;
        } else {
            data = new byte[dataLength];
            log.get(at + RECORDS_OFFSET, data);
            dataAt = 0;
        }
    }

    /** Opens the pending batch's stream if {@link #streams} admits it now; false when it waits. */
    private boolean openStream() {
        if (!streams.take(tp, pending.bytes())) {
            return false;
        }
        streamBytes = pending.bytes();
        Decompression.Declared declared = pending;
        pending = null;
        try {
            records = Decompression.open((DefaultRecordBatch) batch, declared, data, dataAt, dataLength);
        } catch (IOException | RuntimeException e) {
            unreadable(batch.nextOffset(), describe(e));
        }
        return true;
    }

    private RecordDecoder.Batch view(DefaultRecordBatch b) {
        int epoch = b.partitionLeaderEpoch();
        return new RecordDecoder.Batch(tp, b.baseOffset(), b.lastOffset(),
                new RecordDecoder.Timestamps(b.timestampType(), b.baseTimestamp(), b.maxTimestamp()),
                epoch == RecordBatch.NO_PARTITION_LEADER_EPOCH ? Optional.empty() : Optional.of(epoch), b.isCompressed());
    }

    /**
     * Frees the open batch's stream, if any (a zstd stream's native memory is freed), gives its bytes back to
     * {@link #streams}, and leaves the line if it waited there.
     */
    void close() {
        closeBatch();
        streams.forget(tp);
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
            try {
                records.close(); // frees a zstd stream's native memory now, not at a collection
            } catch (IOException e) {
                // an in-memory stream: nothing to do about it
            }
            records = null;
        }
        if (streamBytes > 0) {
            streams.give(tp, streamBytes);
            streamBytes = 0;
        }
        pending = null;
        data = null;
        batch = null;
        view = null;
    }

    private static String describe(Exception e) {
        if (e instanceof RecordDecoder.Unframed) {
            return Printable.line(e.getMessage());
        }
        return Printable.line(e.getClass().getSimpleName() + ": " + e.getMessage());
    }

    /**
     * Whether a control batch (written by the broker: uncompressed, one record) is a transaction's abort marker. Its
     * record's key is a version and a type, two int16, and type 0 is an abort (Kafka's {@code ControlRecordType}). A
     * marker that does not parse throws: which transactions were aborted cannot be known past it.
     */
    private boolean isAbortMarker(DefaultRecordBatch control) {
        if (control.isCompressed()) {
            // outside the stream budget: no broker compresses the markers it writes, and a producer cannot write one
            throw new IllegalStateException("the control batch at offset " + control.baseOffset() + " of " + tp + " is compressed");
        }
        try (InputStream in = control.recordInputStream(BufferSupplier.NO_CACHING)) {
            if (control.countOrNull() == null || control.countOrNull() < 1) {
                return false;
            }
            RecordDecoder.Decoded d = decoder.read(in, view(control), control.baseOffset() - 1, Long.MIN_VALUE);
            byte[] key = d instanceof RecordDecoder.Whole w ? w.record().key() : null;
            if (key == null || key.length < 4) {
                throw new IllegalStateException("the control record at offset " + d.offset() + " of " + tp + " has no type");
            }
            return ByteBuffer.wrap(key).getShort(2) == 0;
        } catch (IOException e) {
            throw new UncheckedIOException("the control batch at offset " + control.baseOffset() + " of " + tp + " does not parse", e);
        }
    }
}
