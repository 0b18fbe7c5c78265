package io.queen.timers.sweeper.claim;

import com.fasterxml.jackson.databind.node.ObjectNode;
import io.queen.timers.core.recur.Recurrence;
import java.time.Instant;
import org.slf4j.LoggerFactory;
import java.util.UUID;

/**
 * One timer in this sweeper's hands: the staging row as the claim returned it, in groups by what each part is for.
 * {@code recurrence}: the rule of a recurring timer's series (null for a one-shot timer).
 *
 * @param key      which timer
 * @param schedule when it is due, and its series' rule
 * @param message  what the frame it becomes in the log carries besides the payload
 * @param payload  the payload as stored
 * @param lease    this sweeper's claim of it
 * @param history  what happened to it before this claim
 */
public record ClaimedTimer(Key key, Schedule schedule, Message message, Payload payload, Lease lease, History history) {

    /** Which timer: the staging row's primary key. */
    public record Key(UUID tenantId, String queue, String timerKey) {}

    /**
     * When it is due: {@code visibleAt} is the PRE-claim value (the order the timer enters the log); {@code recurrence}
     * its series' rule as stored (null: a one-shot timer).
     */
    public record Schedule(Instant deliverAt, Instant visibleAt, String recurrence) {
        /** A one-shot timer's schedule. */
        public static Schedule once(Instant deliverAt, Instant visibleAt) {
            return new Schedule(deliverAt, visibleAt, null);
        }
    }

    /**
     * What the frame carries besides the payload: the destination partition, the transaction id Queen deduplicates by,
     * the message id, the producer that scheduled it and the W3C trace context its command carried (or null).
     */
    public record Message(String partition, String txn, UUID messageId, String producerSub, byte[] traceContext) {}

    /**
     * The payload as stored: {@code zstd} says whether compressed; {@code encrypted} whether it is the bridge's sealed
     * envelope. {@code bytes} is null on a timer held only by key and token (a loop's hand-back list).
     */
    public record Payload(byte[] bytes, boolean zstd, boolean encrypted) {}

    /**
     * This sweeper's claim: {@code claimToken} is what the fire, the fail and the release must present;
     * {@code claimedAt} the database's clock as the claim read it, which a recurring timer's plan is made by (null on a
     * timer not built by a claim: it cannot be planned).
     */
    public record Lease(UUID claimToken, Instant claimedUntil, DatabaseTime claimedAt) {}

    /**
     * What happened before this claim: permanent failures spent ({@code attempts}) and the last one's error;
     * {@code deaths} counts the leases of it that ran out in a sweeper's hands.
     */
    public record History(int attempts, String lastError, int deaths) {
        /** A timer that never failed. */
        public static final History NONE = new History(0, null, 0);
    }

    /**
     * This timer held by key and token only: without its payload, error text, trace context, rule and claim clock (what a
     * hand-back needs, nothing it holds).
     */
    public ClaimedTimer keyAndToken() {
        return new ClaimedTimer(key, Schedule.once(schedule.deliverAt(), schedule.visibleAt()),
                new Message(message.partition(), message.txn(), message.messageId(), message.producerSub(), null),
                new Payload(null, false, payload.encrypted()), new Lease(lease.claimToken(), lease.claimedUntil(), null),
                new History(history.attempts(), null, history.deaths()));
    }

    /** The W3C trace id the command carried (the first 16 bytes of trace_context), or null: the frame's flag 1. */
    public UUID traceId() {
        if (message.traceContext() == null) {
            return null;
        }
        java.nio.ByteBuffer b = java.nio.ByteBuffer.wrap(message.traceContext());
        return new UUID(b.getLong(), b.getLong());
    }

    /**
     * Whether a lease of this timer ever ran out in a sweeper's hands since it was scheduled ({@code deaths}):
     * the sweeper that held it died, stalled past the lease, or lost the database, and this timer may be why.
     * A suspect is fired in a small group or alone (SuspectPolicy) and never decompressed for its dead-letter.
     */
    public boolean suspect() {
        return history.deaths() > 0;
    }

    /** Whether this is an occurrence of a recurring timer (its rule in {@link Schedule#recurrence}). */
    public boolean recurring() {
        return schedule.recurrence() != null;
    }

    /**
     * What follows this occurrence now, by the database's clock ({@link Lease#claimedAt}), under its rule (docs/recurring.md);
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
        if (lease.claimedAt() == null) {
            throw new IllegalStateException("timer " + name() + ": a recurring timer is planned by the database's clock its claim"
                    + " read, and this one was not built by a claim");
        }
        Instant now = lease.claimedAt().now();
        try {
            Recurrence.Stored s = Recurrence.fromJson(schedule.recurrence());
            // a series a too_late cancel stopped: this occurrence goes out whatever catchUp says (too_late promised it);
            // the stored functions read the mark and stage no successor (timer_series_next_v1)
            boolean last = leaving || s.isStopped();
            return new Planned(last ? s.rule().planLeaving(schedule.deliverAt(), s.seq(), now) : s.rule().plan(schedule.deliverAt(), s.seq(), now), s.seq());
        } catch (RuntimeException e) {
            // A rule that cannot be planned (a row edited by hand, a cron the library cannot step) must not stop the
            // sweeper: this occurrence is delivered and the series ends with it, which its event says ("ended": "rule_unreadable").
            LoggerFactory.getLogger(ClaimedTimer.class).error("timer {}: its recurrence {} cannot be planned ({}): the series ends"
                    + " with this occurrence", name(), schedule.recurrence(), e.toString());
            return new Planned(new Recurrence.Plan(true, null, null, null, Recurrence.End.RULE_UNREADABLE), 1);
        }
    }

    /** "tenant/queue/key": how a log line or an error names this timer. */
    public String name() {
        return key.tenantId() + "/" + key.queue() + "/" + key.timerKey();
    }
}
