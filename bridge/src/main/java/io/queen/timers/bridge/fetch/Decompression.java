package io.queen.timers.bridge.fetch;

import com.github.luben.zstd.NoPool;
import com.github.luben.zstd.ZstdInputStreamNoFinalizer;
import java.io.BufferedInputStream;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.util.Arrays;
import org.apache.kafka.common.record.internal.DefaultRecordBatch;
import org.apache.kafka.common.utils.internals.BufferSupplier;
import org.xerial.snappy.Snappy;

/**
 * A compressed batch's records stream, opened only once what the stream will hold is known: read from the codec's own
 * header in the batch's bytes before any buffer of the codec exists, counted ({@link Declared#bytes()}, what
 * {@link StreamBudget} admits), and refused beyond {@link #DECLARED_MAX_BYTES}. What each codec holds while its batch is
 * read part way, and what is counted for it:
 *
 * <ul>
 *   <li><b>gzip</b>: fixed. An inflater (zlib's state and its 32 KiB window, native) and Kafka's 8 + 16 KiB of buffers:
 *       {@link #GZIP_BYTES}.
 *   <li><b>lz4</b>: one block of the size the frame descriptor declares (64 KiB to 4 MiB, the format's largest), on the heap,
 *       allocated by Kafka's reader when the stream opens; its BD byte is read here first, as Kafka's reader reads it.
 *   <li><b>snappy</b>: one chunk of the uncompressed length the chunk declares (Kafka's producer writes 32 KiB chunks; a
 *       producer that writes raw snappy, librdkafka, one block of its whole batch). Every chunk's declaration is read
 *       before the stream opens. The chunks are the bridge's own reading of the framing snappy-java writes, decompressed in
 *       place from the batch's bytes by snappy-java: its {@code SnappyInputStream}, which Kafka's reader uses, allocates a
 *       chunk's declared compressed length (up to 512 MiB) and then its declared uncompressed length before anything can
 *       check either.
 *   <li><b>zstd</b>: the window each frame declares (its window descriptor, or its content size for a single-segment
 *       frame), native, rounded up to a power of two, plus zstd's context and block buffers and 144 KiB of heap
 *       ({@link #ZSTD_FIXED_BYTES}). Every frame's header is read before the stream opens (its blocks walked to find the
 *       next), a frame that is not zstd's own (a legacy format's, whose decoder allocates its window unchecked) refuses the
 *       batch, and the decoder's window log max is set to what was counted, so no frame can make zstd allocate more.
 * </ul>
 *
 * <p>PRICE: a batch whose zstd window or snappy chunk is beyond {@link #DECLARED_MAX_BYTES} is unreadable whole. Kafka's
 * producer declares a 2 MiB window at its default level (3) and 8 MiB up to level 19; only its levels 20-22 (windows of
 * 32-128 MiB) are refused. A zstd window is counted rounded up (up to twice a window that is not a power of two; Kafka's
 * are). The buffers of a stream are allocated when it opens and dropped when it closes ({@link BufferSupplier#NO_CACHING}):
 * no pool keeps what the budget no longer counts, and a producer's 4 MiB lz4 blocks are 4 MiB of garbage per batch.
 */
final class Decompression {

    /** The most one batch's codec may declare: a zstd window (window log 23), a snappy chunk. Lz4's largest block is 4 MiB. */
    static final int DECLARED_MAX_BYTES = 8 << 20;
    /** What a gzip stream holds: zlib's inflate state (~7 KiB) and window (32 KiB), Kafka's 8 KiB input and 16 KiB output buffers. */
    static final int GZIP_BYTES = 64 << 10;
    /** Beside an lz4 block: Kafka's 2 KiB output buffer and the streams' objects. */
    static final int LZ4_FIXED_BYTES = 16 << 10;
    /** Beside a snappy chunk: the stream's objects. */
    static final int SNAPPY_FIXED_BYTES = 4 << 10;
    /**
     * Beside a zstd window: the decoder's context (~100 KiB), its input block (128 KiB) and the two output blocks its window
     * buffer holds beyond the window (256 KiB), native; the input buffer zstd-jni copies the compressed bytes into (128 KiB)
     * and the 16 KiB buffer the records are read through, heap.
     */
    static final int ZSTD_FIXED_BYTES = 768 << 10;
    /** The largest stream any batch may open: a zstd window of {@link #DECLARED_MAX_BYTES}. */
    static final long LARGEST_STREAM_BYTES = DECLARED_MAX_BYTES + ZSTD_FIXED_BYTES;

    static final int NONE = 0;
    static final int GZIP = 1;
    static final int SNAPPY = 2;
    static final int LZ4 = 3;
    static final int ZSTD = 4;

