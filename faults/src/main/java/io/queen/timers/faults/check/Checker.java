package io.queen.timers.faults.check;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.queen.timers.faults.load.CommandGenerator;
import io.queen.timers.faults.load.CommandKind;
import io.queen.timers.faults.stack.PostgresProcess;
import io.queen.timers.faults.stack.Stack;
import io.queen.timers.log.codec.Frame;
import io.queen.timers.log.codec.SegmentCodec;
import io.queen.timers.log.codec.TxnHash;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.common.header.Header;

/**
 * The checks, from what is observable outside the services only: the command topics and the audit
 * topics read with a plain consumer, the log decoded with the project's codec, {@code queen.log_dlq},
 * {@code queen.log_timers} and the audit outbox. Never a service's counter.
 *
 * <p>The model: every {@code scheduled} verdict births a message (its {@code messageId}); a
 * {@code rescheduled} verdict replaces its txn, payload and time; a {@code cancelled} verdict ends it.
 * Each message must end exactly one way — one frame in its queue's log, or cancelled, or (poisoned) one
 * DLQ row — and a frame must carry the txn and payload of the message's last applied command, be in the
 * right tenant's queue and partition, and not be earlier than that command's delivery time.
 */
public final class Checker {

    private static final ObjectMapper JSON = new ObjectMapper();
    private static final String[] COMMAND_TOPICS = {Stack.COMMANDS_A, Stack.COMMANDS_B};
    private static final String[] TENANTS = {Stack.TENANT_A, Stack.TENANT_B};
    private static final String[] AUDIT_TOPICS = {Stack.AUDIT, Stack.AUDIT_B};

    /** One command record as it landed in its topic. */
    record Cmd(int tenant, int partition, long offset, long timestamp, long seq, CommandKind kind,
                       String queue, String key, String txn, long payloadHash) {
    }

    /** A fired or dead_lettered event, read from the audit topic of {@code tenant}. */
    private record OutcomeEvent(int tenant, String type, String messageId) {
    }

    /** The fields of a verdict event the checks use (a whole JSON tree per event would not fit a million). */
    record Verdict(String eventId, String type, String messageId, String txn, String partition, String deliverAt, String reason) {
        static Verdict of(JsonNode ev) {
            return new Verdict(ev.path("eventId").asText(), ev.path("type").asText(), ev.path("messageId").asText(null),
                    ev.path("txn").asText(null), ev.path("partition").asText(null), ev.path("deliverAt").asText(null), ev.path("reason").asText(null));
        }
    }

    /** One message (a timer between its {@code scheduled} and its end). */
    private static final class Msg {
        final int tenant;
        final String queue;
        final String key;
        final boolean poison;
        String partition;
        String txn;
        long payloadHash;
        Instant deliverAt;
        boolean deliverAtInPast;
        boolean cancelled;
        int fires;
        int dlq;
        boolean firedEvent;
        boolean deadLetteredEvent;

        Msg(int tenant, String queue, String key, boolean poison) {
            this.tenant = tenant;
            this.queue = queue;
            this.key = key;
            this.poison = poison;
        }

        String name() {
            return "tenant " + TENANTS[tenant] + " " + queue + "/" + key;
        }
    }

    private final String bootstrap;
    private final PostgresProcess postgres;
    private final byte[] kinds;
    private final Findings f = new Findings();
    private final Map<String, Cmd> commands = new HashMap<>();
    private final Map<String, Map<String, Verdict>> verdicts = new HashMap<>();
    private final Map<UUID, Msg> messages = new HashMap<>();
    private final List<Long> lateness = new ArrayList<>();
    private final List<OutcomeEvent> outcomeEvents = new ArrayList<>();

    public Checker(String bootstrap, PostgresProcess postgres, byte[] kinds) {
        this.bootstrap = bootstrap;
        this.postgres = postgres;
        this.kinds = kinds;
        for (String v : List.of("duplicate fires", "losses", "early fires", "fired with another payload or txn than its last schedule",
                "cancelled, then fired", "records without a verdict", "records with 2+ verdicts (different eventId)",
                "hostile records not rejected", "valid records rejected", "verdicts of unknown records",
                "poisoned timers not dead-lettered", "healthy timers dead-lettered", "DLQ rows without dead_lettered event",
                "fires without fired event", "fired events without a fire", "timers left staged", "audit outbox rows left",
                "offset gaps", "tenant crossings", "unknown messages in the log", "inconsistent verdicts")) {
            f.declare(v);
        }
    }

