package io.queen.timers.sweeper.fail;

import java.util.UUID;

/** A timer moved to queen.log_dlq: the DLQ row's id and the partition it is filed under. */
public record DeadLettered(UUID tenantId, String queue, String timerKey, UUID dlqId, UUID partitionId) {}
