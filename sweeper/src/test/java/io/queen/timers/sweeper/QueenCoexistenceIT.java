package io.queen.timers.sweeper;

import static io.queen.timers.sweeper.Staging.DEFAULT_TENANT;
import static org.assertj.core.api.Assertions.assertThat;

import io.queen.timers.log.codec.Frame;
import io.queen.timers.log.codec.PackedSegment;
import io.queen.timers.log.codec.SegmentCodec;
import io.queen.timers.log.codec.UuidV7;
import io.queen.timers.sql.Migrations;
import io.queen.timers.testkit.FreshDatabase;
import io.queen.timers.testkit.TestPostgres;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.stream.LongStream;
import javax.sql.DataSource;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledIfEnvironmentVariable;

/**
 * One database shared with a real Queen broker's SQL, in either order and through restarts of both
 * (docs/schema-and-roles.md#sharing-the-database-with-a-queen-broker). Needs a Queen checkout: QUEEN_SQL_DIR = its server/sql directory at
 * the version docs/schema-and-roles.md pins; without it the test is skipped (CI has no Queen checkout, and Queen's
 * code is never copied into this repository).
 *
 * <p>Each case: both schemas applied in one order, timers fired by the sweeper, both schemas applied
 * again (a restart re-applies Queen's files; ours is a Flyway migrate), Queen's own push writes into a
 * partition the sweeper made between two fires (one offset sequence), then Queen's own log_pop_v1 /
 * log_ack_v1 consume every fired message (lease and auto-ack groups) and Queen's own retention and
 * partition cleanup purge what was fired, leaving no log_txns row behind.
 */
@EnabledIfEnvironmentVariable(named = "QUEEN_SQL_DIR", matches = ".+")
class QueenCoexistenceIT {

    private final QueenBoot queen = new QueenBoot(Path.of(System.getenv().getOrDefault("QUEEN_SQL_DIR", ".")));

    @Test
    void queenFirstThenTheProjectThroughRestarts() throws Exception {
        try (FreshDatabase fresh = TestPostgres.createDatabase("queen_first")) {
            DataSource ds = fresh.newDataSource(6);
            queen.boot(ds);
            Migrations.migrate(ds);
            List<LogContents.Message> fired = fire(ds, "first", 12);
            queen.boot(ds);                 // Queen restarts
            Migrations.migrate(ds);         // so does a sweeper
            assertThat(deadFunctionSource(ds)).contains("queen_streams.state").doesNotContain("log_timers");
            consumeWithQueensPop(ds, "first", fired);
            purgeWithQueensRetention(ds);
        }
    }

    @Test
    void theProjectFirstThenQueenThroughRestarts() throws Exception {
        try (FreshDatabase fresh = TestPostgres.createDatabase("project_first")) {
            DataSource ds = fresh.newDataSource(6);
            Migrations.migrate(ds);
            List<LogContents.Message> before = fire(ds, "early", 7);
            assertThat(deadFunctionSource(ds)).doesNotContain("log_timers");
            queen.boot(ds);                 // Queen's first boot on our schema
            assertThat(deadFunctionSource(ds)).contains("queen_streams.state");
            Migrations.migrate(ds);         // a sweeper restarts
            queen.boot(ds);                 // Queen restarts
            fire(ds, "late", 9);
            // Queen's own push into a partition the sweeper provisioned and wrote, then the sweeper again:
            // one offset sequence, created_at monotone, whoever wrote.
            queensPush(ds, "late", "Default", List.of("queen-0", "queen-1", "queen-2"));
            new Staging(ds).schedule(DEFAULT_TENANT, "late", "again", "Default", -1, "late-again", Staging.json("again"), false);
            assertThat(FireDue.now(ds)).isEqualTo(1);
            List<LogContents.Message> late = LogContents.read(ds).stream().filter(m -> m.queue().equals("late")).toList();
            List<LogContents.Message> lateDefault = late.stream().filter(m -> m.partition().equals("Default")).toList();
            assertThat(lateDefault).extracting(LogContents.Message::offset)
                    .containsExactlyElementsOf(LongStream.range(0, lateDefault.size()).boxed().toList());
            assertThat(lateDefault).extracting(LogContents.Message::txn).contains("queen-0", "queen-2", "late-again");
            for (int i = 1; i < lateDefault.size(); i++) {
                assertThat(lateDefault.get(i).createdAt()).isAfterOrEqualTo(lateDefault.get(i - 1).createdAt());
            }
            consumeWithQueensPop(ds, "early", before);
            consumeWithQueensPop(ds, "late", late);
            purgeWithQueensRetention(ds);
        }
    }