    public Findings check() throws SQLException {
        readCommands();
        readAudit();
        checkVerdictsAndBuildMessages();
        decodeLog();
        readDlq();
        judgeMessages();
        staged();
        return f;
    }

    private void readCommands() {
        long[] landed = new long[CommandKind.values().length];
        long[] seen = {0};
        for (int t = 0; t < 2; t++) {
            int tenant = t;
            seen[0] += TopicReader.readAll(bootstrap, COMMAND_TOPICS[t], r -> {
                Cmd c = command(tenant, r);
                command(c);
                landed[c.kind().ordinal()]++;
            });
        }
        f.fact("command records in the topics", seen[0]);
        for (CommandKind k : CommandKind.values()) {
            f.fact("  " + k.name().toLowerCase() + " records", landed[k.ordinal()]);
        }
    }

    private Cmd command(int tenant, ConsumerRecord<byte[], byte[]> r) {
        long seq = Long.parseLong(header(r, CommandGenerator.SEQ_HEADER));
        CommandKind kind = CommandKind.of(kinds[(int) seq]);
        String queue = null;
        String key = null;
        String txn = null;
        long payloadHash = 0;
        if (kind != CommandKind.HOSTILE) {
            try {
                if (header(r, "queen-op") != null) {
                    queue = header(r, "queen-queue");
                    key = header(r, "queen-timer-key");
                    txn = header(r, "queen-txn");
                    if (r.value() != null && r.value().length > 0) {
                        payloadHash = payloadHash(JSON.readTree(r.value()));
                    }
                } else {
                    JsonNode cmd = JSON.readTree(r.value());
                    queue = cmd.path("queue").asText();
                    key = cmd.path("timerKey").asText();
                    txn = cmd.path("txn").asText(null);
                    if (cmd.has("payload")) {
                        payloadHash = payloadHash(cmd.get("payload"));
                    }
                }
            } catch (Exception e) {
                throw new IllegalStateException("the harness cannot parse its own command at " + id(tenant, r.partition(), r.offset()), e);
            }
        }
        return new Cmd(tenant, r.partition(), r.offset(), r.timestamp(), seq, kind, queue, key, txn, payloadHash);
    }

    private void readAudit() {
        long[] events = {0};
        long[] sameIdRepeats = {0};
        Map<String, Long> byType = new LinkedHashMap<>();
        for (int t = 0; t < 2; t++) {
            int tenant = t;
            events[0] += TopicReader.readAll(bootstrap, AUDIT_TOPICS[t], r -> {
                JsonNode ev;
                try {
                    ev = JSON.readTree(r.value());
                } catch (Exception e) {
                    f.violation("inconsistent verdicts", "unreadable audit event at " + AUDIT_TOPICS[tenant] + "/" + r.partition() + "/" + r.offset());
                    return;
                }
                String type = ev.path("type").asText();
                byType.merge(type, 1L, Long::sum);
                if (!TENANTS[tenant].equals(ev.path("tenant").asText())) {
                    f.violation("tenant crossings", "audit topic " + AUDIT_TOPICS[tenant] + " carries an event of tenant " + ev.path("tenant").asText() + ": " + ev);
                }
                if (ev.has("source")) {
                    JsonNode src = ev.get("source");
                    if (!COMMAND_TOPICS[tenant].equals(src.path("topic").asText())) {
                        f.violation("tenant crossings", "audit topic " + AUDIT_TOPICS[tenant] + " answers a record of " + src.path("topic").asText());
                    }
                    String id = id(topicIndex(src.path("topic").asText()), src.path("partition").asInt(), src.path("offset").asLong());
                    if (!verdict(id, ev)) {
                        sameIdRepeats[0]++;
                    }
                } else if ("fired".equals(type) || "dead_lettered".equals(type)) {
                    // Messages are built after the whole audit is read; judged then.
                    outcomeEvent(tenant, ev);
                }
            });
        }
        f.fact("audit events read", events[0]);
        f.fact("  repeated with the same eventId (allowed: at-least-once)", sameIdRepeats[0]);
        byType.forEach((k, v) -> f.fact("  " + k, v));
    }

    /** A command record as it landed (package-private: the unit test feeds the model directly). */
    void command(Cmd c) {
        commands.put(id(c.tenant(), c.partition(), c.offset()), c);
    }

