package io.queen.timers.client.command;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.fasterxml.jackson.databind.util.RawValue;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.header.internals.RecordHeader;

/**
 * One command for one timer, built with typed setters and written in either form as a
 * {@link ProducerRecord} keyed {@code <queue>/<timerKey>}:
 *
 * <pre>{@code
 * ProducerRecord<byte[], byte[]> r = TimerCommand.schedule("orders.reminders", "order-42")
 *         .delay(Duration.ofMinutes(30)).txn("remind-order-42").payload("{\"orderId\":42}")
 *         .envelope("queen.timers.commands");
 * }</pre>
 *
 * A recurring timer names a rule instead of a time ({@link #cron} or {@link #every}, docs/commands.md#recurring-timers):
 *
 * <pre>{@code
 * TimerCommand.schedule("reports", "nightly").cron("30 2 * * *", ZoneId.of("Europe/Berlin")).catchUp(CatchUp.NONE)
 *         .txn("nightly").payload("{}").envelope("queen.timers.commands");
 * }</pre>
 *
 * Nothing but the shape is checked here (a missing txn or time fails at build): the bridge validates
 * and answers every record with a verdict on the audit topic. The payload is sent exactly as given.
 */
public final class TimerCommand {

    private static final ObjectMapper JSON = new ObjectMapper();

    private final Op op;
    private final String queue;
    private final String timerKey;
    private String partition;
    private Long delayMs;
    private Instant deliverAt;
    private String cron;
    private ZoneId zone;
    private Duration every;
    private Instant startAt;
    private Instant endAt;
    private Integer maxOccurrences;
    private CatchUp catchUp;
    private String txn;
    private String payloadJson;
    private String traceparent;
    private String tracestate;
    private String authToken;
    private Long timestampMs;

    private TimerCommand(Op op, String queue, String timerKey) {
        this.op = Objects.requireNonNull(op, "op");
        this.queue = Objects.requireNonNull(queue, "queue");
        this.timerKey = Objects.requireNonNull(timerKey, "timerKey");
    }

    public static TimerCommand schedule(String queue, String timerKey) {
        return new TimerCommand(Op.SCHEDULE, queue, timerKey);
    }

    public static TimerCommand reschedule(String queue, String timerKey) {
        return new TimerCommand(Op.RESCHEDULE, queue, timerKey);
    }

    public static TimerCommand cancel(String queue, String timerKey) {
        return new TimerCommand(Op.CANCEL, queue, timerKey);
    }

    public static TimerCommand of(Op op, String queue, String timerKey) {
        return new TimerCommand(op, queue, timerKey);
    }

    /** Fire this long after the record's timestamp. Replaces {@link #at}. */
    public TimerCommand delay(Duration delay) {
        this.delayMs = delay.toMillis();
        this.deliverAt = null;
        return this;
    }

    /** Fire at this instant. Replaces {@link #delay}. */
    public TimerCommand at(Instant deliverAt) {
        this.deliverAt = Objects.requireNonNull(deliverAt, "deliverAt");
        this.delayMs = null;
        return this;
    }

    /** Recur at every instant the cron expression (5 or 6 fields, docs/commands.md#recurring-timers) names in {@code zone}. Replaces {@link #every}. */
    public TimerCommand cron(String expression, ZoneId zone) {
        this.cron = Objects.requireNonNull(expression, "expression");
        this.zone = Objects.requireNonNull(zone, "zone");
        this.every = null;
        return this;
    }

    /** Recur at every instant the cron expression names, read in UTC (the bridge's default: no zone is sent). Replaces {@link #every}. */
    public TimerCommand cron(String expression) {
        this.cron = Objects.requireNonNull(expression, "expression");
        this.zone = null;
        this.every = null;
        return this;
    }

    /** Recur every {@code period} of elapsed time (at least 1 s; a day is 24 h), from {@link #startAt}. Replaces {@link #cron}. */
    public TimerCommand every(Duration period) {
        this.every = Objects.requireNonNull(period, "period");
        this.cron = null;
        this.zone = null;
        return this;
    }

