package io.queen.timers.client.audit;

import io.queen.timers.client.command.Op;
import io.queen.timers.client.command.RejectReason;
import io.queen.timers.client.command.TraceParent;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.UUID;

/**
 * One audit event, one record type per {@code type} (docs/formats.md#audit-events-on-the-topic); {@link AuditEvents#parse}
 * reads them. The set is sealed: an {@code instanceof} chain over it knows every case.
 */
public sealed interface AuditEvent {

    Meta meta();

    default EventType type() {
        return meta().type();
    }

    /**
     * What every event carries: a stable {@code eventId} to deduplicate on (publishing is
     * at-least-once), when it was written, the tenant; when known, who sent the command
     * ({@code producerSub}) and the trace of the command that created the timer, when it carried a
     * W3C {@code traceparent} ({@code traceId}, {@code spanId}, {@code traceFlags} as sent, and {@code traceState} when
     * it carried a valid one); null otherwise. {@code traceFlags} is null on an event whose stored context has no flags byte (24 bytes).
     */
    record Meta(UUID eventId, EventType type, OffsetDateTime at, UUID tenant, String producerSub, String traceId, String spanId,
                String traceFlags, String traceState) {

        /** An event without flags or tracestate (its stored context has no flags byte). */
        public Meta(UUID eventId, EventType type, OffsetDateTime at, UUID tenant, String producerSub, String traceId, String spanId) {
            this(eventId, type, at, tenant, producerSub, traceId, spanId, null, null);
        }

        /**
         * The trace to continue (docs/tracing.md#trace-context): hand {@link TraceParent#header()} and
         * {@link TraceParent#traceState()} to a W3C propagator; empty for an untraced timer.
         */
        public Optional<TraceParent> trace() {
            return traceId == null || spanId == null ? Optional.empty() : Optional.of(TraceParent.of(traceId, spanId, traceFlags, traceState));
        }
    }

    /** The command record a verdict answers: topic, partition, offset. */
    record Source(String topic, int partition, long offset) {}

    /** An answer to one command record. */
    sealed interface Verdict extends AuditEvent {
        Source source();
    }

    /** A verdict about a timer (every verdict but {@link Rejected}). */
    sealed interface TimerVerdict extends Verdict {
        String queue();

        String timerKey();

        /** The op the command named (the verdict says what happened, whichever op was used). */
        Op op();
    }

    /** The timer did not exist and is now pending, as a new message. */
    record Scheduled(Meta meta, Source source, String queue, String timerKey, Op op, String partition, String txn,
                     UUID messageId, Instant deliverAt) implements TimerVerdict {}

    /** The pending timer was replaced: time, txn, payload, partition; the message id is kept. */
    record Rescheduled(Meta meta, Source source, String queue, String timerKey, Op op, String partition, String txn,
                       UUID messageId, Instant deliverAt) implements TimerVerdict {}

    /** The pending timer was deleted: its message will not arrive. */
    record Cancelled(Meta meta, Source source, String queue, String timerKey, Op op, UUID messageId) implements TimerVerdict {}

    /** A cancel of a timer that is not pending: it may already have been delivered (the log is the authority). */
    record Absent(Meta meta, Source source, String queue, String timerKey, Op op) implements TimerVerdict {}

    /** The timer is being fired right now: the command changed nothing. */
    record TooLate(Meta meta, Source source, String queue, String timerKey, Op op, UUID messageId) implements TimerVerdict {}

    /** The record is not a valid command; {@code error} says why in words. Its key is not read: it may be anything. */
    record Rejected(Meta meta, Source source, RejectReason reason, String error) implements Verdict {}

    /**
     * Where an event of a recurring timer's occurrence stands in its series (docs/commands.md#recurring-timers): the occurrence's
     * instant, its number in the series (1 for the first), the occurrence staged after it ({@code next}, null when the
     * series ended with this one), the range of occurrences the catch-up policy passed over (null when none), why the series
     * ended with it ({@code ended}, null while it goes on) and, on a dead letter, how many of its occurrences in a row were
     * dead-lettered, this one included ({@code deadLettersInRow}, null on other events).
     */
    record Occurrence(Instant occurrence, long seq, Instant next, Range skipped, SeriesEnd ended, Integer deadLettersInRow) {

        /** An occurrence's place without an end or a run of dead letters (as written before series could end). */
        public Occurrence(Instant occurrence, long seq, Instant next, Range skipped) {
            this(occurrence, seq, next, skipped, null, null);
        }

        /** The occurrence staged after this one; empty when the series ended with it. */
        public Optional<Instant> nextOccurrence() {
            return Optional.ofNullable(next);
        }

        /** The occurrences passed over, first and last; empty when none were. */
        public Optional<Range> skippedRange() {
            return Optional.ofNullable(skipped);
        }

