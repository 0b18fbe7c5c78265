package io.queen.timers.faults.check;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.queen.timers.faults.load.CommandGenerator;
import io.queen.timers.faults.load.CommandKind;
import io.queen.timers.faults.load.Intent;
import io.queen.timers.processes.PostgresProcess;
import io.queen.timers.processes.stack.Stack;
import io.queen.timers.faults.decode.DecodedFrame;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Instant;
import java.util.ArrayList;
import java.util.BitSet;
import java.util.Comparator;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.common.header.Header;

/**
 * The checks, from what is observable outside the services only: the command topics and the audit
 * topics read with a plain consumer, the log decoded by the harness's own decoder (written from docs/formats.md, and
 * compared with the product's codec: {@link TwoDecoders}), {@code queen.log_dlq},
 * {@code queen.log_timers} and the audit outbox. Never a service's counter.
 *
 * <p>The oracle is the generator's record of what it sent ({@link Intent}), never the bridge's reading of
 * it: each timer's commands are replayed in offset order against the semantics (docs/fault-harness.md),
 * and each verdict must be one the semantics allow at that point. One live message per timer: a
 * schedule with nothing live is {@code scheduled}; with a live message it is {@code rescheduled} (same
 * id, the command's txn, payload and time), or {@code too_late} while that message is being fired, or
 * {@code scheduled} (a new id) only once that message was delivered. A cancel is {@code cancelled} (the
 * live message), {@code absent} only with nothing live, {@code too_late} as above. "Delivered before a
 * verdict" is read from the audit topic, from every copy of both events (at-least-once): a verdict that
 * needs the delivery before it ({@code scheduled} anew, {@code absent}) is allowed when a copy of the
 * message's {@code fired} or {@code dead_lettered} event precedes a copy of the verdict; a verdict that
 * needs it after ({@code rescheduled}, {@code cancelled}, {@code too_late}) is a violation only when every
 * copy of the delivery precedes every copy of the verdict. The first copies alone do not give the outbox's
 * order: a round whose earlier batch was lost (expired) while a later batch of the same partition landed
 * puts a later row's event first, and the republished round brings the earlier row after it
 * (docs/fault-harness.md "Delivered before this verdict").
 * Each message must end exactly one way — one frame in its queue's log, or cancelled, or (poisoned) one
 * DLQ row — and a frame must carry the txn and payload of the message's last applied command, be in the
 * right tenant's queue and partition, and not be earlier than that command's own time (the record's
 * timestamp + delayMs, or its deliverAt); every message id in the log is a UUIDv7. Recurring series are judged by {@link RecurringCheck}: one delivery per
 * occurrence of the rule the generator sent.
 */
public final class Checker {

    private static final ObjectMapper JSON = new ObjectMapper();
    private static final String[] COMMAND_TOPICS = {Stack.COMMANDS_A, Stack.COMMANDS_B};
    private static final String[] TENANTS = {Stack.TENANT_A, Stack.TENANT_B};
    private static final String[] AUDIT_TOPICS = {Stack.AUDIT, Stack.AUDIT_B};

    /** Clocks of the harness (record timestamps) and of PostgreSQL, read on one host at different moments. */
    public static final long CLOCK_SLACK_MS = 1_000;

    /**
     * How long a bridge of the harness may stand still between its transaction's start (the verdict's {@code at}) and its
     * lock statement: a {@code pause} stops a bridge up to its session + 2 s (8 s; FaultInjector), at any moment, also
     * mid-transaction (PostgreSQL and the broker faults end the transaction instead: no verdict); plus 5 s for a JVM not
     * scheduled on a loaded two-core machine.
     */
    public static final long HARNESS_BRIDGE_STALL_MS = Stack.SESSION_MS + 2_000 + 5_000;

