package io.queen.timers.bridge.fetch;

import io.queen.timers.bridge.wire.RecordLimits;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.Optional;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.header.internals.RecordHeader;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.apache.kafka.common.record.TimestampType;

/**
 * Reads the records of one v2 batch from the batch's bytes (decompressed), field by field as Kafka's protocol lays them
 * out (length, attributes, timestamp delta, offset delta, key, value, header count, then each header's name and value),
 * and counts each record's key, value and headers against {@link RecordLimits} on the wire form, before any object of it
 * exists.
 *
 * <p>Why not Kafka's own decoder ({@code DefaultRecord}): it makes objects of every header (a header and two buffer
 * slices, about 90 bytes of heap for 2 bytes of record) before anything can count them, so 540,000 empty headers, 1.08 MB
 * of record and a few KB of zstd, became ~50 MB of heap, and seven of them in one poll exited the bridge. Here a record's
 * body is copied into one buffer, {@link RecordLimits#bodyMaxBytes()} long and kept for the reader's life, and walked
 * there without allocating: every length checked against the body, the headers counted and summed. Only a record within
 * every limit becomes objects.
 *
 * <p>What a record is answered: within every limit, {@link Whole}; an honest length (its fields fill it exactly) but
 * beyond a limit, {@link OverLimit} for its own offset: its end is known, so the next record is read as usual. A body
 * longer than {@link RecordLimits#bodyMaxBytes()}: in an uncompressed batch {@link OverLimit} too (its bytes are in memory
 * already, and are stepped over); in a compressed batch the reader throws {@link Unframed}, since its end could only be
 * found by decompressing what it declares (up to 2 GiB, for a few KB of zstd). A length its fields do not fill exactly, a
 * field longer than what is left of the body, an offset out of order or past the batch, a stream that ends early: also
 * {@link Unframed}, since nothing after it in the batch can be placed.
 *
 * <p>PRICE: the body buffer is heap held for the life of the process (1,118,912 bytes at the defaults), and every record
 * is copied twice (stream to buffer, buffer to its key, value and headers). Not thread-safe: one per {@link CommandSource}.
 */
final class RecordDecoder {

    /** What of its batch a record's fields are relative to; {@code lastOffset} bounds its offsets. */
    record Batch(TopicPartition tp, long baseOffset, long lastOffset, Timestamps timestamps, Optional<Integer> leaderEpoch,
                 boolean compressed) {}

    /** A batch's timestamps: its type, the base a record's delta counts from, and the batch's largest. */
    record Timestamps(TimestampType type, long base, long max) {
        /** A record's timestamp from its delta: the broker's append time for the whole batch, else base + delta. */
        long of(long delta) {
            return type == TimestampType.LOG_APPEND_TIME ? max : base + delta;
        }
    }

    /** One record as read. */
    sealed interface Decoded {
        long offset();
    }

    /** A record within every limit, and the heap it holds ({@link RecordLimits#heldBytes}). */
    record Whole(ConsumerRecord<byte[], byte[]> record, long heldBytes) implements Decoded {
        @Override
        public long offset() {
            return record.offset();
        }
    }

    /** A record whose end is known but that is beyond a limit: nothing of it was made an object. */
    record OverLimit(long offset, String why) implements Decoded {}

    /** A record below the position the caller reads from: read, checked, not made objects. */
    record Below(long offset) implements Decoded {}

    /** The batch's framing is lost at this record: nothing after it in the batch can be placed. */
    static final class Unframed extends IOException {
        Unframed(String message) {
            super(message);
        }
    }

    /** Attributes, then a timestamp delta and an offset delta at their longest as varints: what locates a record. */
    private static final int PREFIX_MAX_BYTES = 1 + 10 + 5;

    private final RecordLimits limits;
    private final byte[] body;
    /** The walk's place in {@link #body} and the end of the record there. */
    private int pos;
    private int end;

    RecordDecoder(RecordLimits limits) {
        this.limits = limits;
        this.body = new byte[Math.max(PREFIX_MAX_BYTES, limits.bodyMaxBytes())];
    }

