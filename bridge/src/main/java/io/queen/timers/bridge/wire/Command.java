package io.queen.timers.bridge.wire;

import io.queen.timers.client.command.Op;
import io.queen.timers.client.command.TraceParent;
import io.queen.timers.client.command.WireFormat;
import java.time.Instant;

/**
 * A valid command, ready to apply. {@code deliverAt}, {@code txn} and {@code payload} are null for a
 * cancel. {@code payload} is the compact UTF-8 JSON the fired frame will carry. {@code trace} is the
 * record's W3C traceparent when it had one valid header of that name, else null.
 */
public record Command(Op op, String queue, String timerKey, String partition, Instant deliverAt, String txn, byte[] payload,
                      TraceParent trace) implements Parsed {

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
