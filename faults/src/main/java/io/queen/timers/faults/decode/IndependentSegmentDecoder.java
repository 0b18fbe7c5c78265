package io.queen.timers.faults.decode;

import com.github.luben.zstd.Zstd;
import com.github.luben.zstd.ZstdException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.CharBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.List;
import java.util.UUID;

/**
 * A second decoder of the log's segment format, written from docs/formats.md ("Log segment", "Log frame") alone and
 * sharing no code with the log module (issue 38 point 3). The harness used to read the log with the codec the sweeper
 * writes with, so a defect shared by writer and reader was invisible to it; this one fails wherever the bytes leave
 * the documented format, and the committed byte vectors (faults/src/test/resources, {@code SegmentVectorsTest}) hold
 * both decoders to the same values.
 *
 * <p>Strict where the document is: one zstd frame (RFC 8878) covering the whole blob, its content size in the header,
 * no checksum, at most 256 MiB decompressed; then frames back to back, every integer little-endian, only flags 1, 2
 * and 4, UTF-8 that decodes without replacement, and no byte left over.
 */
public final class IndependentSegmentDecoder {

    /** docs/formats.md "Log segment": a segment is refused above this many bytes decompressed. */
    public static final long MAX_DECOMPRESSED = 256L << 20;

    private static final int ZSTD_MAGIC = 0xFD2FB528;
    private static final int FLAG_TRACE = 1;
    private static final int FLAG_SUB = 2;
    private static final int FLAG_ENCRYPTED = 4;
    /** flags u8, message id 16, txn_len u16: what every body holds before the optional parts. */
    private static final int FIXED_BODY = 1 + 16 + 2;

    private IndependentSegmentDecoder() {}

    /** The frames of one {@code queen.log_segments.blob}, in order (frame j has offset base_offset + j). */
    public static List<DecodedFrame> decode(byte[] blob) {
        return frames(decompress(blob));
    }

    /** The zstd stream's content, after checking the frame header against what the document promises. */
    static byte[] decompress(byte[] blob) {
        if (blob.length < 6) {
            throw new DecodeException("segment of " + blob.length + " bytes is shorter than a zstd frame header");
        }
        int magic = ByteBuffer.wrap(blob, 0, 4).order(ByteOrder.LITTLE_ENDIAN).getInt();
        if (magic != ZSTD_MAGIC) {
            throw new DecodeException(String.format("byte 0: magic %08x is not a zstd frame's (%08x)", magic, ZSTD_MAGIC));
        }
        // RFC 8878 3.1.1.1.1, Frame_Header_Descriptor: bits 7-6 content size flag, 5 single segment, 3 reserved, 2 checksum.
        int descriptor = blob[4] & 0xFF;
        boolean contentSizeInHeader = (descriptor >>> 6) != 0 || (descriptor & 0x20) != 0;
        if ((descriptor & 0x08) != 0) {
            throw new DecodeException("byte 4: the zstd frame header's reserved bit is set");
        }
        if ((descriptor & 0x04) != 0) {
            throw new DecodeException("byte 4: the zstd frame carries a checksum; the format has none");
        }
        if (!contentSizeInHeader) {
            throw new DecodeException("byte 4: the zstd frame header has no content size; the format puts it there");
        }
        try {
            return content(blob);
        } catch (ZstdException e) {
            // zstd-jni throws for some malformed input where it returns an error code for other: one refusal either way.
            throw new DecodeException("zstd frame does not decompress: " + e.getMessage());
        }
    }

    private static byte[] content(byte[] blob) {
        long frameSize = Zstd.findFrameCompressedSize(blob);
        if (Zstd.isError(frameSize)) {
            throw new DecodeException("byte 0: not a whole zstd frame (" + Zstd.getErrorName(frameSize) + ")");
        }
        if (frameSize != blob.length) {
            throw new DecodeException("byte " + frameSize + ": " + (blob.length - frameSize)
                    + " bytes after the zstd frame; a segment is one zstd frame");
        }
        long size = Zstd.getFrameContentSize(blob);
        if (size < 0) {
            throw new DecodeException("byte 4: unreadable zstd content size (" + size + ")");
        }
        if (size > MAX_DECOMPRESSED) {
            throw new DecodeException("segment of " + size + " bytes decompressed, above the " + MAX_DECOMPRESSED + " allowed");
        }
        byte[] raw = new byte[(int) size];
        long n = Zstd.decompressByteArray(raw, 0, raw.length, blob, 0, blob.length);
        if (Zstd.isError(n)) {
            throw new DecodeException("zstd frame does not decompress: " + Zstd.getErrorName(n));
        }
        if (n != size) {
            throw new DecodeException("zstd frame decompressed to " + n + " bytes, its header says " + size);
        }
        return raw;
    }