    RecordLimits limits() {
        return limits;
    }

    /**
     * The next record of {@code in}, the records stream of batch {@code b}.
     *
     * @param after the last offset read in this batch (its base offset - 1 before the first): a record's offset must be
     *              above it
     * @param from  records below this offset are answered {@link Below}
     */
    Decoded read(InputStream in, Batch b, long after, long from) throws IOException {
        long length = zigzag(readRawVarint(in));
        if (length < 0) {
            throw new Unframed("a record declares a negative length (" + length + ")");
        }
        if (length > limits.bodyMaxBytes()) {
            if (b.compressed()) {
                throw new Unframed("a record declares " + length + " bytes, more than the " + limits.bodyMaxBytes()
                        + " a record within every limit can hold; in a compressed batch the records after it could only be found"
                        + " by decompressing it");
            }
            int prefix = (int) Math.min(length, PREFIX_MAX_BYTES);
            fill(in, prefix);
            pos++; // attributes: no bit of them is for a record (all of them are the batch's)
            readVarlong();
            long offset = offset(b, after, readVarint());
            skip(in, length - prefix);
            if (offset < from) {
                return new Below(offset);
            }
            return new OverLimit(offset, "it declares " + length + " bytes, more than the " + limits.bodyMaxBytes()
                    + " a record within every limit can hold");
        }
        fill(in, (int) length);
        if (end == 0) {
            throw new Unframed("a record declares no bytes");
        }
        pos++; // attributes
        long timestampDelta = readVarlong();
        long offset = offset(b, after, readVarint());
        int keyLength = readLength("key");
        int keyAt = pos;
        pos += Math.max(0, keyLength);
        int valueLength = readLength("value");
        int valueAt = pos;
        pos += Math.max(0, valueLength);
        int count = readVarint();
        // a header takes at least 2 bytes (two lengths): a count the rest of the body cannot hold is a lie, found here
        if (count < 0 || count > (end - pos) / 2) {
            throw new Unframed("a record at offset " + offset + " declares " + count + " headers in " + (end - pos) + " bytes");
        }
        int headersAt = pos;
        long nameBytes = 0;
        long valueBytes = 0;
        for (int i = 0; i < count; i++) {
            int name = readVarint();
            if (name < 0 || name > end - pos) {
                throw new Unframed("a header of the record at offset " + offset + " declares a name of " + name + " bytes in "
                        + (end - pos));
            }
            pos += name;
            nameBytes += name;
            int value = readLength("header value");
            pos += Math.max(0, value);
            valueBytes += Math.max(0, value);
        }
        if (pos != end) {
            throw new Unframed("a record at offset " + offset + " declares " + length + " bytes but its fields end after " + pos);
        }
        if (offset < from) {
            return new Below(offset);
        }
        if (keyLength > RecordLimits.KEY_MAX_BYTES) {
            return new OverLimit(offset, "its key is " + keyLength + " bytes, more than the " + RecordLimits.KEY_MAX_BYTES
                    + " a command's key can need");
        }
        if (count > limits.headersMaxCount()) {
            return new OverLimit(offset, "it has " + count + " headers, more than " + RecordLimits.HEADERS_MAX_COUNT + " ("
                    + limits.headersMaxCount() + ")");
        }
        if (nameBytes + valueBytes > limits.headersMaxBytes()) {
            return new OverLimit(offset, "its " + count + " headers hold " + (nameBytes + valueBytes) + " bytes, more than "
                    + RecordLimits.HEADERS_MAX_BYTES + " (" + limits.headersMaxBytes() + ")");
        }
        // within every limit: now, and only now, its objects
        Header[] headers = new Header[count];
        pos = headersAt;
        for (int i = 0; i < count; i++) {
            int name = readVarint();
            String key = new String(body, pos, name, StandardCharsets.UTF_8);
            pos += name;
            int value = readVarint();
            headers[i] = new RecordHeader(key, value < 0 ? null : Arrays.copyOfRange(body, pos, pos + value));
            pos += Math.max(0, value);
        }
        long timestamp = b.timestamps().of(timestampDelta);
        ConsumerRecord<byte[], byte[]> record = new ConsumerRecord<>(b.tp().topic(), b.tp().partition(), offset, timestamp,
                b.timestamps().type(), keyLength, valueLength, copy(keyAt, keyLength), copy(valueAt, valueLength),
                new RecordHeaders(headers), b.leaderEpoch());
        return new Whole(record, RecordLimits.heldBytes(keyLength, valueLength, count, nameBytes, valueBytes));
    }

