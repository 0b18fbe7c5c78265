package io.queen.timers.bridge.wire;

import io.queen.timers.client.command.Op;
import io.queen.timers.client.command.TraceParent;
import io.queen.timers.client.command.WireFormat;
import io.queen.timers.core.recur.Recurrence;
import java.time.Instant;

/**
 * A valid command, ready to apply. {@code deliverAt}, {@code txn} and {@code payload} are null for a
 * cancel. {@code payload} is the compact UTF-8 JSON the fired frame will carry. {@code trace} is the
 * record's W3C traceparent when it had one valid header of that name, else null. {@code recurrence} is a
 * recurring timer's rule (docs/recurring.md), else null: {@code deliverAt} is then its first occurrence and
 * {@code txn} that occurrence's ({@code <series txn>@<instant>}).
 */
public record Command(Op op, String queue, String timerKey, String partition, Instant deliverAt, String txn, byte[] payload,
                      TraceParent trace, Recurrence recurrence) implements Parsed {

    /** A one-shot command. */
    public Command(Op op, String queue, String timerKey, String partition, Instant deliverAt, String txn, byte[] payload,
                   TraceParent trace) {
        this(op, queue, timerKey, partition, deliverAt, txn, payload, trace, null);
    }

    /** A command without trace context. */
    public Command(Op op, String queue, String timerKey, String partition, Instant deliverAt, String txn, byte[] payload) {
        this(op, queue, timerKey, partition, deliverAt, txn, payload, null);
    }

    public static final String DEFAULT_PARTITION = WireFormat.DEFAULT_PARTITION;

    /** The record key every command for this timer must carry: {@code <queue>/<timerKey>}. */
    public String kafkaKey() {
        return WireFormat.key(queue, timerKey);
    }
}
