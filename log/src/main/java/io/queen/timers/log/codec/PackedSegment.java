package io.queen.timers.log.codec;

import java.util.Arrays;

/**
 * A packed segment, ready for {@code queen.log_append_v1}: {@code blob} is one zstd stream of
 * {@code count} frames ({@code rawBytes} before compression) and {@code hashes} the
 * {@code log_txns} hashes, 16 bytes per frame in frame order. Arrays compare by content.
 */
public record PackedSegment(byte[] blob, byte[] hashes, int count, int rawBytes) {

    @Override
    public boolean equals(Object o) {
        return o instanceof PackedSegment p
                && count == p.count
                && rawBytes == p.rawBytes
                && Arrays.equals(blob, p.blob)
                && Arrays.equals(hashes, p.hashes);
    }

    @Override
    public int hashCode() {
        return (Arrays.hashCode(blob) * 31 + Arrays.hashCode(hashes)) * 31 + count * 17 + rawBytes;
    }

    @Override
    public String toString() {
        return "PackedSegment[count=" + count + ", rawBytes=" + rawBytes + ", blob=" + blob.length + " bytes]";
    }
}
