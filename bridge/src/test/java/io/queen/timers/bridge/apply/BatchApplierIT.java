package io.queen.timers.bridge.apply;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.tuple;

import com.github.luben.zstd.Zstd;
import io.queen.timers.bridge.BridgeSettings;
import io.queen.timers.bridge.wire.Command;
import io.queen.timers.client.command.Op;
import io.queen.timers.client.command.RejectReason;
import io.queen.timers.bridge.wire.Rejection;
import io.queen.timers.sql.Migrations;
import io.queen.timers.testkit.PostgresDatabase;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.postgresql.PGConnection;
import org.postgresql.PGNotification;

/** The apply step against a real PostgreSQL: verdicts, per-key order, fencing, storage. No Kafka. */
class BatchApplierIT {

    @RegisterExtension
    static final PostgresDatabase db = PostgresDatabase.initializedWith(Migrations::migrate);

    static final UUID TENANT = UUID.fromString("00000000-0000-0000-0000-000000000001");
    static final Instant LATER = Instant.now().plus(1, ChronoUnit.HOURS).truncatedTo(ChronoUnit.MILLIS);

    final AtomicLong offset = new AtomicLong();
    final String topic = "t-" + UUID.randomUUID();
    final BatchApplier applier = new BatchApplier(db.dataSource(), "g", Duration.ofSeconds(30), 4096);

    @Test
    void scheduleThenRescheduleKeepsMessageIdAndResetsAttempts() throws Exception {
        List<Decision> first = applyOk(schedule("q.a", "k1", LATER, "{\"n\":1}"));
        UUID id = messageId("q.a", "k1");
        exec("UPDATE queen.log_timers SET attempts = 3, deaths = 2, held_alone = true, last_error = 'boom',"
                + " claimed_until = now() + interval '1 minute' WHERE timer_key = 'k1'");
        List<Decision> second = applyOk(schedule("q.a", "k1", LATER.plusSeconds(5), "{\"n\":2}"));

        assertThat(first).extracting(Decision::verdict).containsExactly(Verdict.SCHEDULED);
        assertThat(second).extracting(Decision::verdict).containsExactly(Verdict.RESCHEDULED);
        assertThat(messageId("q.a", "k1")).isEqualTo(id);
        assertThat(id.version()).isEqualTo(7);
        // a reschedule is a new timer: its predecessor's attempts and deaths (V122) are not its own
        assertThat(query("SELECT attempts || '/' || deaths || '/' || held_alone || '/' || coalesce(last_error, '-') || '/'"
                + " || coalesce(claimed_until::text, '-') || '/' || convert_from(payload, 'UTF8') FROM queen.log_timers WHERE timer_key = 'k1'"))
                .isEqualTo("0/0/false/-/-/{\"n\":2}");
    }

    @Test
    void scheduleCancelScheduleInOneBatchYieldsThreeVerdictsInOrderAndEndsScheduled() throws Exception {
        List<Decision> d = applyOk(schedule("q.b", "k", LATER, "1"), cancel("q.b", "k"), schedule("q.b", "k", LATER.plusSeconds(1), "2"));
        assertThat(d).extracting(Decision::verdict).containsExactly(Verdict.SCHEDULED, Verdict.CANCELLED, Verdict.SCHEDULED);
        assertThat(query("SELECT convert_from(payload, 'UTF8') FROM queen.log_timers WHERE queue = 'q.b'")).isEqualTo("2");
        assertThat(query("SELECT string_agg(type, ',' ORDER BY id) FROM queen.timer_audit_outbox WHERE kafka_key = 'q.b/k'"))
                .isEqualTo("scheduled,cancelled,scheduled");
    }

    @Test
    void cancelOfMissingTimerIsAbsentAndCancelOfPendingIsCancelled() throws Exception {
        applyOk(schedule("q.c", "k", LATER, "null"));
        assertThat(applyOk(cancel("q.c", "k"), cancel("q.c", "k"), cancel("q.c", "never")))
                .extracting(Decision::verdict).containsExactly(Verdict.CANCELLED, Verdict.ABSENT, Verdict.ABSENT);
        assertThat(query("SELECT count(*) FROM queen.log_timers WHERE queue = 'q.c'")).isEqualTo("0");
    }

    @Test
    void timerInSomebodysHandsIsTooLateForEveryOp() throws Exception {
        applyOk(schedule("q.d", "k", LATER, "1"));
        exec("UPDATE queen.log_timers SET claim_token = gen_random_uuid(), claimed_until = now() + interval '30 seconds' WHERE queue = 'q.d'");
        assertThat(applyOk(schedule("q.d", "k", LATER, "2"), command(Op.RESCHEDULE, "q.d", "k", LATER, "3"), cancel("q.d", "k")))
                .extracting(Decision::verdict).containsExactly(Verdict.TOO_LATE, Verdict.TOO_LATE, Verdict.TOO_LATE);
        assertThat(query("SELECT convert_from(payload, 'UTF8') FROM queen.log_timers WHERE queue = 'q.d'")).isEqualTo("1");
    }

