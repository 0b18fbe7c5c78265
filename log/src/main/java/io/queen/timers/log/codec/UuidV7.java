package io.queen.timers.log.codec;

import java.security.SecureRandom;
import java.util.UUID;

/**
 * UUIDv7 (RFC 9562 §5.7): 48-bit Unix milliseconds, version 7, 12 bits of sub-millisecond
 * sequence (method 1 of RFC 9562 §6.2, so ids minted by one process in one millisecond still sort in
 * mint order), variant 10, 62 random bits. Message ids are minted at schedule time, so the id is
 * known before the fire and a retried fire delivers the same id. The milliseconds are this host's wall clock: an id's
 * time orders ids, and nothing is decided by comparing it with the database's clock.
 */
public final class UuidV7 {

    private static final SecureRandom RANDOM = new SecureRandom();
    private static final Object LOCK = new Object();
    private static long lastMillis;
    private static int sequence;

    private UuidV7() {}

    public static UUID next() {
        long millis;
        int seq;
        synchronized (LOCK) {
            millis = System.currentTimeMillis();
            if (millis > lastMillis) {
                lastMillis = millis;
                sequence = RANDOM.nextInt(1 << 11); // leave room to count up within the millisecond
            } else {
                millis = lastMillis; // the clock stood still or stepped back: stay monotone
                sequence++;
                if (sequence > 0xFFF) {
                    lastMillis = ++millis;
                    sequence = 0;
                }
            }
            seq = sequence;
        }
        return of(millis, seq, RANDOM.nextLong());
    }

    /** Builds the id from its parts (exposed for tests). */
    public static UUID of(long unixMillis, int sequence12, long random62) {
        long msb = (unixMillis & 0xFFFF_FFFF_FFFFL) << 16 | 0x7000L | (sequence12 & 0xFFF);
        long lsb = (random62 & 0x3FFF_FFFF_FFFF_FFFFL) | 0x8000_0000_0000_0000L;
        return new UUID(msb, lsb);
    }

    /** The Unix milliseconds of a UUIDv7. */
    public static long unixMillis(UUID id) {
        if (id.version() != 7) {
            throw new IllegalArgumentException("not a UUIDv7: " + id);
        }
        return id.getMostSignificantBits() >>> 16;
    }
}