    /** Fires {@code count} timers into queue {@code queue} (one partition "Default", one "p2") and returns them as logged. */
    private static List<LogContents.Message> fire(DataSource ds, String queue, int count) throws SQLException {
        Staging staging = new Staging(ds);
        for (int i = 0; i < count; i++) {
            staging.schedule(DEFAULT_TENANT, queue, "k" + i, i % 3 == 0 ? "p2" : "Default", -1 + i * 0.01, queue + "-txn-" + i,
                    Staging.json(queue + i), false);
        }
        assertThat(FireDue.now(ds)).isEqualTo(count);
        assertThat(staging.count("SELECT count(*) FROM queen.log_timers WHERE queue = '" + queue + "'")).isZero();
        List<LogContents.Message> fired = LogContents.read(ds).stream().filter(m -> m.queue().equals(queue)).toList();
        assertThat(fired).hasSize(count);
        // Queen's bookkeeping on every partition the fire wrote.
        assertThat(staging.count("SELECT count(*) FROM queen.log_partitions p JOIN queen.queues q ON q.id = p.queue_id"
                + " WHERE q.name = '" + queue + "' AND p.oldest_live_at IS NOT NULL AND p.oldest_txn_at IS NOT NULL")).isEqualTo(2);
        return fired;
    }

    /** One segment pushed by Queen's own log_push_one_v1 (frames packed by our codec, which is Queen's format). */
    private static void queensPush(DataSource ds, String queue, String partition, List<String> txns) throws SQLException {
        PackedSegment packed = SegmentCodec.pack(txns.stream().map(t -> Frame.of(UuidV7.next(), t, Staging.json(t))).toList());
        try (Connection c = ds.getConnection(); PreparedStatement st = c.prepareStatement(
                "SELECT queen.log_push_one_v1(?, ?, ?, ?, -1, ?, NULL, NULL, ?::uuid)->>'status'")) {
            st.setString(1, queue);
            st.setString(2, partition);
            st.setInt(3, packed.count());
            st.setBytes(4, packed.hashes());
            st.setBytes(5, packed.blob());
            st.setObject(6, DEFAULT_TENANT);
            try (ResultSet rs = st.executeQuery()) {
                rs.next();
                assertThat(rs.getString(1)).isEqualTo("queued");
            }
        }
    }

    /** Queen's pop in a lease group (acked with Queen's ack, budget 2) and in an auto-ack group (budget 5). */
    private static void consumeWithQueensPop(DataSource ds, String queue, List<LogContents.Message> fired) throws SQLException {
        for (String partition : List.of("Default", "p2")) {
            List<Frame> expected = fired.stream().filter(m -> m.partition().equals(partition)).map(LogContents.Message::frame).toList();
            assertThat(popAll(ds, queue, partition, "__QUEUE_MODE__", 2, false)).as(queue + "/" + partition + " leased")
                    .containsExactlyElementsOf(expected);
            assertThat(popAll(ds, queue, partition, "audit", 5, true)).as(queue + "/" + partition + " auto-ack")
                    .containsExactlyElementsOf(expected);
        }
    }