    /** A verdict event for the record {@code id}; false when its eventId was seen before (an allowed repeat). */
    boolean verdict(String id, JsonNode ev) {
        return verdicts.computeIfAbsent(id, k -> new LinkedHashMap<>(2)).putIfAbsent(ev.path("eventId").asText(), Verdict.of(ev)) == null;
    }

    void outcomeEvent(int tenant, JsonNode ev) {
        outcomeEvents.add(new OutcomeEvent(tenant, ev.path("type").asText(), ev.path("messageId").asText()));
    }

    Findings findings() {
        return f;
    }

    void checkVerdictsAndBuildMessages() {
        for (String id : verdicts.keySet()) {
            if (!commands.containsKey(id)) {
                f.violation("verdicts of unknown records", id + ": " + verdicts.get(id).values().iterator().next());
            }
        }
        List<Cmd> ordered = new ArrayList<>(commands.values());
        ordered.sort(Comparator.comparingInt(Cmd::tenant).thenComparingInt(Cmd::partition).thenComparingLong(Cmd::offset));
        for (Cmd c : ordered) {
            String id = id(c.tenant(), c.partition(), c.offset());
            Map<String, Verdict> vs = verdicts.getOrDefault(id, Map.of());
            if (vs.isEmpty()) {
                f.violation("records without a verdict", id + " (seq " + c.seq() + ", " + c.kind() + ")");
                continue;
            }
            if (vs.size() > 1) {
                f.violation("records with 2+ verdicts (different eventId)", id + ": " + vs.values());
            }
            Verdict v = vs.values().iterator().next();
            String type = v.type();
            if (c.kind() == CommandKind.HOSTILE) {
                if (!"rejected".equals(type)) {
                    f.violation("hostile records not rejected", id + " (seq " + c.seq() + ") got " + v);
                }
                continue;
            }
            if ("rejected".equals(type)) {
                f.violation("valid records rejected", id + " (seq " + c.seq() + ") got " + v);
                continue;
            }
            apply(c, id, type, v);
        }
        for (OutcomeEvent oe : outcomeEvents) {
            int tenant = oe.tenant();
            Msg m = messages.get(UUID.fromString(oe.messageId()));
            if (m == null || m.tenant != tenant) {
                f.violation(m == null ? "unknown messages in the log" : "tenant crossings",
                        oe.type() + " event of message " + oe.messageId() + " on the audit topic of " + TENANTS[tenant]
                                + ", which no scheduled verdict of that tenant announced");
            } else if ("fired".equals(oe.type())) {
                m.firedEvent = true;
            } else {
                m.deadLetteredEvent = true;
            }
        }
    }

    private void apply(Cmd c, String id, String type, Verdict v) {
        switch (type) {
            case "scheduled", "rescheduled" -> {
                UUID mid = UUID.fromString(v.messageId());
                Msg m = messages.get(mid);
                if ("scheduled".equals(type)) {
                    if (m != null) {
                        f.violation("inconsistent verdicts", id + ": scheduled names a message id already born: " + mid);
                    }
                    m = new Msg(c.tenant(), c.queue(), c.key(), c.kind() == CommandKind.POISON);
                    messages.put(mid, m);
                } else if (m == null || m.tenant != c.tenant() || !m.queue.equals(c.queue()) || !m.key.equals(c.key())) {
                    f.violation("inconsistent verdicts", id + ": rescheduled names a message of another timer or none: " + v);
                    return;
                }
                if (!c.txn().equals(v.txn())) {
                    f.violation("inconsistent verdicts", id + ": verdict txn " + v.txn() + " is not the command's " + c.txn());
                }
                m.partition = v.partition();
                m.txn = c.txn();
                m.payloadHash = c.payloadHash();
                m.deliverAt = Instant.parse(v.deliverAt());
                m.deliverAtInPast = m.deliverAt.toEpochMilli() < c.timestamp();
            }
            case "cancelled" -> {
                Msg m = messages.get(UUID.fromString(v.messageId()));
                if (m == null || m.tenant != c.tenant() || !m.key.equals(c.key())) {
                    f.violation("inconsistent verdicts", id + ": cancelled names a message of another timer or none: " + v);
                } else {
                    m.cancelled = true;
                }
            }
            case "absent", "too_late" -> {
            }
            default -> f.violation("inconsistent verdicts", id + ": verdict type " + type);
        }
    }