        /**
         * Why the series ended with this occurrence; empty while it goes on, and for an event written before series could end (a
         * series that ended by its maxOccurrences or endAt then said so by {@code next} alone).
         */
        public Optional<SeriesEnd> endReason() {
            return Optional.ofNullable(ended);
        }

        /** On a dead letter of a series: its run of dead letters in a row, this one included (a delivery resets it). */
        public OptionalInt deadLetterRun() {
            return deadLettersInRow == null ? OptionalInt.empty() : OptionalInt.of(deadLettersInRow);
        }
    }

    /** The first and the last of a run of occurrences, both included. */
    record Range(Instant from, Instant to) {}

    /**
     * The timer's message is in the log at {@code offset} of its queue's {@code partition}. {@code occurrence} is null
     * for a one-shot timer.
     */
    record Fired(Meta meta, String queue, String timerKey, String partition, String txn, UUID messageId, Instant deliverAt,
                 long offset, long lateMs, int attempts, Occurrence occurrence) implements AuditEvent {

        /** A one-shot timer's fire (as written before recurring timers). */
        public Fired(Meta meta, String queue, String timerKey, String partition, String txn, UUID messageId, Instant deliverAt,
                     long offset, long lateMs, int attempts) {
            this(meta, queue, timerKey, partition, txn, messageId, deliverAt, offset, lateMs, attempts, null);
        }

        /** The series position when this fire was an occurrence of a recurring timer. */
        public Optional<Occurrence> recurrence() {
            return Optional.ofNullable(occurrence);
        }
    }

    /** A fire of this timer failed; it backs off and is tried again. */
    record Retrying(Meta meta, String queue, String timerKey, String partition, String txn, UUID messageId, Instant deliverAt,
                    int attempts, String error) implements AuditEvent {}

    /**
     * The timer failed too often and moved to {@code queen.log_dlq}: it will not fire. For an occurrence of a recurring
     * timer ({@code occurrence} not null) the series goes on at {@code occurrence.next()}, unless it ended with it
     * ({@code occurrence.endReason()}: {@link SeriesEnd#DEAD_LETTERS} after too many in a row, {@code occurrence.deadLetterRun()}).
     */
    record DeadLettered(Meta meta, String queue, String timerKey, String partition, String txn, UUID messageId,
                        Instant deliverAt, int attempts, String error, Occurrence occurrence) implements AuditEvent {

        /** A one-shot timer's dead letter (as written before recurring timers). */
        public DeadLettered(Meta meta, String queue, String timerKey, String partition, String txn, UUID messageId,
                            Instant deliverAt, int attempts, String error) {
            this(meta, queue, timerKey, partition, txn, messageId, deliverAt, attempts, error, null);
        }

        /** The series position when this was an occurrence of a recurring timer. */
        public Optional<Occurrence> recurrence() {
            return Optional.ofNullable(occurrence);
        }
    }

    /**
     * An occurrence of a recurring timer with catchUp {@code none} that was not delivered, because a later one was
     * already due when the sweeper reached it: {@code occurrence.skipped()} names it and the last one missed, and the
     * series resumes at {@code occurrence.next()}. {@code txn} is the occurrence's ({@code <series txn>@<instant>}).
     */
    record Skipped(Meta meta, String queue, String timerKey, String partition, String txn, UUID messageId, Instant deliverAt,
                   Occurrence occurrence) implements AuditEvent {}

    /**
     * A bridge group's stored offset was moved on purpose: by `queen-timers offsets set` (a backward move only with
     * {@code replay}: the records in between are applied again) or, for a new group, by bridge.start.position=latest.
     * {@code from} is null when none was stored; {@code by} is the database's record of who (login role @ client
     * address), {@code clientLabel} what the client said of itself (absent for the bridge's own move).
     */
    record OffsetMoved(Meta meta, String group, String topic, int partition, Long from, long to, String reason, boolean replay,
                       String by, String clientLabel) implements AuditEvent {}

    /**
     * A dead letter ({@link DeadLettered}, a row of {@code queen.log_dlq}) was removed by `queen-timers dead-letters`:
     * {@code how} is {@code replayed} (scheduled again through the command topic; {@code state} says what the database saw:
     * {@code pending} or {@code fired}; {@code verdictEventId} names the replay's verdict, whose trace is this event's) or
     * {@code dropped}. {@code timerKey} is null only for a dead letter written before its key was recorded, dropped
     * without naming it; {@code by} is the database's record of who, {@code clientLabel} the client's claim.
     */
    record DeadLetterRemoved(Meta meta, UUID deadLetterId, String queue, String timerKey, String partition, String txn,
                             UUID messageId, String error, Integer attempts, String how, String state, UUID verdictEventId,
                             String reason, String by, String clientLabel) implements AuditEvent {}
}
