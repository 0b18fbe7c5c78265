package io.queen.timers.inspect;

import java.time.Instant;
import java.util.UUID;

/**
 * One staged timer in a listing: everything but the payload ({@code payloadBytes} is its stored size).
 * {@code recurring}: the rule of a recurring timer, whose pending occurrence this row is; null for a one-shot timer.
 */
public record TimerSummary(
        String timerKey,
        String partition,
        Instant deliverAt,
        Instant visibleAt,
        TimerState state,
        String txn,
        UUID messageId,
        int payloadBytes,
        boolean payloadZstd,
        boolean encrypted,
        String producerSub,
        int attempts,
        String lastError,
        Instant claimedUntil,
        Instant createdAt,
        Instant updatedAt,
        Recurring recurring) {}
