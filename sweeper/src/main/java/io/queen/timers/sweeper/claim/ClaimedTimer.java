package io.queen.timers.sweeper.claim;

import com.fasterxml.jackson.databind.node.ObjectNode;
import io.queen.timers.core.recur.Recurrence;
import java.time.Instant;
import org.slf4j.LoggerFactory;
import java.util.UUID;

/**
 * One timer in this sweeper's hands: the staging row as the claim returned it. {@code visibleAt} is the
 * PRE-claim value (the order the timer enters the log); {@code claimToken} is what the fire, the fail and
 * the release must present. {@code payload} is as stored ({@code payloadZstd} says whether compressed).
 * {@code deaths} counts the leases of it that ran out in a sweeper's hands. {@code claimedAt}: the database's clock
 * as the claim read it, which a recurring timer's plan is made by (null on a timer not built by a claim: it cannot be planned).
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
        byte[] traceContext,
        int deaths,
        String recurrence,
        DatabaseTime claimedAt) {

    /** A one-shot claimed timer (no recurrence). */
    public ClaimedTimer(UUID tenantId, String queue, String timerKey, String partition, Instant deliverAt, Instant visibleAt,
                        String txn, UUID messageId, byte[] payload, boolean payloadZstd, boolean encrypted, String producerSub,
                        int attempts, String lastError, UUID claimToken, Instant claimedUntil, byte[] traceContext, int deaths) {
        this(tenantId, queue, timerKey, partition, deliverAt, visibleAt, txn, messageId, payload, payloadZstd, encrypted,
                producerSub, attempts, lastError, claimToken, claimedUntil, traceContext, deaths, null, null);
    }

    /** A claimed timer without trace context. */
    public ClaimedTimer(UUID tenantId, String queue, String timerKey, String partition, Instant deliverAt, Instant visibleAt,
                        String txn, UUID messageId, byte[] payload, boolean payloadZstd, boolean encrypted, String producerSub,
                        int attempts, String lastError, UUID claimToken, Instant claimedUntil) {
        this(tenantId, queue, timerKey, partition, deliverAt, visibleAt, txn, messageId, payload, payloadZstd, encrypted,
                producerSub, attempts, lastError, claimToken, claimedUntil, null, 0);
    }

    /** A claimed timer that was never in a death. */
    public ClaimedTimer(UUID tenantId, String queue, String timerKey, String partition, Instant deliverAt, Instant visibleAt,
                        String txn, UUID messageId, byte[] payload, boolean payloadZstd, boolean encrypted, String producerSub,
                        int attempts, String lastError, UUID claimToken, Instant claimedUntil, byte[] traceContext) {
        this(tenantId, queue, timerKey, partition, deliverAt, visibleAt, txn, messageId, payload, payloadZstd, encrypted,
                producerSub, attempts, lastError, claimToken, claimedUntil, traceContext, 0);
    }

    /** The W3C trace id the command carried (the first 16 bytes of trace_context), or null: the frame's flag 1. */
    public UUID traceId() {
        if (traceContext == null) {
            return null;
        }
        java.nio.ByteBuffer b = java.nio.ByteBuffer.wrap(traceContext);
        return new UUID(b.getLong(), b.getLong());
    }

    /**
     * Whether a lease of this timer ever ran out in a sweeper's hands since it was scheduled ({@code deaths}):
     * the sweeper that held it died, stalled past the lease, or lost the database, and this timer may be why.
     * A suspect is fired in a small group or alone (SuspectPolicy) and never decompressed for its dead-letter.
     */
    public boolean suspect() {
        return deaths > 0;
    }

    /** Whether this is an occurrence of a recurring timer (its rule in {@code recurrence}). */
    public boolean recurring() {
        return recurrence != null;
    }

    /**
     * What follows this occurrence now, by the database's clock ({@link #claimedAt}), under its rule (docs/recurring.md);
     * {@code leaving}: it leaves the table delivered or dead-lettered whatever its catch-up policy says
     * ({@link Recurrence#planLeaving}). Only for a recurring timer of a claim.
     */
    public Recurrence.Plan plan(boolean leaving) {
        return planned(leaving).plan();
    }

    /**
     * {@link #plan} as the stored functions read it, with this occurrence's number ("seq"): the fire names it in the event
     * of an occurrence whose series a cancel stopped while it was in a sweeper's hands (its row has lost the rule).
     */
    public ObjectNode planJson(boolean leaving) {
        Planned p = planned(leaving);
        return p.plan().toJson().put("seq", p.seq());
    }

    private record Planned(Recurrence.Plan plan, int seq) {}

    private Planned planned(boolean leaving) {
        if (claimedAt == null) {
            throw new IllegalStateException("timer " + name() + ": a recurring timer is planned by the database's clock its claim"
                    + " read, and this one was not built by a claim");
        }
        Instant now = claimedAt.now();
        try {
            Recurrence.Stored s = Recurrence.fromJson(recurrence);
            // a series a too_late cancel stopped: this occurrence goes out whatever catchUp says (too_late promised it);
            // the stored functions read the mark and stage no successor (timer_series_next_v1)
            boolean last = leaving || s.isStopped();
            return new Planned(last ? s.rule().planLeaving(deliverAt, s.seq(), now) : s.rule().plan(deliverAt, s.seq(), now), s.seq());
        } catch (RuntimeException e) {
            // A rule that cannot be planned (a row edited by hand, a cron the library cannot step) must not stop the
            // sweeper: this occurrence is delivered and the series ends with it, which its event says ("ended": "rule_unreadable").
            LoggerFactory.getLogger(ClaimedTimer.class).error("timer {}: its recurrence {} cannot be planned ({}): the series ends"
                    + " with this occurrence", name(), recurrence, e.toString());
            return new Planned(new Recurrence.Plan(true, null, null, null, Recurrence.End.RULE_UNREADABLE), 1);
        }
    }

    /** "tenant/queue/key": how a log line or an error names this timer. */
    public String name() {
        return tenantId + "/" + queue + "/" + timerKey;
    }
}
