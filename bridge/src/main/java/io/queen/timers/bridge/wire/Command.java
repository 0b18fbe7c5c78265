package io.queen.timers.bridge.wire;

import io.queen.timers.client.command.Op;
import io.queen.timers.client.command.TraceParent;
import io.queen.timers.client.command.WireFormat;
import io.queen.timers.core.recur.Recurrence;
import java.time.Instant;

/**
 * A valid command, ready to apply: which timer ({@code queue}, {@code timerKey}, the destination {@code partition}), what
 * a schedule or reschedule sets ({@code schedule}, null for a cancel), and {@code trace}, the record's W3C traceparent
 * when it had one valid header of that name, else null.
 */
public record Command(Op op, String queue, String timerKey, String partition, Schedule schedule, TraceParent trace) implements Parsed {

    /**
     * What a schedule or reschedule sets. {@code payload} is the compact UTF-8 JSON the fired frame will carry.
     * {@code recurrence} is a recurring timer's rule (docs/recurring.md), else null: {@code deliverAt} is then its first
     * occurrence and {@code txn} that occurrence's ({@code <series txn>@<instant>}).
     */
    public record Schedule(Instant deliverAt, String txn, byte[] payload, Recurrence recurrence) {
        /** A one-shot timer's schedule. */
        public static Schedule once(Instant deliverAt, String txn, byte[] payload) {
            return new Schedule(deliverAt, txn, payload, null);
        }
    }

    /** A command without trace context. */
    public Command(Op op, String queue, String timerKey, String partition, Schedule schedule) {
        this(op, queue, timerKey, partition, schedule, null);
    }

    public static final String DEFAULT_PARTITION = WireFormat.DEFAULT_PARTITION;

    /** This command with the record's trace context. */
    public Command withTrace(TraceParent trace) {
        return new Command(op, queue, timerKey, partition, schedule, trace);
    }

    /** The recurring timer's rule, or null: for a one-shot schedule and for a cancel (which has no schedule). */
    public Recurrence recurrence() {
        return schedule == null ? null : schedule.recurrence();
    }

    /** The record key every command for this timer must carry: {@code <queue>/<timerKey>}. */
    public String kafkaKey() {
        return WireFormat.key(queue, timerKey);
    }
}