    /**
     * How long before a timer's own time the harness's bridges may answer {@code too_late} for it: the verdict's time is
     * its transaction's start; the bridge may then have stood still ({@link #HARNESS_BRIDGE_STALL_MS}) and its lock
     * statement, which found the timer claimed, may have waited up to their statement timeout; plus
     * {@link #CLOCK_SLACK_MS}: 24 s, below the 30-90 s of the far timers (CommandGenerator.FAR_MIN_MS). The simulated
     * run of the mutation test uses the same, so a mutant caught there is caught under CI's settings.
     */
    public static final long HARNESS_TOO_LATE_SLACK_MS = Stack.BRIDGE_STATEMENT_TIMEOUT_MS + HARNESS_BRIDGE_STALL_MS + CLOCK_SLACK_MS;

    /** One command record as it landed in its topic, with what the generator meant it to be. */
    record Cmd(int tenant, int partition, long offset, long timestamp, long seq, Intent intent) {
        CommandKind kind() {
            return intent.kind();
        }

        String timer() {
            return tenant + "/" + intent.queue() + "/" + intent.key();
        }
    }

    /** Where an event first appeared on its tenant's audit topic: events of one timer share a partition (key queue/timerKey). */
    record Pos(int partition, long offset) {
        boolean before(Pos o) {
            return o != null && partition == o.partition && offset < o.offset;
        }

        /** The later of two appearances of one event (its copies share a partition: one key). */
        static Pos later(Pos a, Pos b) {
            return a.before(b) ? b : a;
        }

        /** The earlier of two appearances of one event. */
        static Pos earlier(Pos a, Pos b) {
            return b.before(a) ? b : a;
        }
    }

    /** A fired or dead_lettered event, read from the audit topic of {@code tenant}. */
    private record OutcomeEvent(int tenant, String type, String eventId, String messageId, Pos pos) {
    }

    /** The fields of a verdict event the checks use (a whole JSON tree per event would not fit a million). */
    record Verdict(String eventId, String type, String messageId, String txn, String partition, String deliverAt, String reason,
                   String at, Pos pos) {
        static Verdict of(JsonNode ev, Pos pos) {
            return new Verdict(ev.path("eventId").asText(), ev.path("type").asText(), ev.path("messageId").asText(null),
                    ev.path("txn").asText(null), ev.path("partition").asText(null), ev.path("deliverAt").asText(null), ev.path("reason").asText(null),
                    ev.path("at").asText(null), pos);
        }
    }

    /** One message (a timer between its {@code scheduled} and its end). */
    private static final class Msg {
        final UUID id;
        final int tenant;
        final String queue;
        final String key;
        final boolean poison;
        String partition;
        String txn;
        long payloadHash;
        /** The last applied command's own time (record timestamp + delayMs, or deliverAt): "early" is against this. */
        Instant due;
        /** The last applied command's record timestamp: its send, where lateness is counted from when its time was past. */
        long sent;
        /** The created_at of its first frame's segment. */
        Instant firedAt;
        boolean cancelled;
        /** The first and the last copy of this message's fired or dead_lettered events on the audit topic, if any. */
        Pos deliveredFirst;
        Pos deliveredLast;
        int fires;
        int dlq;
        boolean firedEvent;
        boolean deadLetteredEvent;
        /** The eventId of its first fired event: the harness's consumer read it. */
        String firedEventId;

