package io.queen.timers.sweeper.pack;

import com.github.luben.zstd.Zstd;
import com.github.luben.zstd.ZstdInputStream;
import io.queen.timers.sweeper.claim.ClaimedTimer;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.util.Arrays;

/**
 * The payload a frame carries: the stored bytes, decompressed when the bridge stored them with
 * {@code payload_zstd = true} (DESIGN.md §4). Never decrypted: an encrypted payload is carried as is and
 * flagged in the frame.
 */
public final class Payloads {

    /**
     * The most a stored payload may decompress to: the upper bound of the bridge's bridge.payload.max.bytes
     * (64 MiB), so no payload a bridge accepted is refused here, and a stored value that claims more (a
     * corrupted or hostile zstd frame) fails alone instead of exhausting the heap. Deliberately not
     * sweeper.max.fire.bytes: a timer larger than a fire's bound is fired alone, not failed.
     */
    public static final int MAX_DECOMPRESSED_BYTES = 64 << 20;

    private Payloads() {}

    /**
     * @throws IllegalArgumentException naming the timer when the stored bytes are not one zstd frame, or
     *         decompress to more than {@code maxBytes}
     */
    public static byte[] of(ClaimedTimer t, int maxBytes) {
        if (!t.payloadZstd()) {
            return t.payload();
        }
        byte[] stored = t.payload();
        long declared;
        try {
            declared = Zstd.getFrameContentSize(stored);
        } catch (RuntimeException e) {
            throw bad(t, e.getMessage());
        }
        if (declared > maxBytes) {
            throw bad(t, "declares " + declared + " bytes, above the limit of " + maxBytes);
        }
        byte[] out = new byte[(int) Math.max(64, declared > 0 ? declared : 4L * stored.length)];
        int n = 0;
        try (ZstdInputStream in = new ZstdInputStream(new ByteArrayInputStream(stored))) {
            while (true) {
                if (n == out.length) {
                    if (out.length >= maxBytes) {
                        if (in.read() < 0) {
                            break;
                        }
                        throw bad(t, "decompresses to more than " + maxBytes + " bytes");
                    }
                    out = Arrays.copyOf(out, (int) Math.min(2L * out.length, maxBytes));
                }
                int r = in.read(out, n, out.length - n);
                if (r < 0) {
                    break;
                }
                n += r;
            }
        } catch (IOException | RuntimeException e) {
            if (e instanceof IllegalArgumentException iae) {
                throw iae;
            }
            throw bad(t, e.getMessage());
        }
        return n == out.length ? out : Arrays.copyOf(out, n);
    }

    private static IllegalArgumentException bad(ClaimedTimer t, String why) {
        return new IllegalArgumentException("timer " + t.name() + ": payload_zstd is set but the stored payload does not decompress: " + why);
    }
}
