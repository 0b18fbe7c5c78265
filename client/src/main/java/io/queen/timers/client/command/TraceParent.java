package io.queen.timers.client.command;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.List;
import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * A W3C Trace Context (https://www.w3.org/TR/trace-context/): the trace a command belongs to, the span that sent it,
 * its flags and its {@code tracestate}. A command record carrying one (headers {@value WireFormat#TRACEPARENT} and
 * {@value WireFormat#TRACESTATE}, either form) keeps it across the delay: the fired frame carries {@code traceId},
 * every audit event of the timer {@code traceId}, {@code spanId}, {@code traceFlags} (and {@code traceState}), and
 * every audit record the same as {@code traceparent}/{@code tracestate} headers (docs/tracing.md#trace-context).
 *
 * @param traceId    32 lowercase hex digits, not all zero
 * @param spanId     16 lowercase hex digits, not all zero: the parent-id of the header, the command's span
 * @param flags      2 lowercase hex digits as the producer sent them (01 = sampled); kept, never forced
 * @param traceState the producer's tracestate, normalized (members joined by ','), or null for none
 */
public record TraceParent(String traceId, String spanId, String flags, String traceState) {

    /** Version 00 exactly; a later version may append fields after a '-' (the spec's forward compatibility). */
    private static final Pattern FORMAT = Pattern.compile("([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})(-.*)?");
    private static final String ZERO_TRACE = "0".repeat(32);
    private static final String ZERO_SPAN = "0".repeat(16);
    /** A tracestate list-member, W3C section 3.3.1: key (simple or multi-tenant) '=' value. */
    private static final Pattern MEMBER = Pattern.compile(
            "(?:[a-z][_0-9a-z*/-]{0,255}|[a-z0-9][_0-9a-z*/-]{0,240}@[a-z][_0-9a-z*/-]{0,13})"
                    + "=[\\x20-\\x2b\\x2d-\\x3c\\x3e-\\x7e]{0,255}[\\x21-\\x2b\\x2d-\\x3c\\x3e-\\x7e]");
    /** The spec's bounds: at most 32 members, and 512 characters is what every vendor must pass on. */
    public static final int TRACESTATE_MAX_MEMBERS = 32;
    public static final int TRACESTATE_MAX_CHARS = 512;
    /** Bytes of a stored context before its tracestate: trace id, span id, flags. */
    private static final int FIXED_BYTES = 25;

    /** A context without tracestate. */
    public TraceParent(String traceId, String spanId, String flags) {
        this(traceId, spanId, flags, null);
    }

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

    /**
     * {@link #parse(String)} with the record's {@code tracestate}: kept when it is valid, dropped (null) when it is not,
     * which the spec allows and which never drops the traceparent itself.
     */
    public static Optional<TraceParent> parse(String traceparent, String tracestate) {
        return parse(traceparent).map(t -> t.withTraceState(tracestate));
    }

    /**
     * The tracestate normalized (empty members and the optional whitespace around members dropped), or null when it
     * is null, empty, over {@value #TRACESTATE_MAX_CHARS} characters or {@value #TRACESTATE_MAX_MEMBERS} members, or
     * any member is not {@code key=value} by the spec's grammar.
     */
    public static String normalizeTraceState(String tracestate) {
        if (tracestate == null || tracestate.length() > TRACESTATE_MAX_CHARS) {
            return null;
        }
        List<String> members = new ArrayList<>();
        for (String raw : tracestate.split(",", -1)) {
            String m = raw.strip();
            if (m.isEmpty()) {
                continue;
            }
            if (!MEMBER.matcher(m).matches() || members.size() == TRACESTATE_MAX_MEMBERS) {
                return null;
            }
            members.add(m);
        }
        return members.isEmpty() ? null : String.join(",", members);
    }

    /** This context with {@code tracestate} (normalized; null when invalid or empty). */
    public TraceParent withTraceState(String tracestate) {
        return new TraceParent(traceId, spanId, flags, normalizeTraceState(tracestate));
    }

    /** The traceparent header text, version 00, flags as received. */
    public String header() {
        return "00-" + traceId + "-" + spanId + "-" + flags;
    }

    /** Whether the producer sampled the trace (flag bit 0). */
    public boolean sampled() {
        return (Integer.parseInt(flags, 16) & 1) == 1;
    }

    /**
     * How the staged row keeps it: 16 bytes of trace id, 8 of span id, 1 of flags, then the tracestate's
     * ASCII bytes (none when there is none). A 24-byte value holds the ids only ({@link #fromBytes}).
     */
    public byte[] bytes() {
        byte[] ids = HexFormat.of().parseHex(traceId + spanId + flags);
        if (traceState == null) {
            return ids;
        }
        byte[] state = traceState.getBytes(StandardCharsets.US_ASCII);
        byte[] out = Arrays.copyOf(ids, ids.length + state.length);
        System.arraycopy(state, 0, out, ids.length, state.length);
        return out;
    }

    /**
     * The context stored as {@link #bytes()}, or empty for null or a malformed value. A 24-byte value (ids only, no
     * flags byte) reads as sampled, as {@link #of(String, String)} always did.
     */
    public static Optional<TraceParent> fromBytes(byte[] stored) {
        if (stored == null || (stored.length != 24 && stored.length < FIXED_BYTES)) {
            return Optional.empty();
        }
        HexFormat hex = HexFormat.of();
        String trace = hex.formatHex(stored, 0, 16);
        String span = hex.formatHex(stored, 16, 24);
        String flags = stored.length == 24 ? "01" : hex.formatHex(stored, 24, 25);
        String state = stored.length > FIXED_BYTES ? new String(stored, FIXED_BYTES, stored.length - FIXED_BYTES, StandardCharsets.US_ASCII) : null;
        return parse("00-" + trace + "-" + span + "-" + flags, state);
    }

    /**
     * The context a consumer of a fired message continues, from the timer's audit events: {@code traceId},
     * {@code spanId}, {@code traceFlags} and {@code traceState} as an event carries them. Give {@link #header()} (and
     * {@link #traceState()}) to a W3C propagator as the incoming traceparent (and tracestate); the consumer's span is
     * then a child of the producer's, sampled as the producer decided.
     *
     * @param flags      the event's {@code traceFlags}; null (an event without flags) reads as sampled
     * @param traceState the event's {@code traceState}, or null
     */
    public static TraceParent of(String traceId, String spanId, String flags, String traceState) {
        return parse("00-" + traceId + "-" + spanId + "-" + (flags == null ? "01" : flags), traceState)
                .orElseThrow(() -> new IllegalArgumentException("not a W3C trace id, span id and flags: " + traceId + ", " + spanId + ", " + flags));
    }

    /**
     * {@link #of(String, String, String, String)} for an event that carries no {@code traceFlags} (a stored
     * context without flags): sampled, no tracestate. An event that carries its flags should use the four-argument form, which keeps them.
     */
    public static TraceParent of(String traceId, String spanId) {
        return of(traceId, spanId, null, null);
    }
}