        Msg(UUID id, int tenant, String queue, String key, boolean poison) {
            this.id = id;
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
    /** The topics read (the harness's; a test gives topics of its own). Record ids in reports keep the harness's names. */
    private String[] commandTopics = COMMAND_TOPICS;
    private String[] auditTopics = AUDIT_TOPICS;
    private final Database postgres;
    private final Intent[] intents;
    private final Set<Long> failedSeqs;
    private final long tooLateSlackMs;
    private final BitSet landedSeqs = new BitSet();
    private long landedTwice;
    private final Findings f = new Findings();
    private final Map<String, Cmd> commands = new HashMap<>();
    private final Map<String, Map<String, Verdict>> verdicts = new HashMap<>();
    /** The last copy of each verdict event on the audit topic, by eventId (its first copy is {@link Verdict#pos()}). */
    private final Map<String, Pos> verdictLast = new HashMap<>();
    private final Map<UUID, Msg> messages = new HashMap<>();
    private final List<OutcomeEvent> outcomeEvents = new ArrayList<>();
    private final RecurringCheck recurring;
    private final Lateness late;

    /**
     * @param intents    what the generator sent, by seq
     * @param failedSeqs seqs whose send the producer reported failed: each one not in the topics fails the run
     * @param tooLateSlackMs how long before a timer's own time a {@code too_late} may come: the verdict's time is its
     *                   bridge transaction's start, and the statement that then found the timer claimed may have
     *                   waited for row locks up to the bridge's statement timeout; plus {@link #CLOCK_SLACK_MS}
     */
    public Checker(String bootstrap, PostgresProcess postgres, Intent[] intents, Set<Long> failedSeqs, long tooLateSlackMs) {
        this(postgres == null ? null : postgres::connect, bootstrap, intents, failedSeqs, tooLateSlackMs);
    }

    /** Where the checker's SQL goes: the harness's PostgreSQL process, or a test's database. */
    interface Database {
        Connection connect() throws SQLException;
    }

    /** A checker on a test's database (the log's reading is tested against real segment rows). */
    static Checker on(Database db, Intent[] intents) {
        return new Checker(db, null, intents, Set.of(), CLOCK_SLACK_MS);
    }

    /** A checker on a test's database and broker, reading these command and audit topics (index: tenant A, B). */
    static Checker on(Database db, String bootstrap, String[] commandTopics, String[] auditTopics, Intent[] intents) {
        Checker c = new Checker(db, bootstrap, intents, Set.of(), HARNESS_TOO_LATE_SLACK_MS);
        c.commandTopics = commandTopics;
        c.auditTopics = auditTopics;
        return c;
    }

    private Checker(Database postgres, String bootstrap, Intent[] intents, Set<Long> failedSeqs, long tooLateSlackMs) {
        this.bootstrap = bootstrap;
        this.postgres = postgres;
        this.intents = intents;
        this.failedSeqs = failedSeqs;
        this.tooLateSlackMs = tooLateSlackMs;
        for (String v : List.of("duplicate fires", "losses", "early fires", "fired with another payload or txn than its last schedule",
                "cancelled, then fired", "records without a verdict", "records with 2+ verdicts (different eventId)",
                "hostile records not rejected", "valid records rejected", "verdicts of unknown records",
                "poisoned timers not dead-lettered", "healthy timers dead-lettered", "DLQ rows without dead_lettered event",
                "fires without fired event", "fired events without a fire", "timers left staged", "audit outbox rows left",
                "offset gaps", "tenant crossings", "unknown messages in the log", "inconsistent verdicts",
                "verdicts the semantics do not allow", "verdict time is not the command's own time",
                "hostile records rejected for another reason than intended", "producer send failures",
                "acknowledged commands missing from the topics", "records the generator did not write",
                "dead-lettered with another txn than its last schedule", "undecodable segments", "segments the decoders disagree on",
                "message ids not UUIDv7")) {
            f.declare(v);
        }
        late = new Lateness(f);
        recurring = new RecurringCheck(f, late, tooLateSlackMs);
    }

    /**
     * The harness's own observation of the run: when its consumer ({@link AuditWatch}) first read each audit event, by
     * eventId; when its {@link LogWatch} first saw each message's frame in the log, by message id, and each staged version
     * of a timer in the staging table ({@link LogWatch#staging}); the faults' impaired time; how many fault-free fires the
     * run must judge. With it, every fire's lateness from the send and its fired event's delay are judged against the
     * bounds the faults allow (docs/fault-harness.md "Lateness"); without it, lateness is only reported.
     */
    public Checker observed(Map<String, Long> readAt, Map<UUID, Long> seenAt, Map<String, Long> stagedAt, FaultTimeline faults,
                            int minFaultFree) {
        late.observed(readAt, seenAt, stagedAt, faults, minFaultFree);
        return this;
    }

    public Findings check() throws SQLException {
        readCommands();
        landed();
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
            seen[0] += TopicReader.readAll(bootstrap, commandTopics[t], r -> {
                Cmd c = command(tenant, r);
                if (c == null) {
                    return;
                }
                command(c);
                landed[c.kind().ordinal()]++;
            });
        }
        f.fact("command records in the topics", seen[0]);
        for (CommandKind k : CommandKind.values()) {
            f.fact("  " + k.name().toLowerCase() + " records", landed[k.ordinal()]);
        }
    }

