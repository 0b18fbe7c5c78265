package io.queen.timers.log.push;

import java.time.Instant;
import java.util.UUID;

/**
 * Where a pushed segment landed: frame j of it has offset {@code baseOffset + j} and the segment's
 * {@code createdAt} (PostgreSQL's clock, stamped under the partition lock, microseconds).
 */
public record Appended(Destination destination, UUID partitionId, long baseOffset, int count, Instant createdAt) {

    /** The offset of the segment's last frame (inclusive). */
    public long endOffset() {
        return baseOffset + count - 1;
    }
}
