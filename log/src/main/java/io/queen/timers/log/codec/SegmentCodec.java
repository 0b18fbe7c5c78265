package io.queen.timers.log.codec;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.UUID;

/**
 * Packs frames into a Queen segment and back (docs/formats.md#log-segment).
 *
 * <pre>
 * frame, all integers little-endian:
 *   u32  body_len        bytes after this field
 *   u8   flags           1 = trace id, 2 = producer sub, 4 = encrypted payload
 *   16   message id      UUID bytes, most significant first
 *   [16  trace id]       if flag 1
 *   u16  txn_len, txn    UTF-8
 *   [u16 sub_len, sub]   UTF-8, if flag 2
 *   ...  payload         the rest of the body
 * </pre>
 *
 * A segment is its frames back to back, compressed as one zstd stream by {@link Compression} (level
 * {@value Compression#LEVEL}, one frame, content size in the header, no checksum).
 * Compressing the whole segment, not each frame, is what buys the ratio: 200-byte JSON payloads
 * share most of their bytes with their neighbours. The price is that reading one frame
 * decompresses its whole segment.
 */
public final class SegmentCodec {

    /** Largest txn or producer sub in UTF-8 bytes: the u16 length field. */
    public static final int MAX_STRING_BYTES = 0xFFFF;
    /**
     * Largest decompressed segment this codec packs or unpacks. A guard, not a format rule: it keeps
     * a corrupt or hostile size field from allocating the heap away. The sweeper's fires are
     * bounded far below it (8 MiB by default); a segment above it is refused with a CodecException.
     */
    public static final int MAX_RAW_BYTES = 256 << 20;

    static final int FLAG_TRACE = 1;
    static final int FLAG_SUB = 2;
    static final int FLAG_ENCRYPTED = 4;
    private static final int KNOWN_FLAGS = FLAG_TRACE | FLAG_SUB | FLAG_ENCRYPTED;

    private SegmentCodec() {}

    /** Packs one segment: frames in order, one zstd stream, one hash per frame. */
    public static PackedSegment pack(List<Frame> frames) {
        int count = frames.size();
        if (count == 0) {
            throw new CodecException("a segment holds at least one frame");
        }
        byte[][] txns = new byte[count][];
        byte[][] subs = new byte[count][];
        long raw = 0;
        for (int i = 0; i < count; i++) {
            Frame f = frames.get(i);
            txns[i] = Utf8.encode(f.txn(), "txn of frame " + i);
            checkLength(txns[i], "txn", i);
            if (f.producerSub() != null) {
                subs[i] = Utf8.encode(f.producerSub(), "producer sub of frame " + i);
                checkLength(subs[i], "producer sub", i);
            }
            raw += 4L + bodyLength(f, txns[i], subs[i]);
            if (raw > MAX_RAW_BYTES) {
                throw new CodecException("segment is above the limit of " + MAX_RAW_BYTES + " raw bytes at frame " + i
                        + " of " + count);
            }
        }
        ByteBuffer buf = ByteBuffer.allocate((int) raw).order(ByteOrder.LITTLE_ENDIAN);
        byte[] hashes = new byte[count * TxnHash.BYTES];
        for (int i = 0; i < count; i++) {
            Frame f = frames.get(i);
            buf.putInt((int) bodyLength(f, txns[i], subs[i]));
            int flags = (f.traceId() != null ? FLAG_TRACE : 0) | (subs[i] != null ? FLAG_SUB : 0)
                    | (f.encrypted() ? FLAG_ENCRYPTED : 0);
            buf.put((byte) flags);
            putUuid(buf, f.messageId());
            if (f.traceId() != null) {
                putUuid(buf, f.traceId());
            }
            buf.putShort((short) txns[i].length).put(txns[i]);
            if (subs[i] != null) {
                buf.putShort((short) subs[i].length).put(subs[i]);
            }
            buf.put(f.payload());
            TxnHash.writeTo(txns[i], hashes, i * TxnHash.BYTES);
        }
        byte[] blob = Compression.compress(buf.array());
        return new PackedSegment(blob, hashes, count, (int) raw);
    }

