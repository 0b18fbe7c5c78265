package io.queen.timers.sql;

import static org.assertj.core.api.Assertions.assertThat;

import io.queen.timers.testkit.PostgresDatabase;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.OffsetDateTime;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** visible_at and shard behave as docs/decisions.md#visible_at-is-stored-and-the-claim-is-never-hot says, in PostgreSQL. */
class GeneratedColumnsIT {

    @RegisterExtension
    static final PostgresDatabase db = PostgresDatabase.initializedWith(Migrations::migrate);

    private static final OffsetDateTime DELIVER = OffsetDateTime.parse("2030-01-01T12:00:00Z");

    @Test
    void visibleAtIsDeliverAtWithoutALease() throws SQLException {
        insert("no-lease", null);
        assertThat(visibleAt("no-lease")).isEqualTo(DELIVER);
    }

    @Test
    void visibleAtIsDeliverAtWhenTheLeaseEndsEarlier() throws SQLException {
        insert("short-lease", DELIVER.minusMinutes(5));
        assertThat(visibleAt("short-lease")).isEqualTo(DELIVER);
    }

    @Test
    void visibleAtIsClaimedUntilWhenTheLeaseReachesFurther() throws SQLException {
        insert("long-lease", DELIVER.plusMinutes(5));
        assertThat(visibleAt("long-lease")).isEqualTo(DELIVER.plusMinutes(5));
    }

    @Test
    void visibleAtFollowsEveryUpdateOfTheLease() throws SQLException {
        insert("moving", null);
        update("UPDATE queen.log_timers SET claimed_until = ?, claim_token = gen_random_uuid() WHERE timer_key = 'moving'",
                DELIVER.plusHours(1));
        assertThat(visibleAt("moving")).isEqualTo(DELIVER.plusHours(1));
        update("UPDATE queen.log_timers SET claimed_until = ?, claim_token = NULL WHERE timer_key = 'moving'", DELIVER.minusHours(1));
        assertThat(visibleAt("moving")).isEqualTo(DELIVER);
    }

    @Test
    void shardIsWithin0To63AndNeverChangesOnUpdate() throws SQLException {
        try (Connection c = db.dataSource().getConnection(); Statement st = c.createStatement()) {
            st.execute("""
                    INSERT INTO queen.log_timers (queue, timer_key, deliver_at, txn, message_id, payload)
                    SELECT 'q.shards', 'k-' || g, now(), 't-' || g, queen.timer_uuidv7_v1(now()), '\\x00'::bytea
                      FROM generate_series(1, 2000) g""");
            try (ResultSet rs = st.executeQuery(
                    "SELECT min(shard), max(shard), count(DISTINCT shard) FROM queen.log_timers WHERE queue = 'q.shards'")) {
                rs.next();
                assertThat(rs.getInt(1)).isGreaterThanOrEqualTo(0);
                assertThat(rs.getInt(2)).isLessThanOrEqualTo(63);
                assertThat(rs.getInt(3)).isEqualTo(64); // 2,000 keys reach every shard
            }
            st.execute("CREATE TEMP TABLE before AS SELECT timer_key, shard FROM queen.log_timers WHERE queue = 'q.shards'");
            st.execute("""
                    UPDATE queen.log_timers SET deliver_at = deliver_at + interval '1 day', attempts = attempts + 1,
                           claimed_until = now() + interval '30 seconds', claim_token = gen_random_uuid(), payload = '\\x01'
                     WHERE queue = 'q.shards'""");
            try (ResultSet rs = st.executeQuery("""
                    SELECT count(*) FROM queen.log_timers t JOIN before b USING (timer_key)
                     WHERE t.queue = 'q.shards' AND t.shard <> b.shard""")) {
                rs.next();
                assertThat(rs.getInt(1)).isZero();
            }
            try (ResultSet rs = st.executeQuery(
                    "SELECT count(*) FROM queen.log_timers WHERE queue = 'q.shards' AND shard <> (hashtextextended(timer_key, 0) & 63)")) {
                rs.next();
                assertThat(rs.getInt(1)).isZero();
            }
        }
    }

    private static void insert(String key, OffsetDateTime claimedUntil) throws SQLException {
        try (Connection c = db.dataSource().getConnection();
                PreparedStatement st = c.prepareStatement("""
                        INSERT INTO queen.log_timers (queue, timer_key, deliver_at, txn, message_id, payload, claimed_until)
                        VALUES ('q.visible', ?, ?, 'txn', queen.timer_uuidv7_v1(now()), '\\x00'::bytea, ?)""")) {
            st.setString(1, key);
            st.setObject(2, DELIVER);
            st.setObject(3, claimedUntil);
            st.executeUpdate();
        }
    }

    private static void update(String sql, OffsetDateTime value) throws SQLException {
        try (Connection c = db.dataSource().getConnection(); PreparedStatement st = c.prepareStatement(sql)) {
            st.setObject(1, value);
            assertThat(st.executeUpdate()).isEqualTo(1);
        }
    }

    private static OffsetDateTime visibleAt(String key) throws SQLException {
        try (Connection c = db.dataSource().getConnection();
                PreparedStatement st = c.prepareStatement("SELECT visible_at FROM queen.log_timers WHERE timer_key = ?")) {
            st.setString(1, key);
            try (ResultSet rs = st.executeQuery()) {
                rs.next();
                return rs.getObject(1, OffsetDateTime.class).withOffsetSameInstant(DELIVER.getOffset());
            }
        }
    }
}
