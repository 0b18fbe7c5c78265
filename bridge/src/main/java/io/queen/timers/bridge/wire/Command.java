package io.queen.timers.bridge.wire;

import io.queen.timers.core.kafka.RecordKey;
import java.time.Instant;

/**
 * A valid command, ready to apply. {@code deliverAt}, {@code txn} and {@code payload} are null for a
 * cancel. {@code payload} is the compact UTF-8 JSON the fired frame will carry.
 */
public record Command(Op op, String queue, String timerKey, String partition, Instant deliverAt, String txn, byte[] payload)
        implements Parsed {

    public static final String DEFAULT_PARTITION = "Default";

    /** The record key every command for this timer must carry: {@code <queue>/<timerKey>}. */
    public String kafkaKey() {
        return RecordKey.of(queue, timerKey);
    }
}
