package io.queen.timers.relay;

import com.fasterxml.jackson.core.io.JsonStringEncoder;
import io.queen.timers.client.command.WireFormat;
import java.nio.charset.StandardCharsets;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.time.temporal.ChronoUnit;
import java.util.HexFormat;
import org.apache.kafka.clients.producer.ProducerRecord;

/**
 * One audit event as the relay publishes it, rendered from the raw columns of {@code queen.timer_audit_read_v3}
 * (db/current/R__timer_audit_relay.sql): {@code {"eventId","type","at","tenant"}} and the event's fields, with the
 * {@code queen-event-id} header and, for a traced command, its W3C {@code traceparent} and {@code tracestate}.
 *
 * <p>An event of a command or of a fire attempt has its body rendered by its writer in the same transaction
 * (the outbox's {@code event} jsonb): it is spliced in as PostgreSQL printed it. A {@code fired} event is one element of
 * a segment row's arrays: its fields are rendered here, as the view {@code queen.timer_audit_events} renders them in SQL
 * (the same names, values and formats: timestamps as PostgreSQL prints them in UTC, {@code offset} the segment's first
 * plus the frame's position, {@code lateMs} floored). {@code AuditRelayIT} compares every field of both for every kind
 * of event. Why here and not in SQL: building and printing one jsonb per fired timer cost PostgreSQL more time per event
 * than any other step of the relay (the pipeline's profile); in Java it is a few microseconds of the relay's.
 *
 * <p>PRICE: two renderers of the {@code fired} event, the view and this class, held equal by a test rather than by
 * construction; the field order differs (the view's is jsonb's, this one's is the envelope first), which JSON does not
 * promise and no reader may rely on.
 */
final class AuditEventValue {

    private static final JsonStringEncoder ESCAPE = JsonStringEncoder.getInstance();
    private static final HexFormat HEX = HexFormat.of();

    private AuditEventValue() {}

