package io.queen.timers.sweeper.fail;

import java.time.Instant;
import java.util.UUID;

/** A failed timer after the fail: its attempts now, when it becomes visible again, and whether it is due for the DLQ. */
public record FailOutcome(UUID tenantId, String queue, String timerKey, int attempts, Instant retryAt, boolean exhausted) {}