    /** Frames back to back in the decompressed bytes; offsets in messages count in those bytes. */
    static List<DecodedFrame> frames(byte[] raw) {
        List<DecodedFrame> out = new ArrayList<>();
        int at = 0;
        while (at < raw.length) {
            if (raw.length - at < 4) {
                throw new DecodeException("byte " + at + ": " + (raw.length - at) + " trailing bytes, too few for a frame's body_len");
            }
            long bodyLen = u32(raw, at);
            int body = at + 4;
            if (bodyLen > raw.length - body) {
                throw new DecodeException("byte " + at + ": frame " + out.size() + "'s body_len " + bodyLen + " runs past the segment ("
                        + (raw.length - body) + " bytes left)");
            }
            int end = body + (int) bodyLen;
            out.add(frame(raw, body, end, out.size()));
            at = end;
        }
        return out;
    }

    private static DecodedFrame frame(byte[] raw, int body, int end, int index) {
        String which = "frame " + index;
        if (end - body < FIXED_BODY) {
            throw new DecodeException("byte " + body + ": " + which + "'s body of " + (end - body) + " bytes is shorter than its fixed part ("
                    + FIXED_BODY + ")");
        }
        int flags = raw[body] & 0xFF;
        if ((flags & ~(FLAG_TRACE | FLAG_SUB | FLAG_ENCRYPTED)) != 0) {
            throw new DecodeException("byte " + body + ": " + which + " has unknown flags " + Integer.toBinaryString(flags));
        }
        int at = body + 1;
        UUID messageId = new UUID(u64BigEndian(raw, at), u64BigEndian(raw, at + 8));
        at += 16;
        String traceId = null;
        if ((flags & FLAG_TRACE) != 0) {
            need(at, 16, end, which, "trace id");
            traceId = HexFormat.of().formatHex(raw, at, at + 16);
            at += 16;
        }
        need(at, 2, end, which, "txn_len");
        int txnLen = u16(raw, at);
        at += 2;
        need(at, txnLen, end, which, "txn");
        String txn = utf8(raw, at, txnLen, which, "txn");
        at += txnLen;
        String sub = null;
        if ((flags & FLAG_SUB) != 0) {
            need(at, 2, end, which, "sub_len");
            int subLen = u16(raw, at);
            at += 2;
            need(at, subLen, end, which, "producer sub");
            sub = utf8(raw, at, subLen, which, "producer sub");
            at += subLen;
        }
        byte[] payload = Arrays.copyOfRange(raw, at, end);
        return new DecodedFrame(messageId, traceId, txn, sub, (flags & FLAG_ENCRYPTED) != 0, payload);
    }

    private static void need(int at, int n, int end, String which, String field) {
        if (n > end - at) {
            throw new DecodeException("byte " + at + ": " + which + "'s " + field + " (" + n + " bytes) runs past its body ("
                    + (end - at) + " bytes left)");
        }
    }

    private static String utf8(byte[] raw, int at, int len, String which, String field) {
        try {
            CharBuffer chars = StandardCharsets.UTF_8.newDecoder().onMalformedInput(CodingErrorAction.REPORT)
                    .onUnmappableCharacter(CodingErrorAction.REPORT).decode(ByteBuffer.wrap(raw, at, len));
            return chars.toString();
        } catch (CharacterCodingException e) {
            throw new DecodeException("byte " + at + ": " + which + "'s " + field + " is not valid UTF-8");
        }
    }

    private static long u32(byte[] b, int at) {
        return (b[at] & 0xFFL) | (b[at + 1] & 0xFFL) << 8 | (b[at + 2] & 0xFFL) << 16 | (b[at + 3] & 0xFFL) << 24;
    }

    private static int u16(byte[] b, int at) {
        return (b[at] & 0xFF) | (b[at + 1] & 0xFF) << 8;
    }

    /** The message id is the one field the document gives most significant byte first. */
    private static long u64BigEndian(byte[] b, int at) {
        long v = 0;
        for (int i = 0; i < 8; i++) {
            v = v << 8 | (b[at + i] & 0xFFL);
        }
        return v;
    }
}
