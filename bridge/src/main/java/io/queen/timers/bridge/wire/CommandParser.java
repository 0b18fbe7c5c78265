package io.queen.timers.bridge.wire;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.queen.timers.client.command.Op;
import io.queen.timers.client.command.RejectReason;
import io.queen.timers.client.command.TraceParent;
import io.queen.timers.client.command.WireFormat;
import io.queen.timers.core.recur.Recurrence;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.time.DateTimeException;
import java.time.Duration;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.util.HashMap;
import java.util.Iterator;
import java.util.Locale;
import java.util.Map;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.header.Headers;

import static io.queen.timers.client.command.WireFormat.H_DELAY_MS;
import static io.queen.timers.client.command.WireFormat.H_DELIVER_AT;
import static io.queen.timers.client.command.WireFormat.H_OP;
import static io.queen.timers.client.command.WireFormat.H_PARTITION;
import static io.queen.timers.client.command.WireFormat.H_QUEUE;
import static io.queen.timers.client.command.WireFormat.H_TIMER_KEY;
import static io.queen.timers.client.command.WireFormat.H_TXN;

/**
 * Turns one Kafka record into a {@link Command} or a {@link Rejection} (docs/formats.md#command). Validation is a
 * pure function of the record (key, value, headers, timestamp) and the limits: a record replayed
 * after a crash gets the same verdict. Nothing is written before everything is checked.
 *
 * <p>Form: a record with a {@code queen-op} header is in the headers form (the value is the raw JSON
 * payload); any other record is the JSON envelope.
 */
public final class CommandParser {

    /**
     * The latest delivery time any record may name (WireFormat.LATEST_DELIVERY): kept here under its
     * old name for the parser's tests.
     */
    static final Instant LATEST = WireFormat.LATEST_DELIVERY;

    private final WireLimits limits;
    /** Reads with Jackson's limits set from the wire's (WireLimits#readConstraints). */
    private final ObjectMapper json;

    public CommandParser(WireLimits limits) {
        this.limits = limits;
        this.json = new ObjectMapper(JsonFactory.builder().streamReadConstraints(limits.readConstraints()).build())
                .enable(JsonParser.Feature.STRICT_DUPLICATE_DETECTION)
                .enable(DeserializationFeature.FAIL_ON_TRAILING_TOKENS);
    }

    /** @param timestampMs the record's timestamp (delayMs counts from it; the horizon too); negative when absent */
    public Parsed parse(byte[] key, byte[] value, Headers headers, long timestampMs) {
        if (value != null && value.length > limits.maxValueBytes()) {
            // from the length alone: no valid command is this long, and nothing is built from its bytes
            return new Rejection(RejectReason.PAYLOAD_TOO_LARGE, "record value is " + value.length + " bytes; the longest valid command is "
                    + limits.maxValueBytes() + " (bridge.payload.max.bytes " + limits.payloadMaxBytes() + " + "
                    + WireLimits.ENVELOPE_MAX_BYTES + " of envelope)", auditKey(key));
        }
        try {
            return parseChecked(key, value, headers, timestampMs);
        } catch (RuntimeException | StackOverflowError e) {
            // A bug met by this record's bytes: the record gets its verdict, the loop goes on (docs/commands.md#reject-reasons-closed-list).
            return new Rejection(RejectReason.INTERNAL, "internal error while parsing: " + e.getClass().getName() + ": " + firstLine(e), auditKey(key));
        }
    }

    /** The record key as a rejected record's audit event carries it: the key if it is UTF-8 that PostgreSQL text can hold, else null. */
    public static String auditKey(byte[] key) {
        try {
            return key == null ? null : printableKey(utf8(key, null));
        } catch (RuntimeException e) {
            return null;
        }
    }