    /** A recurring timer's first occurrence is at or after this instant (default: the record's timestamp). */
    public TimerCommand startAt(Instant startAt) {
        this.startAt = Objects.requireNonNull(startAt, "startAt");
        return this;
    }

    /** A recurring timer has no occurrence after this instant. */
    public TimerCommand endAt(Instant endAt) {
        this.endAt = Objects.requireNonNull(endAt, "endAt");
        return this;
    }

    /** A recurring timer ends after this many deliveries (>= 1; the bridge judges the value). */
    public TimerCommand maxOccurrences(int maxOccurrences) {
        this.maxOccurrences = maxOccurrences;
        return this;
    }

    /** What a recurring timer does with occurrences an outage missed (default {@link CatchUp#ONE}). */
    public TimerCommand catchUp(CatchUp catchUp) {
        this.catchUp = Objects.requireNonNull(catchUp, "catchUp");
        return this;
    }

    /** The destination partition of the queue; without it, {@value WireFormat#DEFAULT_PARTITION}. */
    public TimerCommand partition(String partition) {
        this.partition = partition;
        return this;
    }

    /** The fixed transaction id the fired message carries ("was it sent?" = look for it in the queue). */
    public TimerCommand txn(String txn) {
        this.txn = txn;
        return this;
    }

    /** The message, any JSON value as text ({@code "null"} for none); delivered as written. */
    public TimerCommand payload(String json) {
        this.payloadJson = json;
        return this;
    }

    /** A W3C traceparent ({@code 00-<trace id>-<span id>-<flags>}): the fired message and every audit event carry the trace. */
    public TimerCommand traceparent(String traceparent) {
        this.traceparent = traceparent;
        return this;
    }

    /** A W3C tracestate sent beside the traceparent: kept with the trace (audit events, audit record headers). */
    public TimerCommand tracestate(String tracestate) {
        this.tracestate = tracestate;
        return this;
    }

    /** {@link #traceparent(String)} and {@link #tracestate(String)} from a context. */
    public TimerCommand trace(TraceParent trace) {
        this.traceparent = trace == null ? null : trace.header();
        this.tracestate = trace == null ? null : trace.traceState();
        return this;
    }

    /** The producer's token (a JWS) for a topic with {@code topic.<name>.auth=jwt}, sent in the queen-auth header; null for none. */
    public TimerCommand auth(String token) {
        this.authToken = token;
        return this;
    }

    /** The record's timestamp (delayMs counts from it); without it, the producer's clock at send. */
    public TimerCommand timestamp(Instant timestamp) {
        this.timestampMs = timestamp.toEpochMilli();
        return this;
    }

    public Op op() {
        return op;
    }

    public String key() {
        return WireFormat.key(queue, timerKey);
    }

    /** The JSON envelope form: the command is the record value. */
    public ProducerRecord<byte[], byte[]> envelope(String topic) {
        checkShape();
        ObjectNode n = JSON.createObjectNode();
        n.put(WireFormat.OP, op.wireName());
        n.put(WireFormat.QUEUE, queue);
        n.put(WireFormat.TIMER_KEY, timerKey);
        if (partition != null) {
            n.put(WireFormat.PARTITION, partition);
        }
        if (delayMs != null) {
            n.put(WireFormat.DELAY_MS, delayMs);
        }
        if (deliverAt != null) {
            n.put(WireFormat.DELIVER_AT, deliverAt.toString());
        }
        if (cron != null) {
            n.put(WireFormat.CRON, cron);
        }
        if (zone != null) {
            n.put(WireFormat.ZONE, zone.getId());
        }
        if (every != null) {
            n.put(WireFormat.EVERY, every.toString());
        }
        if (startAt != null) {
            n.put(WireFormat.START_AT, startAt.toString());
        }
        if (endAt != null) {
            n.put(WireFormat.END_AT, endAt.toString());
        }
        if (maxOccurrences != null) {
            n.put(WireFormat.MAX_OCCURRENCES, maxOccurrences.intValue());
        }
        if (catchUp != null) {
            n.put(WireFormat.CATCH_UP, catchUp.wireName());
        }
        if (txn != null) {
            n.put(WireFormat.TXN, txn);
        }
        if (payloadJson != null) {
            n.putRawValue(WireFormat.PAYLOAD, new RawValue(payloadJson));
        }
        try {
            return record(topic, JSON.writeValueAsBytes(n), new ArrayList<>());
        } catch (JsonProcessingException e) {
            throw new IllegalStateException("cannot write a command", e);
        }
    }

