package io.queen.timers.client.command;

import java.util.HexFormat;
import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * A W3C Trace Context {@code traceparent} (https://www.w3.org/TR/trace-context/): the trace a command
 * belongs to and the span that sent it. A command record carrying one (header {@value WireFormat#TRACEPARENT},
 * either form) keeps it across the delay: the fired frame carries {@code traceId}, every audit event of
 * the timer {@code traceId} and {@code spanId} (README "Trace context").
 *
 * @param traceId 32 lowercase hex digits, not all zero
 * @param spanId  16 lowercase hex digits, not all zero: the parent-id of the header, the command's span
 * @param flags   2 hex digits (01 = sampled)
 */
public record TraceParent(String traceId, String spanId, String flags) {

    /** Version 00 exactly; a later version may append fields after a '-' (the spec's forward compatibility). */
    private static final Pattern FORMAT = Pattern.compile("([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})(-.*)?");
    private static final String ZERO_TRACE = "0".repeat(32);
    private static final String ZERO_SPAN = "0".repeat(16);

    /**
     * The trace of {@code header}, or empty when it is not a valid traceparent: the spec says an invalid
     * one is ignored (the trace restarts), so it never makes a command invalid.
     */
    public static Optional<TraceParent> parse(String header) {
        if (header == null) {
            return Optional.empty();
        }
        Matcher m = FORMAT.matcher(header);
        if (!m.matches() || m.group(1).equals("ff") || (m.group(1).equals("00") && m.group(5) != null)
                || m.group(2).equals(ZERO_TRACE) || m.group(3).equals(ZERO_SPAN)) {
            return Optional.empty();
        }
        return Optional.of(new TraceParent(m.group(2), m.group(3), m.group(4)));
    }

    /** The header text, version 00. */
    public String header() {
        return "00-" + traceId + "-" + spanId + "-" + flags;
    }

    /** 16 bytes of trace id then 8 of span id: how the staged row keeps it. */
    public byte[] bytes() {
        return HexFormat.of().parseHex(traceId + spanId);
    }

    /**
     * The context a consumer of a fired message continues: the timer's {@code traceId} and the command's
     * {@code spanId} (from its audit events), sampled. Give {@link #header()} to a W3C propagator as the
     * incoming traceparent; the consumer's span is then a child of the producer's.
     */
    public static TraceParent of(String traceId, String spanId) {
        return parse("00-" + traceId + "-" + spanId + "-01")
                .orElseThrow(() -> new IllegalArgumentException("not a W3C trace id and span id: " + traceId + ", " + spanId));
    }
}