    /** {@link #parse} without the last net: every outcome here is a decision of validation. Tests call it directly. */
    Parsed parseChecked(byte[] key, byte[] value, Headers headers, long timestampMs) {
        String kafkaKey = null;
        try {
            kafkaKey = key == null ? null : utf8(key, null);
        } catch (Reject ignored) {
            // an unreadable key is reported as key_mismatch below, once the rest is known to be fine
        }
        try {
            Fields f = headers != null && headers.lastHeader(H_OP) != null ? fromHeaders(headers, value) : fromEnvelope(value);
            Command c = validate(f, timestampMs);
            if (kafkaKey == null) {
                throw new Reject(RejectReason.KEY_MISMATCH, key == null ? "record has no key, expected '" + printable(c.kafkaKey()) + "'"
                        : "record key is not valid UTF-8, expected '" + printable(c.kafkaKey()) + "'");
            }
            if (!kafkaKey.equals(c.kafkaKey())) {
                throw new Reject(RejectReason.KEY_MISMATCH, "record key '" + printable(kafkaKey) + "' is not '<queue>/<timerKey>' = '"
                        + printable(c.kafkaKey()) + "'");
            }
            return withTrace(c, headers);
        } catch (Reject r) {
            return new Rejection(r.reason, r.getMessage(), kafkaKey == null ? null : printableKey(kafkaKey));
        }
    }

    /**
     * The command with the record's trace context: one {@code traceparent} header that parses (W3C), and its
     * {@code tracestate}. An
     * absent, repeated or invalid one leaves the command without a trace and never rejects it: the spec
     * says an invalid traceparent is ignored, and a trace is the producer's convenience, not the command.
     */
    private static Command withTrace(Command c, Headers headers) {
        if (headers == null) {
            return c;
        }
        Header only = null;
        for (Header h : headers.headers(WireFormat.TRACEPARENT)) {
            if (only != null) {
                return c;
            }
            only = h;
        }
        if (only == null || only.value() == null) {
            return c;
        }
        TraceParent trace = TraceParent.parse(new String(only.value(), StandardCharsets.UTF_8), traceState(headers)).orElse(null);
        return trace == null ? c : c.withTrace(trace);
    }

    /**
     * The record's {@code tracestate}: several headers of that name are one list joined by ',' (W3C, as for HTTP
     * fields); TraceParent keeps it only when valid, and an invalid one drops the tracestate, never the trace.
     */
    private static String traceState(Headers headers) {
        StringBuilder joined = null;
        for (Header h : headers.headers(WireFormat.TRACESTATE)) {
            if (h.value() == null) {
                continue;
            }
            if (joined == null) {
                joined = new StringBuilder();
            } else {
                joined.append(',');
            }
            joined.append(new String(h.value(), StandardCharsets.UTF_8));
            if (joined.length() > TraceParent.TRACESTATE_MAX_CHARS) {
                return null; // over the spec's bound: dropped whole
            }
        }
        return joined == null ? null : joined.toString();
    }

    /** The command's fields as read from either form, before validation. Values are JsonNode (envelope) or String (headers). */
    private record Fields(Object op, Target target, Delivery delivery, Body body, boolean headersForm, Rule rule) {}

    /** Which timer: its queue and key, and the destination partition. */
    private record Target(Object queue, Object timerKey, Object partition) {}

    /** When it is delivered (a delay or an instant) and as which transaction. */
    private record Delivery(Object delayMs, Object deliverAt, Object txn) {}

    /** The payload, and whether the command carried one at all (a JSON null is one). */
    private record Body(byte[] payload, boolean present) {}

    /** A recurrence's fields as read from either form (docs/recurring.md), all null for a one-shot command. */
    private record Rule(Object cron, Object zone, Object every, Object startAt, Object endAt, Object maxOccurrences, Object catchUp) {
        boolean any() {
            return cron != null || zone != null || every != null || startAt != null || endAt != null || maxOccurrences != null
                    || catchUp != null;
        }
    }