    /** The record's offset from its delta: above the last one read, within the batch. */
    private static long offset(Batch b, long after, int delta) throws Unframed {
        long offset = b.baseOffset() + delta;
        if (delta < 0 || offset <= after || offset > b.lastOffset()) {
            throw new Unframed("a record's offset delta " + delta + " is not after offset " + after + " within the batch "
                    + b.baseOffset() + ".." + b.lastOffset());
        }
        return offset;
    }

    /** A key's or value's length: -1 (null) up to what is left of the body. */
    private int readLength(String what) throws Unframed {
        int n = readVarint();
        if (n < -1 || n > end - pos) {
            throw new Unframed("a record declares a " + what + " of " + n + " bytes where " + (end - pos) + " are left of it");
        }
        return n;
    }

    private byte[] copy(int at, int length) {
        return length < 0 ? null : Arrays.copyOfRange(body, at, at + length);
    }

    /** Reads {@code n} bytes of {@code in} into the body buffer, to walk them. */
    private void fill(InputStream in, int n) throws IOException {
        int read = 0;
        while (read < n) {
            int r = in.read(body, read, n - read);
            if (r < 0) {
                throw new Unframed("the batch's records end " + (n - read) + " bytes inside a record");
            }
            read += r;
        }
        pos = 0;
        end = n;
    }

    /** Steps over {@code n} bytes of {@code in}, through the body buffer. */
    private void skip(InputStream in, long n) throws IOException {
        for (long left = n; left > 0; ) {
            int r = in.read(body, 0, (int) Math.min(left, body.length));
            if (r < 0) {
                throw new Unframed("the batch's records end " + left + " bytes inside a record");
            }
            left -= r;
        }
    }

    // Kafka's varints: base 128, least significant group first, zigzag-encoded; an int takes at most 5 bytes, a long 10.

    private static long readRawVarint(InputStream in) throws IOException {
        long raw = 0;
        for (int shift = 0; shift < 35; shift += 7) {
            int b = in.read();
            if (b < 0) {
                throw new Unframed("the batch's records end inside a record's length");
            }
            raw |= (long) (b & 0x7F) << shift;
            if ((b & 0x80) == 0) {
                return raw & 0xFFFFFFFFL;
            }
        }
        throw new Unframed("a record's length is a varint longer than 5 bytes");
    }

    private static long zigzag(long raw) {
        int v = (int) raw;
        return (v >>> 1) ^ -(v & 1);
    }

    private int readVarint() throws Unframed {
        long raw = 0;
        for (int shift = 0; shift < 35; shift += 7) {
            if (pos >= end) {
                throw new Unframed("a record ends inside a varint");
            }
            int b = body[pos++] & 0xFF;
            raw |= (long) (b & 0x7F) << shift;
            if ((b & 0x80) == 0) {
                return (int) zigzag(raw);
            }
        }
        throw new Unframed("a record holds a varint longer than 5 bytes");
    }

    private long readVarlong() throws Unframed {
        long raw = 0;
        for (int shift = 0; shift < 70; shift += 7) {
            if (pos >= end) {
                throw new Unframed("a record ends inside a varint");
            }
            int b = body[pos++] & 0xFF;
            raw |= (long) (b & 0x7F) << shift;
            if ((b & 0x80) == 0) {
                return (raw >>> 1) ^ -(raw & 1);
            }
        }
        throw new Unframed("a record holds a varlong longer than 10 bytes");
    }
}
