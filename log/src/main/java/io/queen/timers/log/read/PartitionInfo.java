package io.queen.timers.log.read;

import java.time.Instant;
import java.util.UUID;

/**
 * A partition of a queue: {@code lastOffset} is -1 before the first push; {@code lastWriteAt} is
 * null before it.
 */
public record PartitionInfo(UUID partitionId, String name, long lastOffset, Instant lastWriteAt) {}