    private Fields fromEnvelope(byte[] value) {
        if (value == null) {
            throw new Reject(RejectReason.MALFORMED_JSON, "record has no value");
        }
        utf8Value(value);
        JsonNode root;
        try {
            root = json.readTree(value);
        } catch (IOException e) {
            throw new Reject(RejectReason.MALFORMED_JSON, "value is not JSON: " + firstLine(e));
        }
        if (root == null || !root.isObject()) {
            throw new Reject(RejectReason.MALFORMED_JSON, "value is not a JSON object");
        }
        for (Iterator<String> it = root.fieldNames(); it.hasNext(); ) {
            String name = it.next();
            if (WireFormat.isServerOwned(name)) {
                throw new Reject(RejectReason.SERVER_OWNED_FIELD, "field '" + printable(name) + "' is set by the server, never by a command");
            }
            if (!WireFormat.FIELDS.contains(name)) {
                throw new Reject(RejectReason.UNKNOWN_FIELD, "unknown field '" + printable(name) + "'");
            }
        }
        JsonNode payload = root.get(WireFormat.PAYLOAD);
        byte[] bytes = payload == null ? null : exact(() -> RawJson.field(value, WireFormat.PAYLOAD));
        return new Fields(root.get(WireFormat.OP),
                new Target(root.get(WireFormat.QUEUE), root.get(WireFormat.TIMER_KEY), root.get(WireFormat.PARTITION)),
                new Delivery(root.get(WireFormat.DELAY_MS), root.get(WireFormat.DELIVER_AT), root.get(WireFormat.TXN)),
                new Body(bytes, payload != null), false,
                new Rule(root.get(WireFormat.CRON), root.get(WireFormat.ZONE), root.get(WireFormat.EVERY), root.get(WireFormat.START_AT),
                        root.get(WireFormat.END_AT), root.get(WireFormat.MAX_OCCURRENCES), root.get(WireFormat.CATCH_UP)));
    }

    private Fields fromHeaders(Headers headers, byte[] value) {
        Map<String, String> h = new HashMap<>();
        for (Header header : headers) {
            String name = header.key();
            String lower = name.toLowerCase(Locale.ROOT);
            if (!lower.startsWith(WireFormat.HEADER_PREFIX)) {
                continue; // tracing and other foreign headers are not ours to judge
            }
            if (WireFormat.isServerOwned(lower.substring(WireFormat.HEADER_PREFIX.length()))) {
                throw new Reject(RejectReason.SERVER_OWNED_FIELD, "header '" + printable(name) + "' is set by the server, never by a command");
            }
            if (!WireFormat.HEADERS.contains(lower)) {
                throw new Reject(RejectReason.UNKNOWN_FIELD, "unknown header '" + printable(name) + "'");
            }
            if (h.put(lower, utf8(header.value(), name)) != null) {
                throw new Reject(RejectReason.BAD_HEADER, "header '" + name + "' appears more than once");
            }
        }
        boolean hasPayload = value != null && value.length > 0;
        byte[] payload = null;
        if (hasPayload) {
            utf8Value(value);
            try {
                json.readTree(value);
            } catch (IOException e) {
                throw new Reject(RejectReason.MALFORMED_JSON, "value (the payload) is not JSON: " + firstLine(e));
            }
            payload = exact(() -> RawJson.whole(value));
        }
        return new Fields(h.get(H_OP), new Target(h.get(H_QUEUE), h.get(H_TIMER_KEY), h.get(H_PARTITION)),
                new Delivery(h.get(H_DELAY_MS), h.get(H_DELIVER_AT), h.get(H_TXN)), new Body(payload, hasPayload), true,
                new Rule(h.get(WireFormat.H_CRON), h.get(WireFormat.H_ZONE), h.get(WireFormat.H_EVERY), h.get(WireFormat.H_START_AT),
                        h.get(WireFormat.H_END_AT), h.get(WireFormat.H_MAX_OCCURRENCES), h.get(WireFormat.H_CATCH_UP)));
    }

