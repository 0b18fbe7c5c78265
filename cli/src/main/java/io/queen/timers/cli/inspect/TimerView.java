package io.queen.timers.cli.inspect;

import java.time.Instant;
import java.util.UUID;

/**
 * One staged timer with its payload as stored ({@code payloadZstd}: compressed; never decrypted).
 * {@code recurring}: the rule of a recurring timer, whose pending occurrence this row is; null for a one-shot timer.
 */
public record TimerView(
        UUID tenantId,
        String queue,
        String timerKey,
        String partition,
        Instant deliverAt,
        Instant visibleAt,
        TimerState state,
        String txn,
        UUID messageId,
        byte[] payload,
        boolean payloadZstd,
        boolean encrypted,
        String producerSub,
        int attempts,
        String lastError,
        Instant claimedUntil,
        Instant createdAt,
        Instant updatedAt,
        Instant dbNow,
        Recurring recurring) {}