    private static final int ZSTD_MAGIC = 0xFD2FB528;
    private static final int ZSTD_WINDOW_LOG_MIN = 10;
    private static final int ZSTD_WINDOW_LOG_MAX = Integer.numberOfTrailingZeros(DECLARED_MAX_BYTES);
    private static final int LZ4_MAGIC = 0x184D2204;
    /** snappy-java's stream header: its magic, then a version and the oldest compatible version (two int32). */
    private static final byte[] SNAPPY_MAGIC = {(byte) 0x82, 'S', 'N', 'A', 'P', 'P', 'Y', 0};
    private static final int SNAPPY_HEADER_BYTES = 16;
    private static final int SNAPPY_MAGIC_HEAD = 0x82534E41;
    private static final int READ_BUFFER_BYTES = 16 << 10;

    /** What opening a batch's stream will hold ({@code bytes}), and for zstd the window log its decoder is held to. */
    record Declared(int codec, long bytes, int zstdWindowLog, int snappyChunkMax) {}

    /** A batch whose codec declares more than the bridge decompresses with, or whose framing cannot be read to find out. */
    static final class Refused extends Exception {
        Refused(String message) {
            super(message, null, false, false);
        }
    }

    private Decompression() {}

    /**
     * What the stream of a batch compressed with {@code codec} (the low bits of its attributes) will hold, read from its
     * records' bytes {@code data[offset, offset + length)} (after the batch header, as the broker stored them).
     */
    static Declared declare(int codec, byte[] data, int offset, int length) throws Refused {
        return switch (codec) {
            case GZIP -> new Declared(codec, GZIP_BYTES, 0, 0);
            case LZ4 -> new Declared(codec, lz4Block(data, offset, length) + LZ4_FIXED_BYTES, 0, 0);
            case SNAPPY -> {
                int chunk = snappyLargestChunk(data, offset, length);
                yield new Declared(codec, chunk + SNAPPY_FIXED_BYTES, 0, chunk);
            }
            case ZSTD -> {
                int log = zstdWindowLog(data, offset, length);
                yield new Declared(codec, (1L << log) + ZSTD_FIXED_BYTES, log, 0);
            }
            default -> throw new Refused("its batch names compression codec " + codec + ", which Kafka does not define");
        };
    }

    /**
     * Opens the records stream {@code declared} was read for. Gzip and lz4 through Kafka's own readers; snappy and zstd
     * through the bridge's, bounded by what was declared.
     */
    static InputStream open(DefaultRecordBatch batch, Declared declared, byte[] data, int offset, int length) throws IOException {
        return switch (declared.codec()) {
            case GZIP, LZ4 -> batch.recordInputStream(BufferSupplier.NO_CACHING);
            case SNAPPY -> new SnappyChunks(data, offset, length, declared.snappyChunkMax());
            case ZSTD -> {
                ZstdInputStreamNoFinalizer z = new ZstdInputStreamNoFinalizer(new ByteArrayInputStream(data, offset, length), NoPool.INSTANCE);
                try {
                    z.setLongMax(declared.zstdWindowLog());
                } catch (IOException | RuntimeException e) {
                    z.close();
                    throw e;
                }
                // each read of zstd-jni's stream is a native call, and the records are read a varint byte at a time
                yield new BufferedInputStream(z, READ_BUFFER_BYTES);
            }
            default -> throw new IllegalArgumentException("codec " + declared.codec());
        };
    }

    // --- lz4 ----------------------------------------------------------------------------------------------------------

    /**
     * The block size an lz4 frame's descriptor declares (its BD byte: 1 << (2 × id + 8) for ids 4-7). A frame Kafka's
     * reader will refuse (no magic, a BD it does not accept) counts nothing: that reader throws before allocating.
     */
    private static int lz4Block(byte[] d, int at, int length) {
        if (length < 6 || intLe(d, at) != LZ4_MAGIC) {
            return 0;
        }
        int id = (d[at + 5] >>> 4) & 0x07;
        return id < 4 ? 0 : 1 << (2 * id + 8);
    }

    // --- snappy -------------------------------------------------------------------------------------------------------

    /**
     * The largest uncompressed length a chunk of this snappy data declares, every chunk read. The framing read is
     * snappy-java's ({@code SnappyInputStream}): its 16-byte header, then chunks of an int32 length and snappy's raw
     * format, a header again where streams were concatenated, up to fewer than 4 bytes left; data without the header is
     * one raw block (what librdkafka writes).
     */
    private static int snappyLargestChunk(byte[] d, int at, int length) throws Refused {
        SnappyFrames frames = new SnappyFrames(d, at, length);
        int largest = 0;
        try {
            while (frames.next()) {
                int n = Snappy.uncompressedLength(d, frames.chunkAt, frames.chunkLength);
                if (n < 0 || n > DECLARED_MAX_BYTES) {
                    throw new Refused("its snappy chunk declares " + Integer.toUnsignedString(n) + " bytes uncompressed, more than the "
                            + DECLARED_MAX_BYTES + " the bridge decompresses a chunk into");
                }
                largest = Math.max(largest, n);
            }
        } catch (IOException e) {
            throw new Refused("its snappy data does not parse (" + e.getMessage() + ")");
        }
        return largest;
    }

