package io.queen.timers.bridge.wire;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.fasterxml.jackson.databind.util.RawValue;
import io.queen.timers.core.kafka.RecordKey;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;

/**
 * Writes commands in the JSON envelope form (docs/formats.md#envelope-form): what a producer sends. Used by the CLI's
 * {@code schedule}/{@code cancel} and by tests. The record key must be {@link #key}.
 *
 * <pre>{@code
 * producer.send(new ProducerRecord<>(topic, CommandJson.key(q, k), CommandJson.schedule(q, k, Duration.ofMinutes(1), "txn-1", "{\"a\":1}")));
 * }</pre>
 */
public final class CommandJson {

    private static final ObjectMapper JSON = new ObjectMapper();

    private CommandJson() {}

    /** The record key of every command for this timer, UTF-8. */
    public static byte[] key(String queue, String timerKey) {
        return RecordKey.of(queue, timerKey).getBytes(StandardCharsets.UTF_8);
    }

    public static byte[] schedule(String queue, String timerKey, Duration delay, String txn, String payloadJson) {
        return encode(Op.SCHEDULE, queue, timerKey, null, delay.toMillis(), null, txn, payloadJson);
    }

    public static byte[] scheduleAt(String queue, String timerKey, Instant deliverAt, String txn, String payloadJson) {
        return encode(Op.SCHEDULE, queue, timerKey, null, null, deliverAt, txn, payloadJson);
    }

    public static byte[] reschedule(String queue, String timerKey, Duration delay, String txn, String payloadJson) {
        return encode(Op.RESCHEDULE, queue, timerKey, null, delay.toMillis(), null, txn, payloadJson);
    }

    public static byte[] rescheduleAt(String queue, String timerKey, Instant deliverAt, String txn, String payloadJson) {
        return encode(Op.RESCHEDULE, queue, timerKey, null, null, deliverAt, txn, payloadJson);
    }

    public static byte[] cancel(String queue, String timerKey) {
        return encode(Op.CANCEL, queue, timerKey, null, null, null, null, null);
    }

    /**
     * Any command. For schedule/reschedule give exactly one of {@code delayMs} and {@code deliverAt},
     * a txn and a payload ({@code payloadJson} is JSON text, for example {@code "null"} or {@code "{\"id\":1}"});
     * {@code partition} null means Default. Nothing is validated here: the bridge does that.
     */
    public static byte[] encode(Op op, String queue, String timerKey, String partition, Long delayMs, Instant deliverAt,
                                String txn, String payloadJson) {
        ObjectNode n = JSON.createObjectNode();
        n.put("op", op.wireName());
        n.put("queue", queue);
        n.put("timerKey", timerKey);
        if (partition != null) {
            n.put("partition", partition);
        }
        if (delayMs != null) {
            n.put("delayMs", delayMs);
        }
        if (deliverAt != null) {
            n.put("deliverAt", deliverAt.toString());
        }
        if (txn != null) {
            n.put("txn", txn);
        }
        try {
            if (payloadJson != null) {
                JSON.readTree(payloadJson); // well-formed, or the caller hears it here; the text itself is sent as given
                byte[] raw = payloadJson.getBytes(StandardCharsets.UTF_8);
                n.putRawValue("payload", new RawValue(new String(RawJson.compact(raw, 0, raw.length), StandardCharsets.UTF_8)));
            }
            return JSON.writeValueAsBytes(n);
        } catch (JsonProcessingException e) {
            throw new IllegalArgumentException("payload is not JSON: " + e.getOriginalMessage(), e);
        }
    }
}