    private Command validate(Fields f, long timestampMs) {
        String opName = text(f.op, f.headersForm ? H_OP : WireFormat.OP, f.headersForm);
        Op op = Op.fromWire(opName).orElseThrow(() -> new Reject(RejectReason.UNKNOWN_OP,
                "op '" + printable(opName) + "' is not schedule, reschedule or cancel"));
        String queue = text(f.target.queue, f.headersForm ? H_QUEUE : WireFormat.QUEUE, f.headersForm);
        if (!WireFormat.QUEUE_PATTERN.matcher(queue).matches()) {
            throw new Reject(RejectReason.BAD_QUEUE, "queue '" + printable(queue) + "' is not 1-255 characters of [A-Za-z0-9._-]");
        }
        String timerKey = text(f.target.timerKey, f.headersForm ? H_TIMER_KEY : WireFormat.TIMER_KEY, f.headersForm);
        if (!validText(timerKey, WireFormat.TIMER_KEY_MAX_CODE_POINTS)) {
            throw new Reject(RejectReason.BAD_TIMER_KEY, "timerKey is not 1-512 characters of Unicode without NUL");
        }
        String partition = f.target.partition == null ? WireFormat.DEFAULT_PARTITION : text(f.target.partition, f.headersForm ? H_PARTITION : WireFormat.PARTITION, f.headersForm);
        if (!validText(partition, WireFormat.PARTITION_MAX_CODE_POINTS)) {
            throw new Reject(RejectReason.BAD_PARTITION, "partition is not 1-255 characters without NUL");
        }
        if (op == Op.CANCEL) {
            String extra = f.delivery.delayMs != null ? "delayMs" : f.delivery.deliverAt != null ? "deliverAt" : f.delivery.txn != null ? "txn"
                    : f.body.present ? "payload" : f.rule.any() ? "recurrence" : null;
            if (extra != null) {
                throw new Reject(RejectReason.UNKNOWN_FIELD, "cancel takes no " + extra);
            }
            return new Command(op, queue, timerKey, partition, null);
        }
        String txn = text(f.delivery.txn, f.headersForm ? H_TXN : WireFormat.TXN, f.headersForm);
        if (!validText(txn, WireFormat.TXN_MAX_CODE_POINTS)) {
            throw new Reject(RejectReason.BAD_TXN, "txn is not 1-1024 characters without NUL");
        }
        Recurrence rule = f.rule.any() ? rule(f, txn, timestampMs) : null;
        Instant deliverAt = rule != null ? firstOccurrence(rule, timestampMs) : deliverAt(f, timestampMs);
        if (!f.body.present) {
            throw new Reject(RejectReason.MISSING_FIELD, f.headersForm ? "the record value (the payload) is empty"
                    : "missing field 'payload' (use null for none)");
        }
        if (f.body.payload.length > limits.payloadMaxBytes()) {
            throw new Reject(RejectReason.PAYLOAD_TOO_LARGE, "payload is " + f.body.payload.length + " bytes, limit "
                    + limits.payloadMaxBytes() + " (bridge.payload.max.bytes)");
        }
        if (rule != null) {
            return new Command(op, queue, timerKey, partition,
                    new Command.Schedule(deliverAt, WireFormat.occurrenceTxn(txn, deliverAt), f.body.payload, rule));
        }
        return new Command(op, queue, timerKey, partition, Command.Schedule.once(deliverAt, txn, f.body.payload));
    }

    /** A recurrence (docs/recurring.md): its fields read and checked by {@link Recurrence}, bad_rule for any it refuses. */
    private Recurrence rule(Fields f, String txn, long timestampMs) {
        if (f.delivery.delayMs != null || f.delivery.deliverAt != null) {
            throw new Reject(RejectReason.BAD_RULE, "give exactly one of delayMs, deliverAt, cron and every");
        }
        if (f.rule.cron == null && f.rule.every == null) {
            throw new Reject(RejectReason.BAD_RULE, "startAt, endAt, maxOccurrences, catchUp and zone need cron or every");
        }
        if (timestampMs < 0 && f.rule.startAt == null) {
            throw new Reject(RejectReason.BAD_TIME, "a rule without startAt needs the record timestamp, and the record has none");
        }
        boolean h = f.headersForm;
        Recurrence rule;
        try {
            rule = Recurrence.of(new Recurrence.Spec(ruleText(f.rule.cron, h ? WireFormat.H_CRON : WireFormat.CRON, h),
                    ruleText(f.rule.zone, h ? WireFormat.H_ZONE : WireFormat.ZONE, h),
                    ruleText(f.rule.every, h ? WireFormat.H_EVERY : WireFormat.EVERY, h),
                    ruleText(f.rule.startAt, h ? WireFormat.H_START_AT : WireFormat.START_AT, h),
                    ruleText(f.rule.endAt, h ? WireFormat.H_END_AT : WireFormat.END_AT, h),
                    maxOccurrences(f.rule.maxOccurrences),
                    ruleText(f.rule.catchUp, h ? WireFormat.H_CATCH_UP : WireFormat.CATCH_UP, h)),
                    txn, Instant.ofEpochMilli(Math.max(timestampMs, 0)));
        } catch (Recurrence.RuleException e) {
            throw new Reject(RejectReason.BAD_RULE, printable(e.getMessage()));
        }
        Duration min = limits.recurringMinPeriod();
        rule.gapShorterThan(min).ifPresent(gap -> {
            throw new Reject(RejectReason.PERIOD_TOO_SHORT, "the rule has occurrences " + gap + " apart, closer than "
                    + min + " (recurring.min.period)");
        });
        return rule;
    }

