package io.queen.timers.log.codec;

import java.util.Arrays;
import java.util.Objects;
import java.util.UUID;

/**
 * One message of a segment (docs/formats.md#log-frame). {@code traceId} and {@code producerSub} are optional
 * (null = absent, their flag bit is clear); an empty producer sub is present and distinct from null.
 * {@code encrypted} only marks the payload (flag 4); nothing here encrypts or decrypts.
 *
 * <p>The payload array is not copied (a fire packs up to megabytes of payloads, and a copy per
 * frame would be paid on every fire): callers hand over the array and do not mutate it afterwards.
 * equals, hashCode and toString treat the payload by content.
 */
public record Frame(UUID messageId, UUID traceId, String txn, String producerSub, boolean encrypted, byte[] payload) {

    /**
     * The largest payload a timer may carry (64 MiB): the upper bound of the bridge's
     * bridge.payload.max.bytes, and how far the sweeper and the operator tools decompress a stored
     * payload, so no payload a bridge accepted is refused later, and a stored value that claims more
     * (a corrupt or hostile zstd frame) fails alone instead of exhausting the heap.
     */
    public static final int MAX_PAYLOAD_BYTES = 64 << 20;

    public Frame {
        Objects.requireNonNull(messageId, "messageId");
        Objects.requireNonNull(txn, "txn");
        Objects.requireNonNull(payload, "payload");
    }

    /** A frame with neither trace id nor producer sub, not encrypted. */
    public static Frame of(UUID messageId, String txn, byte[] payload) {
        return new Frame(messageId, null, txn, null, false, payload);
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof Frame f
                && encrypted == f.encrypted
                && messageId.equals(f.messageId)
                && Objects.equals(traceId, f.traceId)
                && txn.equals(f.txn)
                && Objects.equals(producerSub, f.producerSub)
                && Arrays.equals(payload, f.payload);
    }

    @Override
    public int hashCode() {
        return Objects.hash(messageId, traceId, txn, producerSub, encrypted) * 31 + Arrays.hashCode(payload);
    }

    @Override
    public String toString() {
        return "Frame[messageId=" + messageId + ", traceId=" + traceId + ", txn=" + txn
                + ", producerSub=" + producerSub + ", encrypted=" + encrypted
                + ", payload=" + payload.length + " bytes]";
    }
}
