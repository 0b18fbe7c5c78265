package io.queen.timers.client.audit;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.queen.timers.client.command.Op;
import io.queen.timers.client.command.RejectReason;
import java.io.IOException;
import java.time.DateTimeException;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.util.UUID;

/**
 * Reads the value of an audit record into its {@link AuditEvent}. Fields this version does not know
 * are ignored (a later bridge may add some); a missing required field or a wrong type is a
 * {@link MalformedEvent} naming the field. A {@code type} or reject {@code reason} this version does not know
 * is an {@link UnknownEvent}: the schemas evolve additively (docs/formats.md#audit-events-on-the-topic), so a consumer skips it
 * (and logs it) rather than failing.
 */
public final class AuditEvents {

    private static final ObjectMapper JSON = new ObjectMapper();

    private AuditEvents() {}

    /** Thrown when a value is not an audit event of this format. */
    public static class MalformedEvent extends IllegalArgumentException {
        public MalformedEvent(String message) {
            super(message);
        }
    }

    /**
     * An event of a type, or a rejection with a reason, that a later version added (the audit schema is additive
     * within its {@code $id} version): skip it and log it; never stop consuming on it.
     */
    public static final class UnknownEvent extends MalformedEvent {
        public UnknownEvent(String message) {
            super(message);
        }
    }

    public static AuditEvent parse(byte[] value) {
        try {
            return parse(JSON.readTree(value));
        } catch (IOException e) {
            throw new MalformedEvent("audit event is not JSON: " + e.getMessage());
        }
    }

    public static AuditEvent parse(String value) {
        try {
            return parse(JSON.readTree(value));
        } catch (IOException e) {
            throw new MalformedEvent("audit event is not JSON: " + e.getMessage());
        }
    }

    public static AuditEvent parse(JsonNode e) {
        if (e == null || !e.isObject()) {
            throw new MalformedEvent("audit event is not a JSON object");
        }
        String typeName = text(e, "type");
        EventType type = EventType.fromWire(typeName).orElseThrow(() -> new UnknownEvent("unknown audit event type '" + typeName + "'"));
        AuditEvent.Meta meta = new AuditEvent.Meta(uuid(e, "eventId"), type, timestamp(e, "at"), uuid(e, "tenant"),
                optionalText(e, "producerSub"), optionalText(e, "traceId"), optionalText(e, "spanId"),
                optionalText(e, "traceFlags"), optionalText(e, "traceState"));
        return switch (type) {
            case SCHEDULED -> new AuditEvent.Scheduled(meta, source(e), text(e, "queue"), text(e, "timerKey"), op(e),
                    text(e, "partition"), text(e, "txn"), uuid(e, "messageId"), instant(e, "deliverAt"));
            case RESCHEDULED -> new AuditEvent.Rescheduled(meta, source(e), text(e, "queue"), text(e, "timerKey"), op(e),
                    text(e, "partition"), text(e, "txn"), uuid(e, "messageId"), instant(e, "deliverAt"));
            case CANCELLED -> new AuditEvent.Cancelled(meta, source(e), text(e, "queue"), text(e, "timerKey"), op(e), uuid(e, "messageId"));
            case ABSENT -> new AuditEvent.Absent(meta, source(e), text(e, "queue"), text(e, "timerKey"), op(e));
            case TOO_LATE -> new AuditEvent.TooLate(meta, source(e), text(e, "queue"), text(e, "timerKey"), op(e), uuid(e, "messageId"));
            case REJECTED -> {
                String reason = text(e, "reason");
                yield new AuditEvent.Rejected(meta, source(e), RejectReason.fromWire(reason)
                        .orElseThrow(() -> new UnknownEvent("unknown reject reason '" + reason + "'")), optionalText(e, "error"));
            }
            case FIRED -> new AuditEvent.Fired(meta, text(e, "queue"), text(e, "timerKey"), text(e, "partition"), text(e, "txn"),
                    uuid(e, "messageId"), instant(e, "deliverAt"), number(e, "offset"), number(e, "lateMs"), (int) number(e, "attempts"),
                    optionalOccurrence(e));
            case RETRYING -> new AuditEvent.Retrying(meta, text(e, "queue"), text(e, "timerKey"), text(e, "partition"), text(e, "txn"),
                    uuid(e, "messageId"), instant(e, "deliverAt"), (int) number(e, "attempts"), optionalText(e, "error"));
            case DEAD_LETTERED -> new AuditEvent.DeadLettered(meta, text(e, "queue"), text(e, "timerKey"), text(e, "partition"),
                    text(e, "txn"), uuid(e, "messageId"), instant(e, "deliverAt"), (int) number(e, "attempts"), optionalText(e, "error"),
                    optionalOccurrence(e));
            case SKIPPED -> new AuditEvent.Skipped(meta, text(e, "queue"), text(e, "timerKey"), text(e, "partition"), text(e, "txn"),
                    uuid(e, "messageId"), instant(e, "deliverAt"), occurrence(e));
            case OFFSET_MOVED -> new AuditEvent.OffsetMoved(meta, text(e, "group"), text(e, "topic"), (int) number(e, "partition"),
                    e.hasNonNull("from") ? number(e, "from") : null, number(e, "to"), text(e, "reason"), bool(e, "replay"),
                    text(e, "by"), optionalText(e, "clientLabel"));
            case DEAD_LETTER_REMOVED -> new AuditEvent.DeadLetterRemoved(meta, uuid(e, "deadLetterId"), text(e, "queue"),
                    optionalText(e, "timerKey"), text(e, "partition"), optionalText(e, "txn"),
                    e.hasNonNull("messageId") ? uuid(e, "messageId") : null, optionalText(e, "error"),
                    e.hasNonNull("attempts") ? (int) number(e, "attempts") : null, text(e, "how"), optionalText(e, "state"),
                    e.hasNonNull("verdictEventId") ? uuid(e, "verdictEventId") : null, text(e, "reason"), text(e, "by"),
                    optionalText(e, "clientLabel"));
        };
    }

