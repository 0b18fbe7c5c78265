package io.queen.timers.sweeper.fire;

import io.queen.timers.sweeper.claim.ClaimedTimer;
import io.queen.timers.sweeper.pack.Segment;
import java.time.Instant;
import java.util.List;
import java.util.UUID;

/**
 * What the fire did with one segment. For {@link FireResult#FIRED}: the partition, the offset of its first
 * frame and the segment's created_at (PostgreSQL's clock, stamped under the partition lock); null otherwise.
 * For {@link FireResult#REFUSED}: {@code refused}, its timers the fire dead-lettered ({@code encryption_unavailable});
 * empty otherwise.
 */
public record SegmentOutcome(Segment segment, FireResult result, UUID partitionId, Long baseOffset, Instant createdAt,
                             List<ClaimedTimer> refused) {

    public SegmentOutcome {
        refused = List.copyOf(refused);
    }

    public SegmentOutcome(Segment segment, FireResult result, UUID partitionId, Long baseOffset, Instant createdAt) {
        this(segment, result, partitionId, baseOffset, createdAt, List.of());
    }
}
