package io.queen.timers.faults.check;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.queen.timers.faults.inject.FaultKind;
import io.queen.timers.faults.inject.Outage;
import io.queen.timers.faults.load.CommandGenerator;
import io.queen.timers.faults.load.CommandKind;
import io.queen.timers.faults.load.Intent;
import io.queen.timers.faults.load.Series;
import io.queen.timers.client.command.WireFormat;
import io.queen.timers.processes.stack.Stack;
import io.queen.timers.log.codec.Frame;
import io.queen.timers.log.codec.SegmentCodec;
import io.queen.timers.log.codec.UuidV7;
import io.queen.timers.log.push.Destination;
import io.queen.timers.log.push.LogPusher;
import io.queen.timers.sql.Migrations;
import io.queen.timers.testkit.FreshDatabase;
import io.queen.timers.testkit.TestKafka;
import io.queen.timers.testkit.TestPostgres;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.stream.Collectors;
import javax.sql.DataSource;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.header.internals.RecordHeader;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * Mutants through the checker's real readers (issue 38 point 5): each writes a small history as the product would — the
 * command records and the audit events to real topics, the fires as segments pushed with {@code queen.log_push_v1},
 * dead letters as {@code queen.log_dlq} rows, staged timers as {@code queen.log_timers} rows, in a migrated database —
 * and runs the whole {@link Checker#check()} on it: topic reads, the log's decoders, the DLQ and staged reads. The
 * correct history passes; each broken one FAILS on the violation that names it.
 */
class CheckerReadersIT {

    private static final ObjectMapper JSON = new ObjectMapper();
    private static final String Q = "faults.q0";

    /** One way the product can be wrong, written as the product would have written it. */
    enum Broken {
        NONE,
        /** A bridge crashed after applying seq 0 and replayed it from its offset: the same message staged and fired twice. */
        DUPLICATE_AFTER_REPLAY,
        /** The cancel of a timer due 40 s out is answered too_late, and the timer fires. */
        LOST_CANCEL,
        /** The reschedule of a timer due 40 s out is answered too_late, and it fires as first scheduled. */
        LOST_RESCHEDULE,
        /** One byte of a small payload changed between the command and the frame. */
        PAYLOAD_BYTE,
        /** One byte changed in a payload large enough to be stored zstd (over bridge.payload.zstd.threshold). */
        ZSTD_STORED_PAYLOAD_BYTE,
        /** A message fired into another queue of its tenant. */
        WRONG_QUEUE,
        /** A message fired into another log partition than its command named. */
        WRONG_PARTITION,
        /** The reschedule of key k4 applied to key k1's timer: k1 fires with k4's txn and payload, k4 with its first. */
        RESCHEDULE_OTHER_KEY,
        /** A timer left staged after the run settled. */
        LEFT_STAGED,
        /** A healthy timer dead-lettered instead of fired. */
        HEALTHY_DEAD_LETTERED,
        /** A timer fired 150 s after the history's outage ended: its segment's created_at that much later. */
        FIRED_LATE,
        /** A series' second occurrence fired 150 s after the outage ended. */
        OCCURRENCE_LATE,
        /** A timer fired on time, its fired event read 150 s later. */
        FIRED_EVENT_LATE
    }

    /** How late a *_LATE mutant fires, or has its fired event read. */
    private static final long LATE_MS = 150_000;

    private final List<Intent> intents = new ArrayList<>();
    private final List<ProducerRecord<byte[], byte[]>> commands = new ArrayList<>();
    private final List<ObjectNode> events = new ArrayList<>();
    private final List<Object[]> fires = new ArrayList<>();
    private final List<Object[]> deadLetters = new ArrayList<>();
    /** The events the harness's consumer reads late (FIRED_EVENT_LATE). */
    private final java.util.Set<String> late = new java.util.HashSet<>();
    /** The fires a *_LATE mutant makes late: their segment's created_at is moved on by LATE_MS. */
    private final java.util.Set<UUID> lateFires = new java.util.HashSet<>();
    private String commandTopic;
    private final long t0 = Instant.now().toEpochMilli() - 120_000;

    @ParameterizedTest
    @EnumSource(Broken.class)
    void theCorrectHistoryPassesAndEveryBrokenOneFails(Broken broken) throws Exception {
        Findings f = run(broken);
        if (broken == Broken.NONE) {
            assertThat(f.clean()).as(examples(f)).isTrue();
            assertThat(f.facts()).containsEntry("log frames decoded", 6L).containsEntry("DLQ rows", 1L)
                    .containsEntry("recurring occurrences fired (frames in the log)", 3L)
                    .containsEntry("lateness from the send to created_at: fires judged", 6);
            return;
        }
        String expected = switch (broken) {
            case DUPLICATE_AFTER_REPLAY -> "duplicate fires";
            case LOST_CANCEL, LOST_RESCHEDULE -> "verdicts the semantics do not allow";
            case PAYLOAD_BYTE, ZSTD_STORED_PAYLOAD_BYTE, WRONG_PARTITION, RESCHEDULE_OTHER_KEY -> "fired with another payload or txn than its last schedule";
            case WRONG_QUEUE -> "tenant crossings";
            case LEFT_STAGED -> "timers left staged";
            case HEALTHY_DEAD_LETTERED -> "healthy timers dead-lettered";
            case FIRED_LATE -> Lateness.LATE;
            case OCCURRENCE_LATE -> RecurringCheck.LATE;
            case FIRED_EVENT_LATE -> Lateness.AUDIT_LATE;
            case NONE -> throw new AssertionError();
        };
        assertThat(f.clean()).as(broken + " must FAIL").isFalse();
        assertThat(f.count(expected)).as(broken + ": " + examples(f)).isPositive();
    }

    private Findings run(Broken b) throws Exception {
        String[] cmd = {TestKafka.newTopic("readers-commands-a", 1), TestKafka.newTopic("readers-commands-b", 1)};
        String[] audit = {TestKafka.newTopic("readers-audit-a", 1), TestKafka.newTopic("readers-audit-b", 1)};
        commandTopic = cmd[0];
        String small = "{\"seq\":0,\"note\":\"äö ✓\",\"pad\":\"abcdefgh\"}";
        // ~10 KB, compressible: the bridge stores such a payload zstd (bridge.payload.zstd.threshold); the frame carries it plain
        String large = "{\"seq\":1,\"pad\":\"" + "lorem ipsum dolor sit amet ".repeat(400) + "\"}";
        UUID m1 = schedule(0, "k1", 1_000, "Default", small);
        UUID m2 = schedule(1, "k2", 1_000, "p1", large);
        UUID m3 = schedule(2, "k3", 40_000, "Default", "{\"seq\":2}");
        UUID m4 = schedule(3, "k4", 40_000, "Default", "{\"seq\":3}");
        if (b == Broken.LOST_CANCEL) {
            answer(cancel(4, "k3"), "too_late", null);
            fire(m3, Q, "Default", "t-2", "{\"seq\":2}");
        } else {
            answer(cancel(4, "k3"), "cancelled", m3);
        }
        ObjectNode resched = command(5, "reschedule", "k4", 500L, "Default", "{\"seq\":5}");
        if (b == Broken.LOST_RESCHEDULE) {
            answer(resched, "too_late", null);
        } else {
            answer(resched, "rescheduled", m4).put("txn", "t-5").put("partition", "Default").put("deliverAt", time(5, 500));
        }
        UUID m6 = schedule(6, "px-6", 100, "Default", "{\"seq\":6}", true);
        series(7, b == Broken.OCCURRENCE_LATE);

        // The fires, as the product writes them (or as each broken product would).
        String m1Txn = b == Broken.RESCHEDULE_OTHER_KEY ? "t-5" : "t-0";
        String m1Payload = b == Broken.PAYLOAD_BYTE ? small.replace("abcdefgh", "abcdefgi") : b == Broken.RESCHEDULE_OTHER_KEY ? "{\"seq\":5}" : small;
        if (b == Broken.HEALTHY_DEAD_LETTERED) {
            deadLetter(m1, "t-0");
        } else {
            fire(m1, b == Broken.WRONG_QUEUE ? "faults.q1" : Q, "Default", m1Txn, m1Payload);
            if (b == Broken.FIRED_LATE) {
                lateFires.add(m1);
            }
            if (b == Broken.FIRED_EVENT_LATE) {
                late.add(events.get(events.size() - 1).path("eventId").asText());
            }
        }
        if (b == Broken.DUPLICATE_AFTER_REPLAY) {
            events.add(events.get(0).deepCopy()); // the replayed record's verdict again (same eventId: an allowed repeat)
            fire(m1, Q, "Default", m1Txn, m1Payload);
        }
        fire(m2, Q, b == Broken.WRONG_PARTITION ? "Default" : "p1", "t-1",
                b == Broken.ZSTD_STORED_PAYLOAD_BYTE ? large.replaceFirst("dolor", "dolos") : large);
        if (b == Broken.LOST_RESCHEDULE || b == Broken.RESCHEDULE_OTHER_KEY) {
            fire(m4, Q, "Default", "t-3", "{\"seq\":3}");
        } else {
            fire(m4, Q, "Default", "t-5", "{\"seq\":5}");
        }
        deadLetter(m6, "poison-a-6");

        try (FreshDatabase db = TestPostgres.createDatabase("CheckerReadersIT")) {
            DataSource ds = db.newDataSource(4);
            Migrations.migrate(ds);
            // The history's commands were sent two minutes ago and it is written now: as if an outage had held everything until
            // now, with no recovery budget. A fire written now is on time; a *_LATE one, LATE_MS past now, is not.
            long written = Instant.now().toEpochMilli();
            FaultTimeline outage = FaultTimeline.of(List.of(new Outage(FaultKind.BROKER_OUTAGE, "broker", t0 - 1_000, written)), 0);
            java.util.concurrent.atomic.AtomicLong clock = new java.util.concurrent.atomic.AtomicLong(written);
            LogWatch log = new LogWatch(ds::getConnection, clock::get);
            write(ds, b);
            Map<UUID, Long> seenAt = log.pollOnce();
            Map<String, Long> readAt;
            // the harness's consumer reads at `written` (each event before its fire's created_at: no delay), FIRED_EVENT_LATE's late
            try (AuditWatch watch = AuditWatch.start(TestKafka.bootstrapServers(), List.of(audit), clock::get)) {
                publish(audit[0], watch, clock, written + LATE_MS);
                readAt = watch.stop(java.time.Duration.ofSeconds(60));
            }
            return Checker.on(ds::getConnection, TestKafka.bootstrapServers(), cmd, audit, intents.toArray(new Intent[0]))
                    .observed(readAt, seenAt, log.stagedSeen(), outage, 0).check();
        }
    }

    private UUID schedule(int seq, String key, long delayMs, String partition, String payload) throws Exception {
        return schedule(seq, key, delayMs, partition, payload, false);
    }

    private UUID schedule(int seq, String key, long delayMs, String partition, String payload, boolean poison) throws Exception {
        ObjectNode c = command(seq, "schedule", key, delayMs, partition, payload, poison);
        UUID m = UuidV7.next();
        answer(c, "scheduled", m).put("txn", c.path("txn").asText()).put("partition", partition).put("deliverAt", time(seq, delayMs));
        return m;
    }

    private ObjectNode cancel(int seq, String key) throws Exception {
        return command(seq, "cancel", key, null, null, null);
    }

    private ObjectNode command(int seq, String op, String key, Long delayMs, String partition, String payload) throws Exception {
        return command(seq, op, key, delayMs, partition, payload, false);
    }

    /** The record (its seq header is all the checker reads of it) and the generator's intent. */
    private ObjectNode command(int seq, String op, String key, Long delayMs, String partition, String payload, boolean poison) throws Exception {
        String txn = payload == null ? null : (poison ? CommandGenerator.POISON_TXN_PREFIX + "a-" : "t-") + seq;
        JsonNode p = payload == null ? null : JSON.readTree(payload);
        intents.add(new Intent(seq, poison ? CommandKind.POISON : CommandKind.VALID, 0, op, Q, key, partition, txn, delayMs, null,
                p == null ? 0 : Intent.payloadHash(p), null));
        ObjectNode c = JSON.createObjectNode().put("op", op).put("queue", Q).put("timerKey", key);
        if (txn != null) {
            c.put("txn", txn);
        }
        commands.add(new ProducerRecord<>(commandTopic, 0, t0 + seq * 1_000L, (Q + "/" + key).getBytes(StandardCharsets.UTF_8),
                c.toString().getBytes(StandardCharsets.UTF_8),
                List.of(new RecordHeader(CommandGenerator.SEQ_HEADER, Integer.toString(seq).getBytes(StandardCharsets.UTF_8)))));
        return c;
    }

    /** The verdict of the last command (offset = seq: one partition, in order), at 100 ms after its record. */
    private ObjectNode answer(ObjectNode command, String type, UUID messageId) {
        int seq = commands.size() - 1;
        ObjectNode ev = JSON.createObjectNode().put("eventId", UUID.randomUUID().toString()).put("type", type).put("tenant", Stack.TENANT_A)
                .put("at", Instant.ofEpochMilli(t0 + seq * 1_000L + 100).toString());
        ev.putObject("source").put("topic", commandTopic).put("partition", 0).put("offset", seq);
        ev.put("queue", Q).put("timerKey", command.path("timerKey").asText());
        if (messageId != null) {
            ev.put("messageId", messageId.toString());
        }
        events.add(ev);
        return ev;
    }

    private String time(int seq, long delayMs) {
        return Instant.ofEpochMilli(t0 + seq * 1_000L + delayMs).toString();
    }

    private void fire(UUID m, String queue, String partition, String txn, String payload) {
        fires.add(new Object[] {m, queue, partition, txn, payload});
        events.add(JSON.createObjectNode().put("eventId", UUID.randomUUID().toString()).put("type", "fired").put("tenant", Stack.TENANT_A)
                .put("messageId", m.toString()).put("queue", queue).put("txn", txn));
    }

    private void deadLetter(UUID m, String txn) {
        deadLetters.add(new Object[] {m, txn});
        events.add(JSON.createObjectNode().put("eventId", UUID.randomUUID().toString()).put("type", "dead_lettered").put("tenant", Stack.TENANT_A)
                .put("messageId", m.toString()).put("txn", txn));
    }

    /**
     * The log through queen.log_push_v1, the DLQ and staged rows as the sweeper and the bridge leave them; a late fire's
     * segment has its created_at moved on by {@link #LATE_MS}, as if it had been pushed that much later.
     */
    private void write(DataSource ds, Broken b) throws Exception {
        LogPusher pusher = new LogPusher(ds);
        UUID tenant = UUID.fromString(Stack.TENANT_A);
        for (Object[] fr : fires) {
            pusher.push(new Destination(tenant, (String) fr[1], (String) fr[2]),
                    SegmentCodec.pack(List.of(Frame.of((UUID) fr[0], (String) fr[3], ((String) fr[4]).getBytes(StandardCharsets.UTF_8)))));
            if (lateFires.contains((UUID) fr[0])) {
                // the segment just pushed is its partition's last
                try (Connection c = ds.getConnection()) {
                    try (PreparedStatement ps = c.prepareStatement("UPDATE queen.log_segments s SET created_at = s.created_at + ? * interval '1 millisecond'"
                            + " FROM queen.log_partitions p JOIN queen.queues q ON q.id = p.queue_id"
                            + " WHERE s.partition_id = p.id AND q.name = ? AND p.name = ?"
                            + " AND s.base_offset = (SELECT max(x.base_offset) FROM queen.log_segments x WHERE x.partition_id = p.id)")) {
                        ps.setLong(1, LATE_MS);
                        ps.setString(2, (String) fr[1]);
                        ps.setString(3, (String) fr[2]);
                        assertThat(ps.executeUpdate()).isOne();
                    }
                }
            }
        }
        try (Connection c = ds.getConnection()) {
            UUID partition;
            try (PreparedStatement ps = c.prepareStatement("SELECT p.id FROM queen.log_partitions p JOIN queen.queues q ON q.id = p.queue_id"
                    + " WHERE q.tenant_id = ? AND q.name = ? AND p.name = 'Default'")) {
                ps.setObject(1, tenant);
                ps.setString(2, Q);
                try (ResultSet rs = ps.executeQuery()) {
                    rs.next();
                    partition = (UUID) rs.getObject(1);
                }
            }
            for (Object[] d : deadLetters) {
                try (PreparedStatement ps = c.prepareStatement("INSERT INTO queen.log_dlq (partition_id, consumer_group, \"offset\", message_id,"
                        + " transaction_id, error) VALUES (?, '__timer__', 0, ?, ?, 'refused')")) {
                    ps.setObject(1, partition);
                    ps.setObject(2, d[0]);
                    ps.setString(3, (String) d[1]);
                    ps.executeUpdate();
                }
            }
            if (b == Broken.LEFT_STAGED) {
                try (PreparedStatement ps = c.prepareStatement("INSERT INTO queen.log_timers (tenant_id, queue, timer_key, deliver_at, txn,"
                        + " message_id, payload) VALUES (?, ?, 'k9', now(), 't-9', ?, '\\x7b7d')")) {
                    ps.setObject(1, tenant);
                    ps.setString(2, Q);
                    ps.setObject(3, UuidV7.next());
                    ps.executeUpdate();
                }
            }
        }
    }

    /**
     * The commands, then the audit events; the harness's consumer reads them at the clock's time, except those
     * FIRED_EVENT_LATE delivers late: published once the others were read, and read at {@code lateAt}.
     */
    private void publish(String auditTopic, AuditWatch watch, java.util.concurrent.atomic.AtomicLong clock, long lateAt) throws Exception {
        try (KafkaProducer<byte[], byte[]> p = new KafkaProducer<>(TestKafka.producerProps(), new ByteArraySerializer(), new ByteArraySerializer())) {
            for (ProducerRecord<byte[], byte[]> r : commands) {
                p.send(r).get();
            }
            for (ObjectNode ev : events) {
                if (!late.contains(ev.path("eventId").asText())) {
                    send(p, auditTopic, ev);
                }
            }
            String lastOnTime = events.get(events.size() - 1).path("eventId").asText();
            if (!late.isEmpty()) {
                long deadline = System.nanoTime() + 30_000_000_000L;
                while (!watch.hasRead(lastOnTime)) {
                    assertThat(System.nanoTime()).as("the watch reads the events on time").isLessThan(deadline);
                    Thread.sleep(20);
                }
                clock.set(lateAt);
                for (ObjectNode ev : events) {
                    if (late.contains(ev.path("eventId").asText())) {
                        send(p, auditTopic, ev);
                    }
                }
            }
        }
    }

    private static void send(KafkaProducer<byte[], byte[]> p, String topic, ObjectNode ev) throws Exception {
        p.send(new ProducerRecord<>(topic, 0, null, (Q + "/" + ev.path("timerKey").asText("x")).getBytes(StandardCharsets.UTF_8),
                ev.toString().getBytes(StandardCharsets.UTF_8))).get();
    }

    /**
     * A series on key rec-{@code seq}: every PT1S from 10 s after t0, 3 occurrences; scheduled, each occurrence fired once
     * with its own v7 id (the first the verdict's), its fired event naming the occurrence, its number and the next (the
     * last: why it ended).
     */
    private void series(int seq, boolean secondLate) throws Exception {
        String key = CommandGenerator.SERIES_KEY_PREFIX + seq;
        String txn = CommandGenerator.SERIES_TXN_PREFIX + seq;
        String payload = "{\"seq\":" + seq + "}";
        Series s = Series.of(txn, null, null, java.time.Duration.ofSeconds(1), Instant.ofEpochMilli(t0 + 10_000), null, 3);
        intents.add(new Intent(seq, CommandKind.VALID, 0, "schedule", Q, key, "Default", txn, null, null,
                Intent.payloadHash(JSON.readTree(payload)), null, s));
        commands.add(new ProducerRecord<>(commandTopic, 0, t0 + seq * 1_000L, (Q + "/" + key).getBytes(StandardCharsets.UTF_8),
                payload.getBytes(StandardCharsets.UTF_8),
                List.of(new RecordHeader(CommandGenerator.SEQ_HEADER, Integer.toString(seq).getBytes(StandardCharsets.UTF_8)))));
        UUID first = UuidV7.next();
        answer(JSON.createObjectNode().put("timerKey", key), "scheduled", first).put("txn", txn).put("partition", "Default")
                .put("deliverAt", s.occurrences().get(0).toString());
        for (int i = 0; i < 3; i++) {
            Instant o = s.occurrences().get(i);
            String otxn = WireFormat.occurrenceTxn(txn, o);
            UUID id = i == 0 ? first : UuidV7.next();
            fires.add(new Object[] {id, Q, "Default", otxn, payload});
            ObjectNode ev = JSON.createObjectNode().put("eventId", UUID.randomUUID().toString()).put("type", "fired").put("tenant", Stack.TENANT_A)
                    .put("messageId", id.toString()).put("queue", Q).put("timerKey", key).put("txn", otxn).put("occurrence", o.toString())
                    .put("seq", i + 1);
            if (i < 2) {
                ev.put("next", s.occurrences().get(i + 1).toString());
            } else {
                ev.putNull("next").put("ended", "max_occurrences"); // the last says why the series ended (docs/recurring.md "Events")
            }
            events.add(ev);
            if (secondLate && i == 1) {
                lateFires.add(id);
            }
        }
    }

    private static String examples(Findings f) {
        return f.violations().entrySet().stream().filter(e -> e.getValue() > 0)
                .map(e -> e.getKey() + "=" + e.getValue() + " " + f.examples().getOrDefault(e.getKey(), List.of()))
                .collect(Collectors.joining("\n"));
    }
}
