package io.queen.timers.bridge.wire;

import com.fasterxml.jackson.core.StreamReadConstraints;
import java.time.Duration;

/**
 * The configurable limits of validation: the horizon, the payload size and a recurring timer's shortest period
 * (bridge.horizon, bridge.payload.max.bytes, recurring.min.period). What a record may hold around its value (key,
 * headers) is {@link RecordLimits}'.
 */
public record WireLimits(Duration horizon, int payloadMaxBytes, Duration recurringMinPeriod) {
    /** The settings' defaults (BridgeSettings). */
    public static final WireLimits DEFAULTS = new WireLimits(Duration.ofDays(90), 1 << 20, Duration.ofSeconds(10));

    /**
     * Limits that allow the shortest period the wire allows at all ({@code WireFormat.EVERY_MIN}, 1 s): for tools that
     * read commands as any deployment might accept them (the fault harness's generator), not a deployment's default.
     */
    public WireLimits(Duration horizon, int payloadMaxBytes) {
        this(horizon, payloadMaxBytes, io.queen.timers.client.command.WireFormat.EVERY_MIN);
    }

    /**
     * Room for everything of a command but its payload: the field names and the queue, timer key, partition,
     * txn and time, each at its longest and JSON-escaped at 12 bytes per code point (a \\u-escaped surrogate
     * pair), plus whitespace. The longest fields are txn (1,024 code points), timer key (512) and partition
     * (255): about 22 KiB escaped, so 32 KiB holds every valid envelope.
     */
    public static final int ENVELOPE_MAX_BYTES = 32 * 1024;

    /** Nesting depth and number length a payload may use: Jackson's own defaults, stated here as wire limits. */
    public static final int MAX_NESTING_DEPTH = 1000;
    public static final int MAX_NUMBER_LENGTH = 1000;

    /**
     * The longest record value that can hold a valid command: the payload limit plus {@link #ENVELOPE_MAX_BYTES}.
     * A longer value is rejected payload_too_large from its length alone, before any JSON is read.
     */
    public int maxValueBytes() {
        return (int) Math.min(Integer.MAX_VALUE - 8, (long) payloadMaxBytes + ENVELOPE_MAX_BYTES);
    }

    /**
     * Jackson's read limits from the wire's: no document, string or name longer than a valid value can hold. A string
     * between the payload limit and that is read, so that the payload's own check answers payload_too_large for it.
     */
    public StreamReadConstraints readConstraints() {
        return StreamReadConstraints.builder()
                .maxDocumentLength(maxValueBytes())
                .maxStringLength(maxValueBytes())
                .maxNameLength(maxValueBytes())
                .maxNestingDepth(MAX_NESTING_DEPTH)
                .maxNumberLength(MAX_NUMBER_LENGTH)
                .build();
    }
}
