package io.queen.timers.bridge.wire;

import io.queen.timers.client.command.Op;
import io.queen.timers.client.command.WireFormat;
import java.time.Instant;

/**
 * A valid command, ready to apply. {@code deliverAt}, {@code txn} and {@code payload} are null for a
 * cancel. {@code payload} is the compact UTF-8 JSON the fired frame will carry.
 */
public record Command(Op op, String queue, String timerKey, String partition, Instant deliverAt, String txn, byte[] payload)
        implements Parsed {

    public static final String DEFAULT_PARTITION = WireFormat.DEFAULT_PARTITION;

    /** The record key every command for this timer must carry: {@code <queue>/<timerKey>}. */
    public String kafkaKey() {
        return WireFormat.key(queue, timerKey);
    }
}