    @Test
    void expiredLeaseIsNotInSomebodysHands() throws Exception {
        applyOk(schedule("q.e", "k", LATER, "1"));
        exec("UPDATE queen.log_timers SET claim_token = gen_random_uuid(), claimed_until = now() - interval '1 second' WHERE queue = 'q.e'");
        assertThat(applyOk(schedule("q.e", "k", LATER, "2"))).extracting(Decision::verdict).containsExactly(Verdict.RESCHEDULED);
        assertThat(query("SELECT coalesce(claim_token::text, 'none') FROM queen.log_timers WHERE queue = 'q.e'")).isEqualTo("none");
    }

    @Test
    void cancelDuringBackoffSucceeds() throws Exception {
        applyOk(schedule("q.f", "k", LATER, "1"));
        exec("UPDATE queen.log_timers SET claim_token = NULL, claimed_until = now() + interval '10 minutes', attempts = 2 WHERE queue = 'q.f'");
        assertThat(applyOk(cancel("q.f", "k"))).extracting(Decision::verdict).containsExactly(Verdict.CANCELLED);
        assertThat(query("SELECT count(*) FROM queen.log_timers WHERE queue = 'q.f'")).isEqualTo("0");
    }

    @Test
    void schedulePathNeverWritesQueuesOrPartitions() throws Exception {
        applyOk(schedule("never.born", "k", LATER, "1"), schedule("never.born", "k2", LATER, "1"), cancel("never.born", "k2"));
        assertThat(query("SELECT count(*) FROM queen.queues")).isEqualTo("0");
        assertThat(query("SELECT count(*) FROM queen.log_partitions")).isEqualTo("0");
    }

    @Test
    void payloadAboveThresholdIsStoredZstdAndNeverClaimsEncryption() throws Exception {
        String big = "\"" + "x".repeat(5000) + "\"";
        applyOk(schedule("q.z", "big", LATER, big), schedule("q.z", "small", LATER, "\"x\""));
        try (Connection c = db.dataSource().getConnection();
                PreparedStatement st = c.prepareStatement("SELECT timer_key, payload, payload_zstd, encrypted FROM queen.log_timers WHERE queue = 'q.z' ORDER BY timer_key")) {
            try (ResultSet rs = st.executeQuery()) {
                rs.next();
                assertThat(rs.getBoolean(3)).isTrue();
                assertThat(rs.getBoolean(4)).isFalse();
                byte[] stored = rs.getBytes(2);
                assertThat(stored.length).isLessThan(5000);
                assertThat(new String(Zstd.decompress(stored, 5002), StandardCharsets.UTF_8)).isEqualTo(big);
                rs.next();
                assertThat(rs.getBoolean(3)).isFalse();
                assertThat(new String(rs.getBytes(2), StandardCharsets.UTF_8)).isEqualTo("\"x\"");
            }
        }
    }

    @Test
    void rejectedRecordIsAuditedWithItsReasonAndSource() throws Exception {
        Incoming bad = new Incoming(new Source(topic, 0, offset.getAndIncrement()), TENANT, null,
                new Rejection(RejectReason.BAD_QUEUE, "queue 'a b' is not ...", "a b/k"));
        assertThat(applyOk(bad)).extracting(Decision::verdict).containsExactly(Verdict.REJECTED);
        assertThat(query("SELECT event->>'reason' || ' ' || (event->'source'->>'offset') FROM queen.timer_audit_outbox WHERE kafka_key = 'a b/k'"))
                .isEqualTo("bad_queue " + bad.source().offset());
    }

    @Test
    void staleExpectedOffsetIsFencedAndWritesNothing() throws Exception {
        applyOk(schedule("q.g", "k", LATER, "1")); // stores next offset for (topic, 0)
        long before = Long.parseLong(query("SELECT count(*) FROM queen.timer_audit_outbox"));
        Incoming zombie = schedule("q.g", "zombie", LATER, "1");
        Outcome out = applier.apply(List.of(zombie), List.of(new OffsetAdvance(topic, 0, 0L, zombie.source().offset() + 1)));
        assertThat(out).isInstanceOf(Outcome.Fenced.class);
        Outcome again = applier.apply(List.of(zombie), List.of(new OffsetAdvance(topic, 0, null, zombie.source().offset() + 1)));
        assertThat(again).isInstanceOf(Outcome.Fenced.class);
        assertThat(query("SELECT count(*) FROM queen.log_timers WHERE timer_key = 'zombie'")).isEqualTo("0");
        assertThat(Long.parseLong(query("SELECT count(*) FROM queen.timer_audit_outbox"))).isEqualTo(before);
    }

