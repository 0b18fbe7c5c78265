package io.queen.timers.bridge.wire;

/**
 * One budget per record, counted on its wire form before any of it becomes objects: its key, its value and its headers
 * (how many, and their bytes) against the limits below, and what the JVM will hold for it once it is read. The bridge's
 * reader ({@code fetch.RecordDecoder}) answers a record beyond any limit {@code rejected}/{@code unreadable_record} in its
 * place, and the poll's and the batch's byte budgets count {@link #heldBytes} of every record they take.
 *
 * @param valueMaxBytes   the longest value a valid command has ({@link WireLimits#maxValueBytes()}); a longer one within
 *                        the body limit is read, and the parser answers it payload_too_large from its length
 * @param headersMaxCount bridge.record.headers.max.count
 * @param headersMaxBytes bridge.record.headers.max.bytes: the names' and values' bytes of all the record's headers
 */
public record RecordLimits(int valueMaxBytes, int headersMaxCount, int headersMaxBytes) {

    /** The settings of the header limits (declared, with their defaults and ranges, by the bridge's settings). */
    public static final String HEADERS_MAX_COUNT = "bridge.record.headers.max.count";
    public static final String HEADERS_MAX_BYTES = "bridge.record.headers.max.bytes";

    /**
     * The longest key a valid command has is {@code <queue>/<timerKey>}: 255 ASCII characters, a slash and 512 code points
     * of up to 4 bytes, 2,304 bytes. A longer key cannot match its command (key_mismatch), so it is not read.
     */
    public static final int KEY_MAX_BYTES = 4096;

    /**
     * Heap one header holds besides its bytes, at most: the header object (32 bytes with compressed references, 48
     * without), its name's String (24) and the name's and value's array headers (16 each, plus up to 7 of padding each),
     * and its slot in the record's list (4 or 8), rounded up. Its name's bytes are counted twice ({@link #heldBytes}):
     * a name that is not Latin-1 is held as UTF-16.
     */
    public static final int HEADER_OBJECT_BYTES = 128;

    /**
     * Heap one record holds besides its key's, value's and headers' bytes, at most: the record and its headers' object,
     * list and array, the leader epoch, the key's and value's array headers and the wrapper the reader hands over.
     */
    public static final int RECORD_OBJECT_BYTES = 512;

    /**
     * Room a record's framing takes beside its key, value and headers: its length, attributes, timestamp and offset
     * deltas, key and value lengths and header count (at most 35 bytes as varints), rounded up.
     */
    static final int RECORD_FRAMING_BYTES = 64;

    /** Two varints of at most 5 bytes each: the framing of one header's name and value. */
    static final int HEADER_FRAMING_BYTES = 10;

    public RecordLimits {
        if (valueMaxBytes < 0 || headersMaxCount < 0 || headersMaxBytes < 0) {
            throw new IllegalArgumentException("record limits are not negative: value " + valueMaxBytes + ", headers "
                    + headersMaxCount + " and " + headersMaxBytes + " bytes");
        }
    }

    /** Limits for {@code wire}'s values and the given header limits. */
    public static RecordLimits of(WireLimits wire, int headersMaxCount, int headersMaxBytes) {
        return new RecordLimits(wire.maxValueBytes(), headersMaxCount, headersMaxBytes);
    }

    /**
     * The longest record body read: everything a record within every limit can hold, its value at the longest valid
     * length (1,118,912 bytes at the defaults). A body that declares more is not read: in a compressed batch, neither are
     * the later records of its batch, which could only be found by decompressing the declared length (up to 2 GiB).
     */
    public int bodyMaxBytes() {
        long max = (long) valueMaxBytes + KEY_MAX_BYTES + headersMaxBytes + (long) headersMaxCount * HEADER_FRAMING_BYTES
                + RECORD_FRAMING_BYTES;
        return (int) Math.min(Integer.MAX_VALUE - 8, max);
    }

    /**
     * What the JVM holds for a record once it is read: its key and value, each header's name (twice: it may be UTF-16)
     * and value, and the objects around them. Counted from the wire's lengths, before any of them exists.
     */
    public static long heldBytes(int keyBytes, int valueBytes, int headerCount, long headerNameBytes, long headerValueBytes) {
        return RECORD_OBJECT_BYTES + (long) Math.max(0, keyBytes) + Math.max(0, valueBytes)
                + (long) headerCount * HEADER_OBJECT_BYTES + 2 * headerNameBytes + headerValueBytes;
    }

    /** The most {@link #heldBytes} one record within these limits can count. */
    public long maxHeldBytes() {
        return heldBytes(KEY_MAX_BYTES, bodyMaxBytes(), headersMaxCount, headersMaxBytes, 0);
    }
}
