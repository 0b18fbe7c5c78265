package io.queen.timers.faults.decode;

import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.Objects;
import java.util.UUID;

/**
 * One log frame as {@link IndependentSegmentDecoder} reads it (docs/formats.md "Log frame"). The harness's own type, not
 * the log module's {@code Frame}: what the checker judges must not pass through the product's reading.
 *
 * @param traceId     the W3C trace id as 32 lowercase hex digits (flag 1), or null
 * @param producerSub the producer sub (flag 2), or null
 * @param encrypted   flag 4
 */
public record DecodedFrame(UUID messageId, String traceId, String txn, String producerSub, boolean encrypted, byte[] payload) {

    /** A frame with neither trace id nor producer sub, unencrypted: what the checker's tests build. */
    public static DecodedFrame of(UUID messageId, String txn, byte[] payload) {
        return new DecodedFrame(messageId, null, txn, null, false, payload);
    }

    /**
     * RFC 9562 UUIDv7: version nibble 7 and variant 10. Every message id in the log is minted as one at schedule time
     * (docs/formats.md "Log frame"; issue 43): an id of another version was minted by some other path.
     */
    public static boolean isUuidV7(UUID id) {
        return id.version() == 7 && id.variant() == 2;
    }

    public String payloadText() {
        return new String(payload, StandardCharsets.UTF_8);
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof DecodedFrame f && messageId.equals(f.messageId) && Objects.equals(traceId, f.traceId)
                && txn.equals(f.txn) && Objects.equals(producerSub, f.producerSub) && encrypted == f.encrypted
                && Arrays.equals(payload, f.payload);
    }

    @Override
    public int hashCode() {
        return messageId.hashCode() * 31 + Arrays.hashCode(payload);
    }

    @Override
    public String toString() {
        return "DecodedFrame[" + messageId + (traceId == null ? "" : " trace " + traceId) + " txn " + txn
                + (producerSub == null ? "" : " sub " + producerSub) + (encrypted ? " encrypted" : "") + " payload "
                + (payload.length <= 64 ? HexFormat.of().formatHex(payload) : payload.length + " bytes") + "]";
    }
}