    private static List<Frame> popAll(DataSource ds, String queue, String partition, String group, int budget, boolean autoAck)
            throws SQLException {
        List<Frame> out = new ArrayList<>();
        String worker = "worker-" + UUID.randomUUID();
        for (int round = 0; round < 100; round++) {
            long last = -1;
            int got = 0;
            try (Connection c = ds.getConnection(); PreparedStatement st = c.prepareStatement(
                    "SELECT r_base, r_start_idx, r_take, r_msg_count, r_blob FROM queen.log_pop_v1(?, ?, ?, ?, 30, ?, ?,"
                            + " 'all', '', FALSE, ?::uuid, FALSE)")) {
                st.setString(1, queue);
                st.setString(2, partition);
                st.setString(3, group);
                st.setInt(4, budget);
                st.setString(5, worker);
                st.setBoolean(6, autoAck);
                st.setObject(7, DEFAULT_TENANT);
                try (ResultSet rs = st.executeQuery()) {
                    while (rs.next()) {
                        List<Frame> frames = SegmentCodec.unpack(rs.getBytes(5));
                        assertThat(frames).hasSize(rs.getInt(4));
                        int start = rs.getInt(2);
                        int take = rs.getInt(3);
                        out.addAll(frames.subList(start, start + take));
                        last = rs.getLong(1) + start + take - 1;
                        got += take;
                    }
                }
            }
            if (got == 0) {
                return out;
            }
            if (!autoAck) {
                try (Connection c = ds.getConnection(); PreparedStatement st = c.prepareStatement(
                        "SELECT (queen.log_ack_v1(?, ?, ?, ?, ?, TRUE, ?, ?::uuid))->>'ok'")) {
                    st.setString(1, queue);
                    st.setString(2, partition);
                    st.setString(3, group);
                    st.setString(4, worker);
                    st.setLong(5, last);
                    st.setInt(6, got);
                    st.setObject(7, DEFAULT_TENANT);
                    try (ResultSet rs = st.executeQuery()) {
                        rs.next();
                        assertThat(rs.getString(1)).as("Queen's ack up to " + last).isEqualTo("true");
                    }
                }
            }
        }
        throw new AssertionError("Queen's pop never ran dry on " + queue + "/" + partition);
    }

    /**
     * Queen's retention, driven the way its cycle finds work (partitions whose oldest_live_at / oldest_txn_at
     * is older than the cutoff), then its partition cleanup: every fired segment, log_txns row and partition
     * goes, and no log_txns row is left without its partition.
     */
    private static void purgeWithQueensRetention(DataSource ds) throws SQLException {
        Staging staging = new Staging(ds);
        staging.execute("""
                DO $$
                DECLARE p RECORD;
                BEGIN
                    FOR p IN SELECT id FROM queen.log_partitions WHERE oldest_live_at < clock_timestamp() ORDER BY id LOOP
                        PERFORM queen.log_retention_step_v1(p.id, clock_timestamp(), NULL, 1000);
                    END LOOP;
                    FOR p IN SELECT id FROM queen.log_partitions WHERE oldest_txn_at < clock_timestamp() ORDER BY id LOOP
                        PERFORM queen.log_txns_purge_step_v1(p.id, clock_timestamp(), 1000);
                    END LOOP;
                END $$""");
        assertThat(staging.count("SELECT count(*) FROM queen.log_segments")).isZero();
        assertThat(staging.count("SELECT count(*) FROM queen.log_txns")).isZero();
        staging.execute("SELECT queen.log_partition_cleanup_step_v1(clock_timestamp() + interval '1 minute', 1000)");
        assertThat(staging.count("SELECT count(*) FROM queen.log_partitions")).isZero();
        assertThat(staging.count("SELECT count(*) FROM queen.log_txns t"
                + " WHERE NOT EXISTS (SELECT 1 FROM queen.log_partitions p WHERE p.id = t.partition_id)")).isZero();
    }

    private static String deadFunctionSource(DataSource ds) throws SQLException {
        try (Connection c = ds.getConnection(); PreparedStatement st = c.prepareStatement(
                "SELECT prosrc FROM pg_proc WHERE oid = 'queen.log_partition_dead_v1(uuid, timestamptz)'::regprocedure");
                ResultSet rs = st.executeQuery()) {
            rs.next();
            return rs.getString(1);
        }
    }
}