    @Test
    void dueTimerWakesTheSweeperAtCommit() throws Exception {
        try (Connection listener = db.dataSource().getConnection()) {
            exec(listener, "LISTEN queen_timers_wake");
            applyOk(schedule("q.w", "later", Instant.now().plus(1, ChronoUnit.DAYS), "1"));
            assertThat(notifications(listener)).isEmpty();
            applyOk(schedule("q.w", "now", Instant.now(), "1"));
            assertThat(notifications(listener)).extracting(PGNotification::getName).containsExactly("queen_timers_wake");
        }
    }

    /**
     * Issue 25: far from the cap a tenant's recent count stands for a new one (PendingEstimates), and a batch that could
     * bring it near the cap is counted. The clock stands still, so the count never ages here; the timers another bridge
     * staged meanwhile (inserted straight into the table) are what tells a reused count from a fresh one.
     */
    @Test
    void farFromTheCapARecentCountStandsAndABatchThatCouldReachItIsCounted() throws Exception {
        UUID tenant = UUID.randomUUID();
        BatchApplier capped = new BatchApplier(db.dataSource(), "g", new BatchApplier.Limits(Duration.ofSeconds(30), 4096, 100,
                BridgeSettings.DEFAULT_TENANT_MAX_RECURRING), io.queen.timers.bridge.crypto.QueueEncryption.none(),
                io.queen.timers.core.telemetry.Telemetry.off(), () -> 0L);
        assertThat(applyTo(capped, schedules(tenant, "a", 10))).extracting(Decision::verdict).containsOnly(Verdict.SCHEDULED);
        exec("INSERT INTO queen.log_timers (tenant_id, queue, timer_key, deliver_at, txn, message_id, payload)"
                + " SELECT '" + tenant + "', 'q.other', 'o' || g, now() + interval '1 hour', 'txn-o' || g, queen.timer_uuidv7_v1(now()), '\\x31'"
                + " FROM generate_series(1, 200) g");

        // 10 admitted + 1: far below 100 - 10 by this bridge's estimate, so not counted (a count says 210)
        assertThat(applyTo(capped, schedules(tenant, "b", 1))).extracting(Decision::verdict).containsOnly(Verdict.SCHEDULED);
        // 11 + 79 reaches 90: counted, and the tenant holds 211 of its 100
        assertThat(applyTo(capped, schedules(tenant, "c", 79))).extracting(Decision::reason).containsOnly(RejectReason.TENANT_QUOTA);
    }

    /**
     * Issue 37 point 2: a tenant holds at most tenant.max.recurring series. At the cap a new series is rejected
     * recurring_quota, in the same batch as the ones that reached it; a reschedule of an existing series, a new one-shot
     * timer and a cancel pass; a series made one-shot or cancelled frees its place in the same batch. Another tenant is
     * not touched.
     */
    @Test
    void aTenantHoldsAtMostTenantMaxRecurringSeries() throws Exception {
        UUID tenant = UUID.randomUUID();
        UUID other = UUID.randomUUID();
        BatchApplier capped = new BatchApplier(db.dataSource(), "g", new BatchApplier.Limits(Duration.ofSeconds(30), 4096, 1_000, 3),
                io.queen.timers.bridge.crypto.QueueEncryption.none(), io.queen.timers.core.telemetry.Telemetry.off());
        assertThat(applyTo(capped, List.of(series(tenant, "s1"), series(tenant, "s2"), series(tenant, "s3"), series(tenant, "s4"))))
                .extracting(Decision::verdict, Decision::reason).containsExactly(tuple(Verdict.SCHEDULED, null),
                        tuple(Verdict.SCHEDULED, null), tuple(Verdict.SCHEDULED, null), tuple(Verdict.REJECTED, RejectReason.RECURRING_QUOTA));
        assertThat(applyTo(capped, List.of(series(tenant, "s1"), series(tenant, "s5"), series(other, "s1"))))
                .extracting(Decision::verdict, Decision::reason).containsExactly(tuple(Verdict.RESCHEDULED, null),
                        tuple(Verdict.REJECTED, RejectReason.RECURRING_QUOTA), tuple(Verdict.SCHEDULED, null));
        assertThat(applyTo(capped, schedules(tenant, "one-shot", 2))).extracting(Decision::verdict).containsOnly(Verdict.SCHEDULED);
        // s1 made one-shot and s2 cancelled: two places free, in this batch
        Incoming oneShot = new Incoming(new Source(topic, 0, offset.getAndIncrement()), tenant, null, new Command(Op.RESCHEDULE,
                "q.series", "s1", Command.DEFAULT_PARTITION, Command.Schedule.once(LATER, "t", "1".getBytes(StandardCharsets.UTF_8))));
        Incoming cancel = new Incoming(new Source(topic, 0, offset.getAndIncrement()), tenant, null, new Command(Op.CANCEL,
                "q.series", "s2", Command.DEFAULT_PARTITION, null));
        assertThat(applyTo(capped, List.of(oneShot, cancel, series(tenant, "s6"), series(tenant, "s7"), series(tenant, "s8"))))
                .extracting(Decision::verdict, Decision::reason).containsExactly(tuple(Verdict.RESCHEDULED, null),
                        tuple(Verdict.CANCELLED, null), tuple(Verdict.SCHEDULED, null), tuple(Verdict.SCHEDULED, null),
                        tuple(Verdict.REJECTED, RejectReason.RECURRING_QUOTA));
        assertThat(query("SELECT count(*) FROM queen.log_timers WHERE tenant_id = '" + tenant + "' AND recurrence IS NOT NULL"))
                .isEqualTo("3");
    }

