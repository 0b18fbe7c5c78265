package io.queen.timers.inspect;

import io.queen.timers.log.codec.CodecException;
import io.queen.timers.log.codec.Compression;
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
        Recurring recurring) {

    /**
     * The payload's bytes as the producer sent them (still encrypted when {@code encrypted}): decompressed when stored
     * zstd, bounded by {@code maxBytes} (a corrupt size field cannot take the heap). @throws CodecException when it does
     * not decompress within the bound
     */
    public byte[] payloadBytes(int maxBytes) throws CodecException {
        return payloadZstd ? Compression.decompress(payload, maxBytes) : payload;
    }
}