    private void decodeLog() throws SQLException {
        long segments = 0;
        long frames = 0;
        try (Connection c = postgres.connect()) {
            c.setAutoCommit(false);
            List<Object[]> partitions = new ArrayList<>();
            try (Statement s = c.createStatement();
                 ResultSet rs = s.executeQuery("SELECT q.tenant_id::text, q.name, p.id, p.name, p.last_offset, p.log_start"
                         + " FROM queen.queues q JOIN queen.log_partitions p ON p.queue_id = q.id ORDER BY 1, 2, 4")) {
                while (rs.next()) {
                    partitions.add(new Object[] {rs.getString(1), rs.getString(2), rs.getObject(3), rs.getString(4), rs.getLong(5), rs.getLong(6)});
                }
            }
            try (PreparedStatement ps = c.prepareStatement("SELECT base_offset, end_offset, created_at, blob FROM queen.log_segments"
                    + " WHERE partition_id = ? ORDER BY base_offset")) {
                ps.setFetchSize(64);
                for (Object[] p : partitions) {
                    String tenantId = (String) p[0];
                    String queue = (String) p[1];
                    String partition = (String) p[3];
                    String where = "tenant " + tenantId + " queue " + queue + " partition " + partition;
                    int tenant = List.of(TENANTS).indexOf(tenantId);
                    long expected = (long) p[5];
                    ps.setObject(1, p[2]);
                    try (ResultSet rs = ps.executeQuery()) {
                        while (rs.next()) {
                            segments++;
                            long base = rs.getLong(1);
                            long end = rs.getLong(2);
                            Instant createdAt = rs.getTimestamp(3).toInstant();
                            if (base != expected) {
                                f.violation("offset gaps", where + ": segment at " + base + ", expected " + expected);
                            }
                            expected = end + 1;
                            List<Frame> fs = SegmentCodec.unpack(rs.getBytes(4));
                            if (fs.size() != end - base + 1) {
                                f.violation("offset gaps", where + ": segment " + base + ".." + end + " holds " + fs.size() + " frames");
                            }
                            for (int i = 0; i < fs.size(); i++) {
                                frames++;
                                fire(tenant, queue, partition, base + i, createdAt, fs.get(i), where);
                            }
                        }
                    }
                    if (expected != (long) p[4] + 1) {
                        f.violation("offset gaps", where + ": segments end at " + (expected - 1) + ", last_offset is " + p[4]);
                    }
                }
            }
            c.rollback();
            f.fact("log partitions", partitions.size());
        }
        f.fact("log segments decoded", segments);
        f.fact("log frames decoded", frames);
    }

    void fire(int tenant, String queue, String partition, long offset, Instant createdAt, Frame frame, String where) {
        Msg m = messages.get(frame.messageId());
        String at = where + " offset " + offset + " message " + frame.messageId() + " txn " + frame.txn();
        if (m == null) {
            f.violation("unknown messages in the log", at);
            return;
        }
        m.fires++;
        if (m.tenant != tenant || !m.queue.equals(queue)) {
            f.violation("tenant crossings", at + " belongs to " + m.name());
        }
        long hash;
        try {
            hash = payloadHash(JSON.readTree(frame.payload()));
        } catch (Exception e) {
            hash = -1;
        }
        if (!m.partition.equals(partition) || !m.txn.equals(frame.txn()) || hash != m.payloadHash) {
            f.violation("fired with another payload or txn than its last schedule", at + " (" + m.name() + ", expected partition "
                    + m.partition + " txn " + m.txn + ")");
        }
        long late = createdAt.toEpochMilli() - m.deliverAt.toEpochMilli();
        if (createdAt.isBefore(m.deliverAt)) {
            f.violation("early fires", at + ": created_at " + createdAt + " < deliverAt " + m.deliverAt);
        } else if (!m.deliverAtInPast) {
            lateness.add(late);
        }
    }

    private void readDlq() throws SQLException {
        long rows = 0;
        try (Connection c = postgres.connect();
             Statement s = c.createStatement();
             ResultSet rs = s.executeQuery("SELECT d.message_id, d.transaction_id, q.tenant_id::text, q.name"
                     + " FROM queen.log_dlq d JOIN queen.log_partitions p ON p.id = d.partition_id JOIN queen.queues q ON q.id = p.queue_id"
                     + " WHERE d.consumer_group = '__timer__'")) {
            while (rs.next()) {
                rows++;
                UUID mid = (UUID) rs.getObject(1);
                Msg m = messages.get(mid);
                String at = "DLQ row of message " + mid + " txn " + rs.getString(2) + " tenant " + rs.getString(3) + " queue " + rs.getString(4);
                if (m == null) {
                    f.violation("unknown messages in the log", at);
                    continue;
                }
                m.dlq++;
                if (!TENANTS[m.tenant].equals(rs.getString(3)) || !m.queue.equals(rs.getString(4))) {
                    f.violation("tenant crossings", at + " belongs to " + m.name());
                }
                if (!m.poison) {
                    f.violation("healthy timers dead-lettered", at);
                }
            }
        }
        f.fact("DLQ rows", rows);
    }