    /** Unpacks one segment into its frames, in order. Any malformation is a {@link CodecException}. */
    public static List<Frame> unpack(byte[] blob) {
        byte[] raw = Compression.decompress(blob, MAX_RAW_BYTES);
        ByteBuffer buf = ByteBuffer.wrap(raw).order(ByteOrder.LITTLE_ENDIAN);
        List<Frame> frames = new ArrayList<>();
        while (buf.hasRemaining()) {
            int start = buf.position();
            if (buf.remaining() < 4) {
                throw new CodecException(buf.remaining() + " trailing bytes at byte offset " + start
                        + ": too few for a frame's 4-byte length");
            }
            long bodyLen = Integer.toUnsignedLong(buf.getInt());
            int bodyStart = buf.position();
            if (bodyLen > buf.remaining()) {
                throw new CodecException("frame at byte offset " + start + " runs past the buffer: body_len "
                        + bodyLen + ", " + buf.remaining() + " bytes left");
            }
            int end = bodyStart + (int) bodyLen;
            frames.add(readBody(raw, buf, start, end));
            buf.position(end);
        }
        return frames;
    }

    private static Frame readBody(byte[] raw, ByteBuffer buf, int start, int end) {
        need(buf, end, 1 + 16, start, "flags and message id");
        int flags = buf.get() & 0xFF;
        if ((flags & ~KNOWN_FLAGS) != 0) {
            throw new CodecException("frame at byte offset " + start + " has unknown flags 0x" + Integer.toHexString(flags));
        }
        UUID messageId = getUuid(buf);
        UUID traceId = null;
        if ((flags & FLAG_TRACE) != 0) {
            need(buf, end, 16, start, "trace id");
            traceId = getUuid(buf);
        }
        String txn = getString(raw, buf, end, start, "txn");
        String sub = (flags & FLAG_SUB) != 0 ? getString(raw, buf, end, start, "producer sub") : null;
        byte[] payload = Arrays.copyOfRange(raw, buf.position(), end);
        return new Frame(messageId, traceId, txn, sub, (flags & FLAG_ENCRYPTED) != 0, payload);
    }

    private static String getString(byte[] raw, ByteBuffer buf, int end, int start, String what) {
        need(buf, end, 2, start, what + " length");
        int len = buf.getShort() & 0xFFFF;
        need(buf, end, len, start, what);
        int at = buf.position();
        buf.position(at + len);
        return Utf8.decode(raw, at, len, what + " of frame at byte offset " + start + ",");
    }

    /** The body must hold {@code n} more bytes of its fixed part before {@code end}. */
    private static void need(ByteBuffer buf, int end, int n, int start, String what) {
        if (end - buf.position() < n) {
            throw new CodecException("frame at byte offset " + start + ": body shorter than its fixed part ("
                    + what + " needs " + n + " bytes at byte offset " + buf.position() + ", body ends at " + end + ")");
        }
    }

    /**
     * The most raw bytes {@code frame} takes in a segment (length field included), without encoding its
     * strings: each char counted as 3 UTF-8 bytes, the most a UTF-16 char encodes to. For callers that
     * cut frames into segments of bounded size before packing them (the sweeper's Packer).
     */
    public static long rawBytesAtMost(Frame frame) {
        return 4L + 1 + 16 + (frame.traceId() != null ? 16 : 0) + 2 + (long) frame.txn().length() * 3
                + (frame.producerSub() != null ? 2 + (long) frame.producerSub().length() * 3 : 0) + frame.payload().length;
    }

    private static long bodyLength(Frame f, byte[] txn, byte[] sub) {
        return 1L + 16 + (f.traceId() != null ? 16 : 0) + 2 + txn.length + (sub != null ? 2 + sub.length : 0)
                + f.payload().length;
    }

    private static void checkLength(byte[] utf8, String what, int index) {
        if (utf8.length > MAX_STRING_BYTES) {
            throw new CodecException(what + " of frame " + index + " is " + utf8.length + " UTF-8 bytes, above the limit of "
                    + MAX_STRING_BYTES);
        }
    }

    private static void putUuid(ByteBuffer buf, UUID id) {
        buf.order(ByteOrder.BIG_ENDIAN).putLong(id.getMostSignificantBits()).putLong(id.getLeastSignificantBits())
                .order(ByteOrder.LITTLE_ENDIAN);
    }

    private static UUID getUuid(ByteBuffer buf) {
        buf.order(ByteOrder.BIG_ENDIAN);
        UUID id = new UUID(buf.getLong(), buf.getLong());
        buf.order(ByteOrder.LITTLE_ENDIAN);
        return id;
    }
}