    /** Walks snappy-java's framing: {@link #next()} finds each chunk's compressed bytes. */
    private static final class SnappyFrames {
        private final byte[] d;
        private final int end;
        private final boolean framed;
        private int pos;
        private boolean rawDone;
        int chunkAt;
        int chunkLength;

        SnappyFrames(byte[] d, int at, int length) {
            this.d = d;
            this.end = at + length;
            this.framed = length >= SNAPPY_HEADER_BYTES && Arrays.equals(d, at, at + SNAPPY_MAGIC.length, SNAPPY_MAGIC, 0, SNAPPY_MAGIC.length);
            this.pos = framed ? at + SNAPPY_HEADER_BYTES : at;
        }

        boolean next() throws IOException {
            if (!framed) {
                if (rawDone || pos == end) {
                    return false;
                }
                rawDone = true;
                chunkAt = pos;
                chunkLength = end - pos;
                return true;
            }
            while (true) {
                if (end - pos < 4) {
                    return false;
                }
                int n = intBe(d, pos);
                if (n == SNAPPY_MAGIC_HEAD) { // a concatenated stream's header; anything else that starts so ends the data
                    if (end - pos < SNAPPY_HEADER_BYTES) {
                        throw new IOException("a snappy header is cut short");
                    }
                    if (!Arrays.equals(d, pos, pos + SNAPPY_MAGIC.length, SNAPPY_MAGIC, 0, SNAPPY_MAGIC.length)) {
                        return false;
                    }
                    if (intBe(d, pos + SNAPPY_MAGIC.length) < 1) {
                        throw new IOException("a snappy header names version " + intBe(d, pos + SNAPPY_MAGIC.length));
                    }
                    pos += SNAPPY_HEADER_BYTES;
                    continue;
                }
                if (n < 0 || n > end - pos - 4) {
                    throw new IOException("a snappy chunk declares " + Integer.toUnsignedString(n) + " bytes where "
                            + (end - pos - 4) + " are left");
                }
                chunkAt = pos + 4;
                chunkLength = n;
                pos += 4 + n;
                return true;
            }
        }
    }

    /** The records of a snappy batch: one chunk at a time, decompressed from the batch's bytes into one buffer. */
    private static final class SnappyChunks extends InputStream {
        private final byte[] d;
        private final SnappyFrames frames;
        private byte[] out;
        private int cursor;
        private int limit;

        SnappyChunks(byte[] d, int at, int length, int largestChunk) {
            this.d = d;
            this.frames = new SnappyFrames(d, at, length);
            this.out = new byte[largestChunk];
        }

        @Override
        public int read() throws IOException {
            if (cursor == limit && !nextChunk()) {
                return -1;
            }
            return out[cursor++] & 0xFF;
        }

        @Override
        public int read(byte[] b, int off, int len) throws IOException {
            if (len == 0) {
                return 0;
            }
            if (cursor == limit && !nextChunk()) {
                return -1;
            }
            int n = Math.min(len, limit - cursor);
            System.arraycopy(out, cursor, b, off, n);
            cursor += n;
            return n;
        }

        private boolean nextChunk() throws IOException {
            if (out == null) {
                throw new IOException("the stream is closed");
            }
            while (frames.next()) {
                // declared and checked against out's length before the stream opened; the data has not changed since
                int n = Snappy.uncompressedLength(d, frames.chunkAt, frames.chunkLength);
                if (n < 0 || n > out.length) {
                    throw new IOException("a snappy chunk declares " + n + " bytes, more than was read before");
                }
                int got = Snappy.uncompress(d, frames.chunkAt, frames.chunkLength, out, 0);
                if (got != n) {
                    throw new IOException("a snappy chunk declares " + n + " bytes and holds " + got);
                }
                cursor = 0;
                limit = n;
                if (n > 0) {
                    return true;
                }
            }
            return false;
        }

        @Override
        public void close() {
            out = null;
            cursor = 0;
            limit = 0;
        }
    }

    // --- zstd ---------------------------------------------------------------------------------------------------------