    /** The record's intent comes from the generator by its seq header; the record's bytes are the bridge's to read. */
    private Cmd command(int tenant, ConsumerRecord<byte[], byte[]> r) {
        long seq = Long.parseLong(header(r, CommandGenerator.SEQ_HEADER));
        Intent intent = seq >= 0 && seq < intents.length ? intents[(int) seq] : null;
        if (intent == null) {
            f.violation("records the generator did not write", id(tenant, r.partition(), r.offset()) + " carries seq " + seq);
            return null;
        }
        if (intent.tenant() != tenant) {
            f.violation("tenant crossings", "seq " + seq + " was sent to tenant " + TENANTS[intent.tenant()] + "'s topic and landed in " + COMMAND_TOPICS[tenant]);
        }
        return new Cmd(tenant, r.partition(), r.offset(), r.timestamp(), seq, intent);
    }

    /**
     * Every command the producer sent must be in the topics: one whose send failed and that is not there fails the run
     * (the oracle cannot judge what never landed, and a harness that shrugs at it judges less than it claims), and one
     * acknowledged but absent is a loss by the broker the run must not hide. A send the client reported failed whose
     * record IS in the topics is judged like any other (the oracle replays what landed): after a broker kill the
     * idempotent producer can retry a batch the broker already holds, get OutOfOrderSequence until its delivery timeout
     * and report a failure for records that landed (a CI run on 878e132: 14 such records, resent for 9 minutes).
     */
    void landed() {
        long landedAnyway = 0;
        for (long seq : failedSeqs) {
            if (landedSeqs.get((int) seq)) {
                landedAnyway++;
            } else {
                f.violation("producer send failures", "seq " + seq + " (" + intents[(int) seq] + ") is not in the topics");
            }
        }
        for (int seq = 0; seq < intents.length; seq++) {
            if (intents[seq] != null && !landedSeqs.get(seq) && !failedSeqs.contains((long) seq)) {
                f.violation("acknowledged commands missing from the topics", "seq " + seq + " (" + intents[seq] + ")");
            }
        }
        f.fact("commands generated", java.util.Arrays.stream(intents).filter(java.util.Objects::nonNull).count());
        f.fact("commands whose send failed", failedSeqs.size());
        f.fact("  of them in the topics all the same (judged)", landedAnyway);
        f.fact("records that landed twice (same seq)", landedTwice);
    }