    void judgeMessages() {
        long fired = 0;
        long cancelled = 0;
        long deadLettered = 0;
        for (Map.Entry<UUID, Msg> e : messages.entrySet()) {
            Msg m = e.getValue();
            String at = "message " + e.getKey() + " (" + m.name() + ", txn " + m.txn + ")";
            fired += m.fires;
            cancelled += m.cancelled ? 1 : 0;
            deadLettered += m.dlq;
            int ends = m.fires + m.dlq + (m.cancelled ? 1 : 0);
            if (m.cancelled && m.fires > 0) {
                f.violation("cancelled, then fired", at);
            }
            if (m.fires > 1) {
                for (int i = 1; i < m.fires; i++) {
                    f.violation("duplicate fires", at + " fired " + m.fires + " times");
                }
            }
            if (m.dlq > 1 || (m.dlq > 0 && m.fires > 0)) {
                f.violation("duplicate fires", at + " dead-lettered " + m.dlq + " times and fired " + m.fires + " times");
            }
            if (ends == 0) {
                f.violation("losses", at + " neither fired, cancelled nor dead-lettered");
            }
            if (m.poison && !m.cancelled && m.dlq == 0) {
                f.violation("poisoned timers not dead-lettered", at + " fires " + m.fires);
            }
            if (m.dlq > 0 && !m.deadLetteredEvent) {
                f.violation("DLQ rows without dead_lettered event", at);
            }
            if (m.fires > 0 && !m.firedEvent) {
                f.violation("fires without fired event", at);
            }
            if (m.fires == 0 && m.firedEvent) {
                f.violation("fired events without a fire", at);
            }
        }
        f.fact("messages scheduled (scheduled verdicts)", messages.size());
        f.fact("fires (frames in the log)", fired);
        f.fact("cancelled", cancelled);
        f.fact("dead-lettered (poisoned)", deadLettered);
        lateness.sort(null);
        f.fact("lateness max ms (deliverAt not in the past)", lateness.isEmpty() ? 0 : lateness.get(lateness.size() - 1));
        f.fact("lateness p99 ms", lateness.isEmpty() ? 0 : lateness.get((int) Math.min(lateness.size() - 1, Math.ceil(lateness.size() * 0.99) - 1)));
        f.fact("lateness p50 ms", lateness.isEmpty() ? 0 : lateness.get(lateness.size() / 2));
    }

    private void staged() throws SQLException {
        try (Connection c = postgres.connect(); Statement s = c.createStatement()) {
            try (ResultSet rs = s.executeQuery("SELECT tenant_id, queue, timer_key, deliver_at, attempts, last_error FROM queen.log_timers")) {
                while (rs.next()) {
                    f.violation("timers left staged", rs.getString(1) + " " + rs.getString(2) + "/" + rs.getString(3) + " due " + rs.getString(4)
                            + " attempts " + rs.getInt(5) + " last error " + rs.getString(6));
                }
            }
            try (ResultSet rs = s.executeQuery("SELECT count(*) FROM queen.timer_audit_outbox")) {
                rs.next();
                if (rs.getLong(1) > 0) {
                    f.violation("audit outbox rows left", rs.getLong(1) + " rows");
                }
            }
        }
    }

    static long payloadHash(JsonNode payload) throws Exception {
        return ByteBuffer.wrap(TxnHash.of(JSON.writeValueAsString(payload))).getLong();
    }

    private static String header(ConsumerRecord<byte[], byte[]> r, String name) {
        Header h = r.headers().lastHeader(name);
        return h == null ? null : new String(h.value(), StandardCharsets.UTF_8);
    }

    private static int topicIndex(String topic) {
        return Stack.COMMANDS_A.equals(topic) ? 0 : Stack.COMMANDS_B.equals(topic) ? 1 : -1;
    }

    static String id(int tenant, int partition, long offset) {
        return (tenant < 0 ? "?" : COMMAND_TOPICS[tenant]) + "/" + partition + "/" + offset;
    }
}
