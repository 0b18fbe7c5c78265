package io.queen.timers.log.codec;

import com.github.luben.zstd.Zstd;
import com.github.luben.zstd.ZstdInputStream;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.util.Arrays;

/**
 * The project's one zstd: the level every writer compresses at (log segments, and staged payloads
 * above bridge.payload.zstd.threshold) and the bounded decompression every reader uses
 * (docs/decisions.md#one-zstd-stream-per-segment, docs/formats.md#staged-payload).
 */
public final class Compression {

    /** zstd level of segments and staged payloads. */
    public static final int LEVEL = 3;

    private Compression() {}

    /** One zstd frame at {@link #LEVEL}, content size in its header, no checksum. */
    public static byte[] compress(byte[] raw) {
        return Zstd.compress(raw, LEVEL);
    }

    /**
     * The raw size the zstd frame at the start of {@code blob} declares in its header, read without
     * decompressing anything; -1 when it declares none or {@code blob} is not zstd. A hint for budgeting
     * only: {@link #decompress} still enforces its own bound.
     */
    public static long declaredSize(byte[] blob) {
        try {
            long n = Zstd.getFrameContentSize(blob);
            return n >= 0 ? n : -1;
        } catch (RuntimeException e) {
            return -1;
        }
    }

    /**
     * One zstd frame that is exactly the whole input, decompressed to at most {@code maxBytes}.
     * Streaming, so the buffer grows with bytes actually produced and a corrupt or hostile content-size
     * field cannot allocate the heap away; the price is a copy of the raw bytes.
     *
     * @throws CodecException naming what is wrong (bad zstd, bytes after the frame, above the bound)
     */
    public static byte[] decompress(byte[] blob, int maxBytes) {
        long frameSize;
        long declared;
        try {
            frameSize = Zstd.findFrameCompressedSize(blob);
            declared = Zstd.isError(frameSize) ? -1 : Zstd.getFrameContentSize(blob);
        } catch (RuntimeException e) {
            throw new CodecException("bad zstd at blob byte offset 0: " + e.getMessage(), e);
        }
        if (Zstd.isError(frameSize) || frameSize != blob.length) {
            throw new CodecException(Zstd.isError(frameSize)
                    ? "bad zstd at blob byte offset 0: " + Zstd.getErrorName(frameSize)
                    : "bad zstd: " + (blob.length - frameSize) + " bytes after the zstd frame at blob byte offset " + frameSize);
        }
        if (declared > maxBytes) {
            throw new CodecException("bad zstd: frame declares " + declared + " raw bytes, above the limit of " + maxBytes);
        }
        int capacity = (int) Math.min(maxBytes, Math.max(64, Math.min(declared > 0 ? declared : 0, 16L * blob.length + 65536)));
        byte[] out = new byte[capacity];
        int n = 0;
        try (ZstdInputStream in = new ZstdInputStream(new ByteArrayInputStream(blob))) {
            while (true) {
                if (n == out.length) {
                    if (out.length >= maxBytes) {
                        if (in.read() < 0) {
                            break;
                        }
                        throw new CodecException("bad zstd: decompresses to more than " + maxBytes + " bytes");
                    }
                    out = Arrays.copyOf(out, (int) Math.min((long) out.length * 2, maxBytes));
                }
                int r = in.read(out, n, out.length - n);
                if (r < 0) {
                    break;
                }
                n += r;
            }
        } catch (IOException | RuntimeException e) {
            if (e instanceof CodecException c) {
                throw c;
            }
            throw new CodecException("bad zstd after " + n + " decompressed bytes: " + e.getMessage(), e);
        }
        if (declared >= 0 && declared != n) {
            throw new CodecException("bad zstd: frame declares " + declared + " raw bytes, decompressed " + n);
        }
        return n == out.length ? out : Arrays.copyOf(out, n);
    }
}
