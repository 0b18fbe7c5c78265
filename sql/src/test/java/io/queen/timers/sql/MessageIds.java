package io.queen.timers.sql;

import java.util.UUID;
import java.util.concurrent.ThreadLocalRandom;

/**
 * A message id as the bridge mints one: a UUIDv7 of now (RFC 9562 §5.7), so no row these tests stage
 * puts an id of another version in the log (issue 43). The product's minter, io.queen.timers.log.codec.UuidV7,
 * is the log module's, which depends on this one; this copy keeps no sub-millisecond sequence, which the
 * tests here do not need.
 */
final class MessageIds {

    private MessageIds() {}

    static UUID v7() {
        ThreadLocalRandom r = ThreadLocalRandom.current();
        long msb = (System.currentTimeMillis() & 0xFFFF_FFFF_FFFFL) << 16 | 0x7000L | r.nextInt(1 << 12);
        long lsb = (r.nextLong() & 0x3FFF_FFFF_FFFF_FFFFL) | 0x8000_0000_0000_0000L;
        return new UUID(msb, lsb);
    }
}
