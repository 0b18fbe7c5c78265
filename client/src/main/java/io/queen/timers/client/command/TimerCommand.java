package io.queen.timers.client.command;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.fasterxml.jackson.databind.util.RawValue;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
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
        if (op.upserts()) {
            if (delayMs == null && deliverAt == null) {
                throw new IllegalStateException(op.wireName() + " " + key() + ": give delay(...) or at(...)");
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
        } else if (delayMs != null || deliverAt != null || txn != null || payloadJson != null) {
            throw new IllegalStateException("cancel " + key() + " takes no time, txn or payload");
        }
    }
}
