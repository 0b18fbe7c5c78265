package io.queen.timers.core.audit;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonGenerator;
import io.queen.timers.client.command.WireFormat;
import java.io.IOException;
import java.io.StringWriter;
import java.io.UncheckedIOException;
import java.time.Duration;
import java.time.OffsetDateTime;
import java.time.ZoneId;
import java.time.format.DateTimeFormatter;
import java.time.format.DateTimeFormatterBuilder;
import java.time.temporal.ChronoField;
import java.util.HexFormat;
import java.util.UUID;

/**
 * Renders one timer's {@code fired} event from a segment row of the outbox (V026): the relay expands a
 * segment row into one event per timer here, in Java, so the fire transaction builds no per-timer JSON.
 *
 * <p>The value has the fields and the formats PostgreSQL's {@code jsonb} gives every other event (and
 * {@code queen.timer_audit_events} gives this one): timestamps as PostgreSQL prints a {@code timestamptz}
 * in JSON in the session's time zone (the JVM's: pgjdbc sets the session's zone from it), microseconds
 * without trailing zeros, offset as {@code +HH:MM}. AuditRelayTest pins the two renderings to each other.
 */
final class FiredEvents {

    private static final JsonFactory JSON = new JsonFactory();
    /** PostgreSQL's JSON timestamptz: 2026-12-02T16:30:05.7241+00:00. */
    private static final DateTimeFormatter PG_JSON_TIMESTAMPTZ = new DateTimeFormatterBuilder()
            .appendPattern("uuuu-MM-dd'T'HH:mm:ss")
            .appendFraction(ChronoField.MICRO_OF_SECOND, 0, 6, true)
            .appendOffset("+HH:MM:ss", "+00:00")
            .toFormatter();

    private final ZoneId zone;

    FiredEvents(ZoneId zone) {
        this.zone = zone;
    }

    /**
     * One timer of a fired segment, with what its segment row shares. {@code producerSub} may be null
     * (V056), {@code traceContext} too: else 16 bytes of trace id and 8 of span id (V090).
     */
    record Fired(UUID eventId, UUID tenant, OffsetDateTime at, String queue, String partition, long baseOffset,
                 OffsetDateTime segmentCreatedAt, long seq, String timerKey, String txn, UUID messageId,
                 OffsetDateTime deliverAt, int attempts, String producerSub, byte[] traceContext) {

        String kafkaKey() {
            return WireFormat.key(queue, timerKey);
        }

        long offset() {
            return baseOffset + seq - 1;
        }

        /** Whole milliseconds from deliverAt to the segment's created_at, rounded down (as floor() in SQL). */
        long lateMs() {
            Duration late = Duration.between(deliverAt, segmentCreatedAt);
            return Math.floorDiv(late.getSeconds() * 1_000_000L + late.getNano() / 1_000, 1_000L);
        }
    }

    String value(Fired f) {
        StringWriter out = new StringWriter(384);
        try (JsonGenerator g = JSON.createGenerator(out)) {
            g.writeStartObject();
            g.writeStringField("eventId", f.eventId().toString());
            g.writeStringField("type", "fired");
            g.writeStringField("at", timestamp(f.at()));
            g.writeStringField("tenant", f.tenant().toString());
            g.writeStringField("queue", f.queue());
            g.writeStringField("timerKey", f.timerKey());
            g.writeStringField("partition", f.partition());
            g.writeStringField("txn", f.txn());
            g.writeStringField("messageId", f.messageId().toString());
            g.writeStringField("deliverAt", timestamp(f.deliverAt()));
            g.writeNumberField("offset", f.offset());
            g.writeNumberField("lateMs", f.lateMs());
            g.writeNumberField("attempts", f.attempts());
            if (f.producerSub() != null) {
                g.writeStringField("producerSub", f.producerSub());
            }
            if (f.traceContext() != null) { // as queen.timer_trace_fields_v1 renders it in the view
                String hex = HexFormat.of().formatHex(f.traceContext());
                g.writeStringField("traceId", hex.substring(0, 32));
                g.writeStringField("spanId", hex.substring(32, 48));
            }
            g.writeEndObject();
        } catch (IOException e) {
            throw new UncheckedIOException(e);   // a StringWriter does not fail
        }
        return out.toString();
    }

    private String timestamp(OffsetDateTime t) {
        return PG_JSON_TIMESTAMPTZ.format(t.atZoneSameInstant(zone));
    }
}