    /** The record of the read's current row, to {@code topic}. */
    static ProducerRecord<String, String> record(ResultSet rs, String topic) throws SQLException {
        String eventId = rs.getString("event_id");
        StringBuilder v = new StringBuilder(512).append('{');
        field(v, "eventId", eventId);
        field(v.append(','), "type", rs.getString("type"));
        v.append(",\"at\":\"").append(timestamp(rs.getObject("created_at", OffsetDateTime.class))).append('"');
        field(v.append(','), "tenant", rs.getString("tenant_id"));
        String key;
        String traceparent;
        String tracestate;
        String body = rs.getString("body");
        if (body != null) {
            key = rs.getString("kafka_key");
            splice(v, body);
            String traceId = rs.getString("trace_id");
            String spanId = rs.getString("span_id");
            String flags = rs.getString("trace_flags");
            traceparent = traceId != null && spanId != null
                    ? "00-" + traceId + "-" + spanId + "-" + (flags != null ? flags : "01") : null;
            tracestate = rs.getString("trace_state");
        } else {
            String queue = rs.getString("queue");
            String timerKey = rs.getString("timer_key");
            key = queue + "/" + timerKey;
            OffsetDateTime deliverAt = rs.getObject("deliver_at", OffsetDateTime.class);
            OffsetDateTime written = rs.getObject("segment_created_at", OffsetDateTime.class);
            field(v.append(','), "queue", queue);
            field(v.append(','), "timerKey", timerKey);
            field(v.append(','), "partition", rs.getString("partition"));
            field(v.append(','), "txn", rs.getString("txn"));
            field(v.append(','), "messageId", rs.getString("message_id"));
            v.append(",\"deliverAt\":\"").append(timestamp(deliverAt)).append('"');
            v.append(",\"offset\":").append(rs.getLong("first_offset") + rs.getLong("seq") - 1);
            // floor((written - deliverAt) in ms), to the microsecond, as the view's floor(extract(epoch ...) * 1000)
            v.append(",\"lateMs\":").append(Math.floorDiv(ChronoUnit.MICROS.between(deliverAt, written), 1000L));
            v.append(",\"attempts\":").append(rs.getInt("attempts"));
            String sub = rs.getString("producer_sub");
            if (sub != null) {
                field(v.append(','), "producerSub", sub);
            }
            byte[] trace = rs.getBytes("trace_context");
            traceparent = null;
            tracestate = null;
            if (trace != null) {
                // R__timer_audit_events.sql's timer_trace_fields_v1: 16 bytes of trace id, 8 of span id, 1 of flags, tracestate
                String traceId = HEX.formatHex(trace, 0, 16);
                String spanId = HEX.formatHex(trace, 16, 24);
                String flags = trace.length >= 25 ? HEX.formatHex(trace, 24, 25) : null;
                tracestate = trace.length >= 26 ? new String(trace, 25, trace.length - 25, StandardCharsets.UTF_8) : null;
                field(v.append(','), "traceId", traceId);
                field(v.append(','), "spanId", spanId);
                if (flags != null) {
                    field(v.append(','), "traceFlags", flags);
                }
                if (tracestate != null) {
                    field(v.append(','), "traceState", tracestate);
                }
                traceparent = "00-" + traceId + "-" + spanId + "-" + (flags != null ? flags : "01");
            }
            String recur = rs.getString("recur");
            if (recur != null) {
                splice(v, recur);
            }
        }
        v.append('}');
        ProducerRecord<String, String> record = new ProducerRecord<>(topic, key, v.toString());
        record.headers().add("queen-event-id", eventId.getBytes(StandardCharsets.UTF_8));
        // W3C Trace Context of the command behind the event: a consumer's propagator (OpenTelemetry's Kafka
        // instrumentation, W3CTraceContextPropagator) joins the producer's trace (docs/tracing.md#tracing)
        if (traceparent != null) {
            record.headers().add(WireFormat.TRACEPARENT, traceparent.getBytes(StandardCharsets.US_ASCII));
            if (tracestate != null) {
                record.headers().add(WireFormat.TRACESTATE, tracestate.getBytes(StandardCharsets.US_ASCII));
            }
        }
        return record;
    }

    /** {@code "name":"value"}, the value JSON-escaped. */
    private static void field(StringBuilder v, String name, String value) {
        v.append('"').append(name).append("\":\"").append(ESCAPE.quoteAsString(value)).append('"');
    }

    /** The members of a JSON object PostgreSQL printed ({@code {...}}), after those already written. */
    private static void splice(StringBuilder v, String object) {
        int open = object.indexOf('{');
        int close = object.lastIndexOf('}');
        String members = object.substring(open + 1, close).strip();
        if (!members.isEmpty()) {
            v.append(',').append(members);
        }
    }

    /** A timestamp as PostgreSQL prints a timestamptz into JSON in UTC: microseconds without trailing zeros, +00:00. */
    static String timestamp(OffsetDateTime t) {
        OffsetDateTime u = t.withOffsetSameInstant(ZoneOffset.UTC);
        StringBuilder b = new StringBuilder(32);
        int year = u.getYear();
        b.append(year < 1000 ? String.format("%04d", year) : Integer.toString(year));
        two(b.append('-'), u.getMonthValue());
        two(b.append('-'), u.getDayOfMonth());
        two(b.append('T'), u.getHour());
        two(b.append(':'), u.getMinute());
        two(b.append(':'), u.getSecond());
        int micros = u.getNano() / 1000;
        if (micros != 0) {
            String f = String.format("%06d", micros);
            int end = f.length();
            while (f.charAt(end - 1) == '0') {
                end--;
            }
            b.append('.').append(f, 0, end);
        }
        return b.append("+00:00").toString();
    }

    private static void two(StringBuilder b, int n) {
        if (n < 10) {
            b.append('0');
        }
        b.append(n);
    }
}
