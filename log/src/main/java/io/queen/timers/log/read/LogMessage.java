package io.queen.timers.log.read;

import io.queen.timers.log.codec.Frame;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.UUID;

/**
 * One message of the log as a reader sees it: where it is (partition, offset), when its segment was
 * pushed ({@code createdAt}, PostgreSQL's clock), and the decoded frame.
 */
public record LogMessage(UUID partitionId, String partition, long offset, Instant createdAt, Frame frame) {

    /** The W3C trace id the scheduling command carried (frame flag 1), as 32 hex digits, or null (docs/tracing.md#trace-context). */
    public String traceId() {
        UUID t = frame.traceId();
        return t == null ? null : String.format("%016x%016x", t.getMostSignificantBits(), t.getLeastSignificantBits());
    }

    public UUID messageId() {
        return frame.messageId();
    }

    public String txn() {
        return frame.txn();
    }

    /** Null when the frame carries none. */
    public String producerSub() {
        return frame.producerSub();
    }

    public byte[] payload() {
        return frame.payload();
    }

    /**
     * The payload as UTF-8 text (JSON, for timers fired by this project). Lenient: bytes that are not
     * UTF-8 show as U+FFFD, so an encrypted or binary payload still prints; use {@link #payload()}
     * for the exact bytes.
     */
    public String payloadText() {
        return new String(frame.payload(), StandardCharsets.UTF_8);
    }
}
