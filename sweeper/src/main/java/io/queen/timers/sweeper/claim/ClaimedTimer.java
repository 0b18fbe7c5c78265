package io.queen.timers.sweeper.claim;

import java.time.Instant;
import java.util.UUID;

/**
 * One timer in this sweeper's hands: the staging row as the claim returned it. {@code visibleAt} is the
 * PRE-claim value (the order the timer enters the log); {@code claimToken} is what the fire, the fail and
 * the release must present. {@code payload} is as stored ({@code payloadZstd} says whether compressed).
 */
public record ClaimedTimer(
        UUID tenantId,
        String queue,
        String timerKey,
        String partition,
        Instant deliverAt,
        Instant visibleAt,
        String txn,
        UUID messageId,
        byte[] payload,
        boolean payloadZstd,
        boolean encrypted,
        String producerSub,
        int attempts,
        String lastError,
        UUID claimToken,
        Instant claimedUntil,
        byte[] traceContext) {

    /** A claimed timer without trace context. */
    public ClaimedTimer(UUID tenantId, String queue, String timerKey, String partition, Instant deliverAt, Instant visibleAt,
                        String txn, UUID messageId, byte[] payload, boolean payloadZstd, boolean encrypted, String producerSub,
                        int attempts, String lastError, UUID claimToken, Instant claimedUntil) {
        this(tenantId, queue, timerKey, partition, deliverAt, visibleAt, txn, messageId, payload, payloadZstd, encrypted,
                producerSub, attempts, lastError, claimToken, claimedUntil, null);
    }

    /** The W3C trace id the command carried (the first 16 bytes of trace_context, V090), or null: the frame's flag 1. */
    public UUID traceId() {
        if (traceContext == null) {
            return null;
        }
        java.nio.ByteBuffer b = java.nio.ByteBuffer.wrap(traceContext);
        return new UUID(b.getLong(), b.getLong());
    }

    /**
     * The prefix of last_error that timer_claim_v3 (V120) writes when it finds this row's previous lease run out
     * with the token still set: the sweeper holding it died, stalled past the lease, or lost the database.
     */
    public static final String ABANDONED = "abandoned:";

    /** Whether the claim found this timer's previous lease abandoned in a sweeper's hands (a suspect: see SuspectPolicy). */
    public boolean abandoned() {
        return lastError != null && lastError.startsWith(ABANDONED);
    }

    /** "tenant/queue/key": how a log line or an error names this timer. */
    public String name() {
        return tenantId + "/" + queue + "/" + timerKey;
    }
}