    private static AuditEvent.Source source(JsonNode e) {
        JsonNode s = e.get("source");
        if (s == null || !s.isObject()) {
            throw new MalformedEvent("audit event has no 'source' object");
        }
        return new AuditEvent.Source(text(s, "topic"), (int) number(s, "partition"), number(s, "offset"));
    }

    /** The series fields of a fired or dead_lettered event: absent (null) for a one-shot timer. An unknown "ended" is OTHER. */
    private static AuditEvent.Occurrence optionalOccurrence(JsonNode e) {
        return e.hasNonNull("occurrence") ? occurrence(e) : null;
    }

    private static AuditEvent.Occurrence occurrence(JsonNode e) {
        AuditEvent.Range skipped = null;
        JsonNode s = e.get("skipped");
        if (s != null && !s.isNull()) {
            if (!s.isObject()) {
                throw new MalformedEvent("audit event field 'skipped' is not an object");
            }
            skipped = new AuditEvent.Range(instant(s, "from"), instant(s, "to"));
        }
        return new AuditEvent.Occurrence(instant(e, "occurrence"), number(e, "seq"),
                e.hasNonNull("next") ? instant(e, "next") : null, skipped,
                e.hasNonNull("ended") ? SeriesEnd.fromWire(text(e, "ended")) : null,
                e.hasNonNull("deadLettersInRow") ? (int) number(e, "deadLettersInRow") : null);
    }

    private static Op op(JsonNode e) {
        String name = text(e, "op");
        return Op.fromWire(name).orElseThrow(() -> new MalformedEvent("unknown op '" + name + "'"));
    }

    private static String text(JsonNode e, String field) {
        JsonNode n = e.get(field);
        if (n == null || !n.isTextual()) {
            throw new MalformedEvent("audit event field '" + field + "' is " + (n == null ? "missing" : "not a string"));
        }
        return n.textValue();
    }

    private static String optionalText(JsonNode e, String field) {
        JsonNode n = e.get(field);
        return n == null || n.isNull() ? null : text(e, field);
    }

    private static boolean bool(JsonNode e, String field) {
        JsonNode n = e.get(field);
        if (n == null || !n.isBoolean()) {
            throw new MalformedEvent("audit event field '" + field + "' is " + (n == null ? "missing" : "not a boolean"));
        }
        return n.booleanValue();
    }

    private static long number(JsonNode e, String field) {
        JsonNode n = e.get(field);
        if (n == null || !n.isIntegralNumber() || !n.canConvertToLong()) {
            throw new MalformedEvent("audit event field '" + field + "' is " + (n == null ? "missing" : "not an integer"));
        }
        return n.longValue();
    }

    private static UUID uuid(JsonNode e, String field) {
        try {
            return UUID.fromString(text(e, field));
        } catch (IllegalArgumentException bad) {
            if (bad instanceof MalformedEvent m) {
                throw m;
            }
            throw new MalformedEvent("audit event field '" + field + "' is not a UUID");
        }
    }

    private static OffsetDateTime timestamp(JsonNode e, String field) {
        try {
            return OffsetDateTime.parse(text(e, field));
        } catch (DateTimeException bad) {
            throw new MalformedEvent("audit event field '" + field + "' is not an ISO-8601 timestamp with offset");
        }
    }

    private static Instant instant(JsonNode e, String field) {
        return timestamp(e, field).toInstant();
    }
}
