package io.queen.timers.faults.load;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.queen.timers.log.codec.TxnHash;
import java.nio.ByteBuffer;
import java.time.Instant;

/**
 * What the generator meant one record to be, recorded when it wrote the record: the oracle's input.
 * The checker replays these (never the bridge's reading of the record) against the semantics.
 *
 * @param tenant     0 for the default tenant's topic, 1 for tenant B's
 * @param op         {@code schedule}, {@code reschedule} or {@code cancel}; null for a hostile record
 * @param delayMs    the delay a schedule gives (counted from the record's timestamp), or null
 * @param deliverAt  the time a schedule gives instead, or null
 * @param payloadHash {@link #payloadHash} of the payload a schedule carries
 * @param rejectReason for a hostile record, the reason the bridge must give (docs/commands.md#reject-reasons-closed-list)
 * @param series     for a recurring schedule (no delayMs, no deliverAt), its rule and occurrences; else null
 */
public record Intent(long seq, CommandKind kind, int tenant, String op, String queue, String key, String partition, String txn,
                     Long delayMs, Instant deliverAt, long payloadHash, String rejectReason, Series series) {

    private static final ObjectMapper JSON = new ObjectMapper();

    /** A one-shot command or a hostile record. */
    public Intent(long seq, CommandKind kind, int tenant, String op, String queue, String key, String partition, String txn,
                  Long delayMs, Instant deliverAt, long payloadHash, String rejectReason) {
        this(seq, kind, tenant, op, queue, key, partition, txn, delayMs, deliverAt, payloadHash, rejectReason, null);
    }

    public boolean recurring() {
        return series != null;
    }

    public boolean cancel() {
        return "cancel".equals(op);
    }

    /**
     * The delivery time this command names, from the record's timestamp for a delay (docs/commands.md#two-forms, its time rules);
     * a series' first occurrence.
     */
    public Instant due(long recordTimestampMs) {
        if (series != null) {
            return series.occurrences().get(0);
        }
        return deliverAt != null ? deliverAt : Instant.ofEpochMilli(recordTimestampMs + delayMs);
    }

    /** A payload's identity: the hash of its compact JSON (the bridge drops whitespace only; Jackson's tree keeps the rest). */
    public static long payloadHash(JsonNode payload) {
        try {
            return ByteBuffer.wrap(TxnHash.of(JSON.writeValueAsString(payload))).getLong();
        } catch (com.fasterxml.jackson.core.JsonProcessingException e) {
            throw new IllegalStateException(e);
        }
    }
}