    /**
     * The window log zstd's decoder needs for every frame of this data (at least 10, zstd's smallest): each frame's header
     * read as RFC 8878 lays it out (its window descriptor, or for a single segment its content size), its blocks walked to
     * the next frame; skippable frames are stepped over. Anything else is refused: a legacy zstd format's decoder does not
     * honour the window log max.
     */
    private static int zstdWindowLog(byte[] d, int at, int length) throws Refused {
        int end = at + length;
        int pos = at;
        long largest = 1L << ZSTD_WINDOW_LOG_MIN;
        if (length == 0) {
            throw new Refused("its zstd data is empty");
        }
        while (pos < end) {
            if (end - pos < 8) {
                throw new Refused("its zstd data ends inside a frame header");
            }
            int magic = intLe(d, pos);
            if ((magic & 0xFFFFFFF0) == 0x184D2A50) { // a skippable frame: its length, then as many bytes
                long skip = intLe(d, pos + 4) & 0xFFFFFFFFL;
                if (skip > end - pos - 8) {
                    throw new Refused("its zstd skippable frame declares " + skip + " bytes where " + (end - pos - 8) + " are left");
                }
                pos += 8 + (int) skip;
                continue;
            }
            if (magic != ZSTD_MAGIC) {
                throw new Refused(String.format("its zstd data holds a frame of magic 0x%08X, not zstd's (0x%08X)", magic, ZSTD_MAGIC));
            }
            int descriptor = d[pos + 4] & 0xFF;
            int contentSizeFlag = descriptor >>> 6;
            boolean singleSegment = (descriptor & 0x20) != 0;
            boolean checksum = (descriptor & 0x04) != 0;
            int dictionaryBytes = new int[] {0, 1, 2, 4}[descriptor & 0x03];
            int contentSizeBytes = contentSizeFlag == 0 ? (singleSegment ? 1 : 0) : 1 << contentSizeFlag;
            int p = pos + 5;
            long window = 0;
            if (!singleSegment) {
                int w = d[p++] & 0xFF;
                long base = 1L << (10 + (w >>> 3));
                window = base + (base >>> 3) * (w & 0x07);
            }
            p += dictionaryBytes;
            if (end - p < contentSizeBytes) {
                throw new Refused("its zstd data ends inside a frame header");
            }
            if (singleSegment) {
                long size = 0;
                for (int i = contentSizeBytes - 1; i >= 0; i--) {
                    size = (size << 8) | (d[p + i] & 0xFF);
                }
                window = contentSizeBytes == 2 ? size + 256 : size;
            }
            p += contentSizeBytes;
            if (window < 0 || window > DECLARED_MAX_BYTES) {
                throw new Refused("its zstd frame needs a window of " + Long.toUnsignedString(window) + " bytes, more than the "
                        + DECLARED_MAX_BYTES + " the bridge decompresses with");
            }
            largest = Math.max(largest, window);
            pos = zstdBlocksEnd(d, p, end);
            if (checksum) {
                if (end - pos < 4) {
                    throw new Refused("its zstd data ends inside a frame's checksum");
                }
                pos += 4;
            }
        }
        return Math.max(ZSTD_WINDOW_LOG_MIN, 64 - Long.numberOfLeadingZeros(largest - 1));
    }

    /** Where a zstd frame's blocks starting at {@code pos} end: 3-byte headers (last, type, size), then their content. */
    private static int zstdBlocksEnd(byte[] d, int pos, int end) throws Refused {
        while (true) {
            if (end - pos < 3) {
                throw new Refused("its zstd data ends inside a block header");
            }
            int header = (d[pos] & 0xFF) | (d[pos + 1] & 0xFF) << 8 | (d[pos + 2] & 0xFF) << 16;
            boolean last = (header & 1) != 0;
            int type = (header >>> 1) & 0x03;
            int size = header >>> 3;
            int content = switch (type) {
                case 0, 2 -> size; // raw, compressed
                case 1 -> 1; // RLE: one byte, repeated
                default -> throw new Refused("its zstd data holds a block of the reserved type");
            };
            pos += 3;
            if (content > end - pos) {
                throw new Refused("its zstd data ends inside a block");
            }
            pos += content;
            if (last) {
                return pos;
            }
        }
    }

    // ------------------------------------------------------------------------------------------------------------------

    private static int intLe(byte[] d, int at) {
        return (d[at] & 0xFF) | (d[at + 1] & 0xFF) << 8 | (d[at + 2] & 0xFF) << 16 | (d[at + 3] & 0xFF) << 24;
    }

    private static int intBe(byte[] d, int at) {
        return (d[at] & 0xFF) << 24 | (d[at + 1] & 0xFF) << 16 | (d[at + 2] & 0xFF) << 8 | (d[at + 3] & 0xFF);
    }
}