    private Incoming series(UUID tenant, String key) {
        io.queen.timers.core.recur.Recurrence rule = io.queen.timers.core.recur.Recurrence.of(
                new io.queen.timers.core.recur.Recurrence.Spec(null, null, "PT1H", null, null, null, null), "txn-" + key, Instant.now());
        Instant first = rule.first().orElseThrow();
        return new Incoming(new Source(topic, 0, offset.getAndIncrement()), tenant, null, new Command(Op.SCHEDULE, "q.series", key,
                Command.DEFAULT_PARTITION,
                new Command.Schedule(first, "txn-" + key + "@" + first, "1".getBytes(StandardCharsets.UTF_8), rule)));
    }

    // ---- helpers ----------------------------------------------------------------------------------

    private List<Decision> applyTo(BatchApplier a, List<Incoming> records) throws SQLException {
        Long expected = stored();
        long last = records.get(records.size() - 1).source().offset();
        Outcome out = a.apply(records, List.of(new OffsetAdvance(topic, 0, expected, last + 1)));
        assertThat(out).isInstanceOf(Outcome.Applied.class);
        return ((Outcome.Applied) out).decisions();
    }

    private List<Incoming> schedules(UUID tenant, String prefix, int n) {
        List<Incoming> out = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            out.add(new Incoming(new Source(topic, 0, offset.getAndIncrement()), tenant, null, new Command(Op.SCHEDULE, "q.estimates", prefix + i,
                    Command.DEFAULT_PARTITION, Command.Schedule.once(LATER, "txn-" + prefix + i, "1".getBytes(StandardCharsets.UTF_8)))));
        }
        return out;
    }

    private List<Decision> applyOk(Incoming... records) throws SQLException {
        Long expected = stored();
        long last = records[records.length - 1].source().offset();
        Outcome out = applier.apply(List.of(records), List.of(new OffsetAdvance(topic, 0, expected, last + 1)));
        assertThat(out).isInstanceOf(Outcome.Applied.class);
        return ((Outcome.Applied) out).decisions();
    }

    private Long stored() throws SQLException {
        String v = query("SELECT max(next_offset) FROM queen.bridge_offsets WHERE group_id = 'g' AND topic = '" + topic + "'");
        return v == null ? null : Long.parseLong(v);
    }

    private Incoming schedule(String queue, String key, Instant at, String payload) {
        return command(Op.SCHEDULE, queue, key, at, payload);
    }

    private Incoming command(Op op, String queue, String key, Instant at, String payload) {
        return new Incoming(new Source(topic, 0, offset.getAndIncrement()), TENANT, null,
                new Command(op, queue, key, Command.DEFAULT_PARTITION, Command.Schedule.once(at, "txn-" + key, payload.getBytes(StandardCharsets.UTF_8))));
    }

    private Incoming cancel(String queue, String key) {
        return new Incoming(new Source(topic, 0, offset.getAndIncrement()), TENANT, null,
                new Command(Op.CANCEL, queue, key, Command.DEFAULT_PARTITION, null));
    }

    private UUID messageId(String queue, String key) throws SQLException {
        return UUID.fromString(query("SELECT message_id FROM queen.log_timers WHERE queue = '" + queue + "' AND timer_key = '" + key + "'"));
    }

    private static List<PGNotification> notifications(Connection c) throws SQLException {
        PGNotification[] n = c.unwrap(PGConnection.class).getNotifications(500);
        return n == null ? List.of() : List.of(n);
    }

    private static String query(String sql) throws SQLException {
        try (Connection c = db.dataSource().getConnection(); Statement st = c.createStatement(); ResultSet rs = st.executeQuery(sql)) {
            return rs.next() ? rs.getString(1) : null;
        }
    }

    private static void exec(String sql) throws SQLException {
        try (Connection c = db.dataSource().getConnection()) {
            exec(c, sql);
        }
    }

    private static void exec(Connection c, String sql) throws SQLException {
        try (Statement st = c.createStatement()) {
            st.execute(sql);
        }
    }
}