    /** The headers form: the fields are {@code queen-*} headers, the value is the raw payload (empty for a cancel). */
    public ProducerRecord<byte[], byte[]> headers(String topic) {
        checkShape();
        List<Header> h = new ArrayList<>();
        add(h, WireFormat.H_OP, op.wireName());
        add(h, WireFormat.H_QUEUE, queue);
        add(h, WireFormat.H_TIMER_KEY, timerKey);
        add(h, WireFormat.H_PARTITION, partition);
        add(h, WireFormat.H_DELAY_MS, delayMs == null ? null : delayMs.toString());
        add(h, WireFormat.H_DELIVER_AT, deliverAt == null ? null : deliverAt.toString());
        add(h, WireFormat.H_CRON, cron);
        add(h, WireFormat.H_ZONE, zone == null ? null : zone.getId());
        add(h, WireFormat.H_EVERY, every == null ? null : every.toString());
        add(h, WireFormat.H_START_AT, startAt == null ? null : startAt.toString());
        add(h, WireFormat.H_END_AT, endAt == null ? null : endAt.toString());
        add(h, WireFormat.H_MAX_OCCURRENCES, maxOccurrences == null ? null : maxOccurrences.toString());
        add(h, WireFormat.H_CATCH_UP, catchUp == null ? null : catchUp.wireName());
        add(h, WireFormat.H_TXN, txn);
        byte[] value = payloadJson == null ? new byte[0] : payloadJson.getBytes(StandardCharsets.UTF_8);
        return record(topic, value, h);
    }

    private ProducerRecord<byte[], byte[]> record(String topic, byte[] value, List<Header> headers) {
        add(headers, WireFormat.H_AUTH, authToken);
        add(headers, WireFormat.TRACEPARENT, traceparent);
        add(headers, WireFormat.TRACESTATE, tracestate);
        return new ProducerRecord<>(topic, null, timestampMs, WireFormat.keyBytes(queue, timerKey), value, headers);
    }

    private static void add(List<Header> headers, String name, String value) {
        if (value != null) {
            headers.add(new RecordHeader(name, value.getBytes(StandardCharsets.UTF_8)));
        }
    }

    private void checkShape() {
        boolean oneShot = delayMs != null || deliverAt != null;
        boolean rule = cron != null || every != null;
        boolean window = startAt != null || endAt != null || maxOccurrences != null || catchUp != null;
        if (op.upserts()) {
            if (!oneShot && !rule) {
                throw new IllegalStateException(op.wireName() + " " + key() + ": give delay(...), at(...), cron(...) or every(...)");
            }
            // delay/at and cron/every replace each other within their kind; across kinds the intent is unclear, so neither wins
            if (oneShot && rule) {
                throw new IllegalStateException(op.wireName() + " " + key() + ": a rule (cron/every) and a time (delay/at) exclude each other");
            }
            if (window && !rule) {
                throw new IllegalStateException(op.wireName() + " " + key()
                        + ": startAt, endAt, maxOccurrences and catchUp belong to a rule: give cron(...) or every(...)");
            }
            if (txn == null) {
                throw new IllegalStateException(op.wireName() + " " + key() + ": give txn(...)");
            }
            if (payloadJson == null) {
                throw new IllegalStateException(op.wireName() + " " + key() + ": give payload(...) (\"null\" for none)");
            }
            try {
                JSON.readTree(payloadJson);
            } catch (JsonProcessingException e) {
                throw new IllegalArgumentException("payload of " + key() + " is not JSON: " + e.getOriginalMessage(), e);
            }
        } else if (oneShot || rule || window || txn != null || payloadJson != null) {
            // a cancel stops a whole series: it names nothing of the rule
            throw new IllegalStateException("cancel " + key() + " takes no time, rule, txn or payload");
        }
    }
}
