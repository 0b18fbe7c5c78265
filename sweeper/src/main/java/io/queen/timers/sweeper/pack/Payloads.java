package io.queen.timers.sweeper.pack;

import io.queen.timers.log.codec.CodecException;
import io.queen.timers.log.codec.Compression;
import io.queen.timers.log.codec.Frame;
import io.queen.timers.sweeper.claim.ClaimedTimer;

/**
 * The payload a frame carries: the stored bytes, decompressed when the bridge stored them with
 * {@code payload_zstd = true} (docs/formats.md#staged-payload), through the log's one zstd helper. Never
 * decrypted: an encrypted payload is carried as is and flagged in the frame.
 */
public final class Payloads {

    /**
     * The most a stored payload may decompress to: {@link Frame#MAX_PAYLOAD_BYTES}. Deliberately not
     * sweeper.max.fire.bytes: a timer larger than a fire's bound is fired alone, not failed.
     */
    public static final int MAX_DECOMPRESSED_BYTES = Frame.MAX_PAYLOAD_BYTES;

    private Payloads() {}

    /**
     * @throws IllegalArgumentException naming the timer when the stored bytes are not one zstd frame, or
     *         decompress to more than {@code maxBytes}
     */
    public static byte[] of(ClaimedTimer t, int maxBytes) {
        if (!t.payload().zstd()) {
            return t.payload().bytes();
        }
        try {
            return Compression.decompress(t.payload().bytes(), maxBytes);
        } catch (CodecException e) {
            throw bad(t, e.getMessage());
        }
    }

    /**
     * The bytes {@link #of} will hold for this timer, known without decompressing: the stored length, or for a
     * zstd payload the content size its frame header declares (the bridge always writes it); -1 when the header
     * declares none or is not zstd, so the caller treats it as unknown. {@link #of} still enforces its bound.
     */
    public static long declaredBytes(ClaimedTimer t) {
        if (!t.payload().zstd()) {
            return t.payload().bytes().length;
        }
        return Compression.declaredSize(t.payload().bytes());
    }

    private static IllegalArgumentException bad(ClaimedTimer t, String why) {
        return new IllegalArgumentException("timer " + t.name() + ": payload_zstd is set but the stored payload does not decompress: " + why);
    }
}