    /** The first occurrence: no_occurrence when the window holds none, horizon as for deliverAt. */
    private Instant firstOccurrence(Recurrence rule, long timestampMs) {
        Instant first = rule.first().orElseThrow(() -> new Reject(RejectReason.NO_OCCURRENCE,
                "the rule has no occurrence at or after startAt " + rule.startAt() + " within its window"));
        Duration horizon = limits.horizon();
        if (timestampMs >= 0 && Duration.between(Instant.ofEpochMilli(timestampMs), first).compareTo(horizon) > 0) {
            throw new Reject(RejectReason.HORIZON, "the first occurrence " + first + " is beyond the horizon of " + horizon
                    + " after the record timestamp (bridge.horizon)");
        }
        return first;
    }

    /** A rule field: absent is null; present it must be text (JSON string or header). */
    private static String ruleText(Object v, String name, boolean headersForm) {
        return v == null ? null : text(v, name, headersForm);
    }

    private static Long maxOccurrences(Object v) {
        if (v == null) {
            return null;
        }
        if (v instanceof JsonNode n) {
            if (!n.isIntegralNumber() || !n.canConvertToLong()) {
                throw new Reject(RejectReason.BAD_RULE, "maxOccurrences must be an integer >= 1, got " + printable(n.toString()));
            }
            return n.longValue();
        }
        String s = (String) v;
        if (!s.matches("[0-9]{1,18}")) {
            throw new Reject(RejectReason.BAD_RULE, "header queen-max-occurrences must be an integer >= 1, got '" + printable(s) + "'");
        }
        return Long.parseLong(s);
    }

    private Instant deliverAt(Fields f, long timestampMs) {
        if (f.delivery.delayMs != null && f.delivery.deliverAt != null) {
            throw new Reject(RejectReason.BAD_TIME, "give exactly one of delayMs and deliverAt, not both");
        }
        if (f.delivery.delayMs == null && f.delivery.deliverAt == null) {
            throw new Reject(RejectReason.MISSING_FIELD, "missing delayMs or deliverAt");
        }
        Duration horizon = limits.horizon();
        if (f.delivery.delayMs != null) {
            long delay = delayMs(f.delivery.delayMs);
            if (Duration.ofMillis(delay).compareTo(horizon) > 0) {
                throw new Reject(RejectReason.HORIZON, "delayMs " + delay + " is beyond the horizon of " + horizon + " (bridge.horizon)");
            }
            if (timestampMs < 0) {
                throw new Reject(RejectReason.BAD_TIME, "delayMs needs the record timestamp, and the record has none");
            }
            // Compared before adding: a timestamp near Long.MAX_VALUE must not overflow the sum.
            if (timestampMs > LATEST.toEpochMilli() - delay) {
                throw new Reject(RejectReason.BAD_TIME, "record timestamp " + timestampMs + " plus delayMs " + delay + " is after " + LATEST);
            }
            return Instant.ofEpochMilli(timestampMs + delay);
        }
        String text = text(f.delivery.deliverAt, f.headersForm ? H_DELIVER_AT : WireFormat.DELIVER_AT, f.headersForm);
        Instant at;
        try {
            at = OffsetDateTime.parse(text).toInstant();
        } catch (DateTimeException e) {
            throw new Reject(RejectReason.BAD_TIME, "deliverAt '" + printable(text) + "' is not an ISO-8601 instant with offset");
        }
        if (at.isBefore(WireFormat.EARLIEST_DELIVERY)) {
            throw new Reject(RejectReason.BAD_TIME, "deliverAt " + at + " is before 1970");
        }
        if (at.isAfter(LATEST)) {
            throw new Reject(RejectReason.BAD_TIME, "deliverAt " + at + " is after " + LATEST);
        }
        if (timestampMs >= 0 && Duration.between(Instant.ofEpochMilli(timestampMs), at).compareTo(horizon) > 0) {
            throw new Reject(RejectReason.HORIZON, "deliverAt " + at + " is beyond the horizon of " + horizon
                    + " after the record timestamp (bridge.horizon)");
        }
        return at;
    }

