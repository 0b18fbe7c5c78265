package io.queen.timers.log.codec;

import com.dynatrace.hash4j.hashing.HashValue128;
import com.dynatrace.hash4j.hashing.Hasher128;
import com.dynatrace.hash4j.hashing.Hashing;

/**
 * The {@code queen.log_txns} hash of a txn: XXH3-128 with seed 0 of the txn's UTF-8 bytes, 16 bytes
 * big-endian (most significant 64 bits first). Vectors: {@code ""} →
 * {@code 99aa06d3014798d86001c324468d497f}, {@code "txn-0001"} → {@code e6db1a376171f085299a000943065f9c}.
 */
public final class TxnHash {

    /** Bytes per hash; {@code log_txns.hashes} holds one per frame, in frame order. */
    public static final int BYTES = 16;

    private static final Hasher128 XXH3_128 = Hashing.xxh3_128(); // seed 0; stateless and thread-safe

    private TxnHash() {}

    /** The 16-byte big-endian hash of {@code txn}. */
    public static byte[] of(String txn) {
        byte[] out = new byte[BYTES];
        writeTo(Utf8.encode(txn, "txn"), out, 0);
        return out;
    }

    /** Writes the hash of already-encoded txn bytes at {@code dst[offset..offset+16)}. */
    static void writeTo(byte[] txnUtf8, byte[] dst, int offset) {
        HashValue128 h = XXH3_128.hashBytesTo128Bits(txnUtf8);
        putLongBigEndian(dst, offset, h.getMostSignificantBits());
        putLongBigEndian(dst, offset + 8, h.getLeastSignificantBits());
    }

    private static void putLongBigEndian(byte[] dst, int offset, long v) {
        for (int i = 7; i >= 0; i--) {
            dst[offset + i] = (byte) v;
            v >>>= 8;
        }
    }
}