    private void readAudit() {
        long[] events = {0};
        long[] sameIdRepeats = {0};
        Map<String, Long> byType = new LinkedHashMap<>();
        for (int t = 0; t < 2; t++) {
            int tenant = t;
            events[0] += TopicReader.readAll(bootstrap, auditTopics[t], r -> {
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
                    if (!commandTopics[tenant].equals(src.path("topic").asText())) {
                        f.violation("tenant crossings", "audit topic " + AUDIT_TOPICS[tenant] + " answers a record of " + src.path("topic").asText());
                    }
                    String id = id(List.of(commandTopics).indexOf(src.path("topic").asText()), src.path("partition").asInt(), src.path("offset").asLong());
                    if (!verdict(id, ev, new Pos(r.partition(), r.offset()))) {
                        sameIdRepeats[0]++;
                    }
                } else if ("fired".equals(type) || "dead_lettered".equals(type) || "skipped".equals(type)) {
                    // Messages are built after the whole audit is read; judged then.
                    outcomeEvent(tenant, ev, new Pos(r.partition(), r.offset()));
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
        if (landedSeqs.get((int) c.seq())) {
            landedTwice++;
        }
        landedSeqs.set((int) c.seq());
    }

    /**
     * A verdict event for the record {@code id} at {@code pos} of its audit topic; false when its eventId was
     * seen before (an allowed repeat: the first appearance is the one that counts for the order).
     */
    boolean verdict(String id, JsonNode ev, Pos pos) {
        String eventId = ev.path("eventId").asText();
        verdictLast.merge(eventId, pos, Pos::later);
        return verdicts.computeIfAbsent(id, k -> new LinkedHashMap<>(2)).putIfAbsent(eventId, Verdict.of(ev, pos)) == null;
    }

    void outcomeEvent(int tenant, JsonNode ev, Pos pos) {
        if (RecurringCheck.isOccurrenceEvent(ev)) {
            recurring.event(tenant, ev);
            return;
        }
        outcomeEvents.add(new OutcomeEvent(tenant, ev.path("type").asText(), ev.path("eventId").asText(), ev.path("messageId").asText(), pos));
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
        // Where each message's delivery first and last appeared on the audit topic: the replay asks "delivered before this verdict?".
        Map<UUID, Pos[]> delivered = new HashMap<>();
        for (OutcomeEvent oe : outcomeEvents) {
            delivered.merge(UUID.fromString(oe.messageId()), new Pos[] {oe.pos(), oe.pos()},
                    (a, b) -> new Pos[] {Pos.earlier(a[0], b[0]), Pos.later(a[1], b[1])});
        }
        List<Cmd> ordered = new ArrayList<>(commands.values());
        // One timer's records share a Kafka partition (the key rule), so this is each timer's offset order.
        ordered.sort(Comparator.comparingInt(Cmd::tenant).thenComparingInt(Cmd::partition).thenComparingLong(Cmd::offset));
        Map<String, Msg> live = new HashMap<>();
        long hostile = 0;
        for (Cmd c : ordered) {
            String id = id(c.tenant(), c.partition(), c.offset());
            Map<String, Verdict> vs = verdicts.getOrDefault(id, Map.of());
            if (vs.isEmpty()) {
                f.violation("records without a verdict", id + " (seq " + c.seq() + ", " + c.intent() + ")");
                continue;
            }
            if (vs.size() > 1) {
                f.violation("records with 2+ verdicts (different eventId)", id + ": " + vs.values());
            }
            Verdict v = vs.values().iterator().next();
            String type = v.type();
            if (c.kind() == CommandKind.HOSTILE) {
                hostile++;
                if (!"rejected".equals(type)) {
                    f.violation("hostile records not rejected", id + " (seq " + c.seq() + ") got " + v);
                } else if (!c.intent().rejectReason().equals(v.reason())) {
                    f.violation("hostile records rejected for another reason than intended", id + " (seq " + c.seq() + ") meant "
                            + c.intent().rejectReason() + ", got " + v.reason());
                }
                continue;
            }
            if ("rejected".equals(type)) {
                f.violation("valid records rejected", id + " (seq " + c.seq() + ") got " + v);
                continue;
            }
            if (c.intent().recurring() || c.intent().key().startsWith(CommandGenerator.SERIES_KEY_PREFIX)) {
                // a series' key gets only series and cancels (the generator's rule): judged by epochs of its rules
                recurring.command(c, id, v);
                continue;
            }
            replay(c, id, v, live, delivered);
        }
        f.fact("hostile records judged (reason compared with the intended one)", hostile);
        for (OutcomeEvent oe : outcomeEvents) {
            int tenant = oe.tenant();
            Msg m = messages.get(UUID.fromString(oe.messageId()));
            if (m == null || m.tenant != tenant) {
                f.violation(m == null ? "unknown messages in the log" : "tenant crossings",
                        oe.type() + " event of message " + oe.messageId() + " on the audit topic of " + TENANTS[tenant]
                                + ", which no scheduled verdict of that tenant announced");
            } else if ("fired".equals(oe.type())) {
                m.firedEvent = true;
                if (m.firedEventId == null) {
                    m.firedEventId = oe.eventId();
                }
            } else {
                m.deadLetteredEvent = true;
            }
        }
    }

    /**
     * One command of a timer against the model: the verdict must be one the semantics allow given what is live,
     * and the model then follows the verdict (so one wrong verdict is reported once, not at every later command).
     */
    private void replay(Cmd c, String id, Verdict v, Map<String, Msg> live, Map<UUID, Pos[]> delivered) {
        Intent in = c.intent();
        Msg m = live.get(c.timer());
        String at = id + " (seq " + c.seq() + ", " + in.op() + " " + c.timer() + ") answered " + v.type();
        // The audit topic's copies give the outbox's order only partly (at-least-once, and a lost batch lets a later
        // row's event go first): a delivery may have preceded the verdict when a copy of it precedes a copy of the
        // verdict (allows scheduled anew and absent); it surely did when every copy precedes every copy (forbids
        // rescheduled, cancelled, too_late). Without repeats both are the one order of the two events.
        Pos verdictLastPos = verdictLast.getOrDefault(v.eventId(), v.pos());
        boolean mayBeDeliveredBefore = m != null && m.deliveredFirst != null && m.deliveredFirst.before(verdictLastPos);
        boolean deliveredBefore = m != null && m.deliveredLast != null && m.deliveredLast.before(v.pos());
        switch (v.type()) {
            case "scheduled" -> {
                if (in.cancel()) {
                    f.violation("verdicts the semantics do not allow", at + ": a cancel never schedules");
                    return;
                }
                if (m != null && !mayBeDeliveredBefore) {
                    f.violation("verdicts the semantics do not allow", at + " with a new message " + v.messageId() + " while message " + m.id
                            + " was live (not fired or dead-lettered before this verdict): expected rescheduled or too_late");
                }
                if (v.messageId() == null) {
                    f.violation("inconsistent verdicts", id + ": scheduled without a messageId: " + v);
                    return;
                }
                UUID mid = UUID.fromString(v.messageId());
                if (messages.containsKey(mid)) {
                    f.violation("inconsistent verdicts", id + ": scheduled names a message id already born: " + mid);
                    return;
                }
                Msg born = new Msg(mid, c.tenant(), in.queue(), in.key(), c.kind() == CommandKind.POISON);
                Pos[] d = delivered.get(mid);
                born.deliveredFirst = d == null ? null : d[0];
                born.deliveredLast = d == null ? null : d[1];
                messages.put(mid, born);
                live.put(c.timer(), born);
                applySchedule(c, id, v, born);
            }
            case "rescheduled" -> {
                if (in.cancel()) {
                    f.violation("verdicts the semantics do not allow", at + ": a cancel never reschedules");
                } else if (m == null) {
                    f.violation("verdicts the semantics do not allow", at + " with nothing live: expected scheduled");
                } else if (!m.id.toString().equals(v.messageId())) {
                    f.violation("verdicts the semantics do not allow", at + " naming message " + v.messageId() + ", the live one is " + m.id);
                } else {
                    if (deliveredBefore) {
                        f.violation("verdicts the semantics do not allow", at + ": message " + m.id + " was fired or dead-lettered before this verdict"
                                + " (every copy of its delivery precedes every copy of the verdict)");
                    }
                    applySchedule(c, id, v, m);
                }
            }
            case "cancelled" -> {
                if (!in.cancel()) {
                    f.violation("verdicts the semantics do not allow", at + ": a schedule never cancels");
                }
                if (m == null || !m.id.toString().equals(v.messageId())) {
                    f.violation("verdicts the semantics do not allow", at + " naming message " + v.messageId() + ", the live one is "
                            + (m == null ? "none" : m.id));
                    Msg named = v.messageId() == null ? null : messages.get(UUID.fromString(v.messageId()));
                    if (named != null && named.tenant == c.tenant() && named.key.equals(in.key())) {
                        named.cancelled = true;
                    }
                    return;
                }
                if (deliveredBefore) {
                    f.violation("verdicts the semantics do not allow", at + ": message " + m.id + " was fired or dead-lettered before this verdict"
                            + " (every copy of its delivery precedes every copy of the verdict)");
                }
                m.cancelled = true;
                live.remove(c.timer());
            }
            case "absent" -> {
                if (!in.cancel()) {
                    f.violation("verdicts the semantics do not allow", at + ": only a cancel can find nothing");
                } else if (m != null && !mayBeDeliveredBefore) {
                    f.violation("verdicts the semantics do not allow", at + " while message " + m.id
                            + " was live (not fired or dead-lettered before this verdict): expected cancelled or too_late");
                }
                live.remove(c.timer());
            }
            case "too_late" -> {
                if (m == null) {
                    f.violation("verdicts the semantics do not allow", at + " with nothing live: nothing can be firing");
                } else if (deliveredBefore) {
                    f.violation("verdicts the semantics do not allow", at + ": message " + m.id + " was already fired or dead-lettered");
                } else if (v.at() == null) {
                    // Without its time a too_late cannot be held to "claimed only when due": it is not an answer the product gives.
                    f.violation("verdicts the semantics do not allow", at + " without an at: its time cannot be judged against message "
                            + m.id + ", due " + m.due);
                } else if (m.due.toEpochMilli() > parseTime(v.at()).toEpochMilli() + tooLateSlackMs) {
                    f.violation("verdicts the semantics do not allow", at + " at " + v.at() + ", but message " + m.id + " is due only at " + m.due
                            + ": a timer is claimed only when due");
                }
            }
            default -> f.violation("inconsistent verdicts", id + ": verdict type " + v.type());
        }
    }

    /** A scheduled or rescheduled verdict: it must announce the command's own txn, partition and time; the message takes them. */
    private void applySchedule(Cmd c, String id, Verdict v, Msg m) {
        Intent in = c.intent();
        Instant due = in.due(c.timestamp());
        if (!in.txn().equals(v.txn()) || !in.partition().equals(v.partition())) {
            f.violation("inconsistent verdicts", id + ": verdict txn " + v.txn() + " partition " + v.partition() + ", the command's are "
                    + in.txn() + " " + in.partition());
        }
        if (v.deliverAt() == null || parseTime(v.deliverAt()).toEpochMilli() != due.toEpochMilli()) {
            f.violation("verdict time is not the command's own time", id + " (seq " + c.seq() + "): verdict deliverAt " + v.deliverAt()
                    + ", the command's time is " + due + (in.delayMs() != null ? " (record timestamp " + Instant.ofEpochMilli(c.timestamp())
                    + " + delayMs " + in.delayMs() + ")" : " (its deliverAt)"));
        }
        m.partition = in.partition();
        m.txn = in.txn();
        m.payloadHash = in.payloadHash();
        m.due = due;
        m.sent = c.timestamp();
    }

    private static Instant parseTime(String text) {
        return java.time.OffsetDateTime.parse(text).toInstant();
    }

    void decodeLog() throws SQLException {
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
                            String segment = where + " segment " + base + ".." + end;
                            TwoDecoders read = TwoDecoders.decode(rs.getBytes(4));
                            if (!read.agree()) {
                                f.violation("segments the decoders disagree on", segment + ": " + read.difference());
                            }
                            if (read.frames() == null) {
                                // Its frames are unknown to the oracle: their messages count as lost, which they are to a reader.
                                f.violation("undecodable segments", segment + ": " + read.independentError());
                                continue;
                            }
                            List<DecodedFrame> fs = read.frames();
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

    void fire(int tenant, String queue, String partition, long offset, Instant createdAt, DecodedFrame frame, String where) {
        String at = where + " offset " + offset + " message " + frame.messageId() + " txn " + frame.txn();
        if (!DecodedFrame.isUuidV7(frame.messageId())) {
            // Issue 43: ids are minted as UUIDv7 at schedule (their time orders them); another version came from another minter.
            f.violation("message ids not UUIDv7", at + " is version " + frame.messageId().version() + " variant " + frame.messageId().variant());
        }
        long hash;
        try {
            hash = Intent.payloadHash(JSON.readTree(frame.payload()));
        } catch (Exception e) {
            hash = -1;
        }
        if (recurring.fire(tenant, queue, partition, createdAt, frame, hash, at)) {
            return;
        }
        Msg m = messages.get(frame.messageId());
        if (m == null) {
            f.violation("unknown messages in the log", at);
            return;
        }
        m.fires++;
        if (m.tenant != tenant || !m.queue.equals(queue)) {
            f.violation("tenant crossings", at + " belongs to " + m.name());
        }
        if (!m.partition.equals(partition) || !m.txn.equals(frame.txn()) || hash != m.payloadHash) {
            f.violation("fired with another payload or txn than its last schedule", at + " (" + m.name() + ", expected partition "
                    + m.partition + " txn " + m.txn + ")");
        }
        if (m.firedAt == null) {
            m.firedAt = createdAt;
        }
        if (createdAt.isBefore(m.due)) {
            f.violation("early fires", at + ": created_at " + createdAt + " < the command's own time " + m.due);
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
                dlqRow((UUID) rs.getObject(1), rs.getString(2), rs.getString(3), rs.getString(4));
            }
        }
        f.fact("DLQ rows", rows);
    }

    void dlqRow(UUID mid, String txn, String tenantId, String queue) {
        Msg m = messages.get(mid);
        String at = "DLQ row of message " + mid + " txn " + txn + " tenant " + tenantId + " queue " + queue;
        if (m == null && recurring.dlqRow(mid, txn, at)) {
            return;
        }
        if (m == null) {
            f.violation("unknown messages in the log", at);
            return;
        }
        m.dlq++;
        if (!TENANTS[m.tenant].equals(tenantId) || !m.queue.equals(queue)) {
            f.violation("tenant crossings", at + " belongs to " + m.name());
        }
        if (!m.poison) {
            f.violation("healthy timers dead-lettered", at);
        }
        if (!m.txn.equals(txn)) {
            f.violation("dead-lettered with another txn than its last schedule", at + " (" + m.name() + ", expected txn " + m.txn + ")");
        }
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
            if (m.fires > 0) {
                late.fire(Lateness.LATE, at, m.sent, m.due.toEpochMilli(), m.firedAt.toEpochMilli(), m.id, m.txn, m.firedEventId);
            }
        }
        f.fact("messages scheduled (scheduled verdicts)", messages.size());
        f.fact("fires (frames in the log)", fired);
        f.fact("cancelled", cancelled);
        f.fact("dead-lettered (poisoned)", deadLettered);
        recurring.judge();
        late.summarize();
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

    private static String header(ConsumerRecord<byte[], byte[]> r, String name) {
        Header h = r.headers().lastHeader(name);
        return h == null ? null : new String(h.value(), StandardCharsets.UTF_8);
    }

    static String id(int tenant, int partition, long offset) {
        return (tenant < 0 ? "?" : COMMAND_TOPICS[tenant]) + "/" + partition + "/" + offset;
    }
}