    private static long delayMs(Object v) {
        if (v instanceof JsonNode n) {
            if (!n.isNumber()) {
                throw new Reject(RejectReason.WRONG_TYPE, "delayMs must be a number");
            }
            if (!n.isIntegralNumber() || !n.canConvertToLong() || n.longValue() < 0) {
                throw new Reject(RejectReason.BAD_TIME, "delayMs must be an integer >= 0, got " + printable(n.toString()));
            }
            return n.longValue();
        }
        String s = (String) v;
        if (!s.matches("[0-9]{1,18}")) {
            throw new Reject(RejectReason.BAD_TIME, "header queen-delay-ms must be an integer >= 0, got '" + printable(s) + "'");
        }
        return Long.parseLong(s);
    }

    private static String text(Object v, String name, boolean headersForm) {
        if (v == null) {
            throw new Reject(RejectReason.MISSING_FIELD, (headersForm ? "missing header '" : "missing field '") + name + "'");
        }
        if (v instanceof String s) {
            return s;
        }
        JsonNode n = (JsonNode) v;
        if (n.isNull()) {
            throw new Reject(RejectReason.MISSING_FIELD, "field '" + name + "' is null");
        }
        if (!n.isTextual()) {
            throw new Reject(RejectReason.WRONG_TYPE, "field '" + name + "' must be a string, got " + n.getNodeType().name().toLowerCase(Locale.ROOT));
        }
        return n.textValue();
    }

    static boolean validText(String s, int maxCodePoints) {
        return WireFormat.validText(s, maxCodePoints);
    }

    private static void utf8Value(byte[] value) {
        try {
            RawJson.strictUtf8(value);
        } catch (CharacterCodingException e) {
            throw new Reject(RejectReason.MALFORMED_JSON, "value is not UTF-8");
        }
    }

    private interface RawRead {
        byte[] read() throws IOException;
    }

    /** The payload's own bytes, compact (RawJson): a well-formed value that is not strict UTF-8 is malformed_json. */
    private static byte[] exact(RawRead read) {
        try {
            return read.read();
        } catch (IOException e) {
            throw new Reject(RejectReason.MALFORMED_JSON, "payload is not UTF-8 JSON: " + firstLine(e));
        }
    }

    private static String utf8(byte[] bytes, String header) {
        try {
            return StandardCharsets.UTF_8.newDecoder()
                    .onMalformedInput(CodingErrorAction.REPORT)
                    .onUnmappableCharacter(CodingErrorAction.REPORT)
                    .decode(ByteBuffer.wrap(bytes == null ? new byte[0] : bytes)).toString();
        } catch (CharacterCodingException e) {
            throw new Reject(RejectReason.BAD_HEADER, "header '" + header + "' is not valid UTF-8");
        }
    }

    /** For a detail line or an audit key: NUL and unpaired surrogates replaced, long text cut. */
    static String printable(String s) {
        StringBuilder b = new StringBuilder(Math.min(s.length(), 200));
        for (int i = 0; i < s.length() && b.length() < 200; i++) {
            char ch = s.charAt(i);
            if (Character.isHighSurrogate(ch) && i + 1 < s.length() && Character.isLowSurrogate(s.charAt(i + 1))) {
                b.append(ch).append(s.charAt(++i));
            } else if (ch == 0 || Character.isSurrogate(ch) || Character.isISOControl(ch)) {
                b.append('\uFFFD');
            } else {
                b.append(ch);
            }
        }
        return s.length() > b.length() && b.length() >= 200 ? b.append('…').toString() : b.toString();
    }

    /** The key of a rejected record's audit event: the record key if PostgreSQL text can hold it, else null. */
    private static String printableKey(String key) {
        return isStorableKey(key) ? key : null;
    }

    /** Whether {@code key} can key an audit event: at most 1024 characters PostgreSQL text can hold. */
    public static boolean isStorableKey(String key) {
        return key.length() <= 1024 && validText(key, 1024);
    }

    private static String firstLine(Throwable e) {
        String m = String.valueOf(e.getMessage());
        int nl = m.indexOf('\n');
        return printable(nl < 0 ? m : m.substring(0, nl));
    }

    /** Control flow of validation: one reason, one line. No stack trace (it is not an error of this program). */
    private static final class Reject extends RuntimeException {
        final RejectReason reason;

        Reject(RejectReason reason, String detail) {
            super(detail, null, false, false);
            this.reason = reason;
        }
    }
}
