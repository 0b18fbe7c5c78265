package io.queen.timers.sweeper.fire;

import io.queen.timers.sweeper.pack.Segment;
import java.time.Instant;
import java.util.UUID;

/**
 * What the fire did with one segment. For {@link FireResult#FIRED}: the partition, the offset of its first
 * frame and the segment's created_at (PostgreSQL's clock, stamped under the partition lock); null otherwise.
 */
public record SegmentOutcome(Segment segment, FireResult result, UUID partitionId, Long baseOffset, Instant createdAt) {}
