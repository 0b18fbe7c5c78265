package io.queen.timers.sql;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.queen.timers.testkit.PostgresDatabase;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.UUID;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.postgresql.PGConnection;
import org.postgresql.PGNotification;

/**
 * queen.timer_advance_v1, the tests' clock (R__timer_advance.sql): which rows it moves, where to, and that the
 * sweepers hear of it at commit. The fire itself is the sweeper's, tested end to end by the kit's ClockIT.
 */
class TimerAdvanceIT {

    @RegisterExtension
    static final PostgresDatabase db = PostgresDatabase.initializedWith(Migrations::migrate);

    static final UUID TENANT = UUID.fromString("00000000-0000-0000-0000-000000000001");

    @Test
    void fireDueMovesTheQueuesUnclaimedOneShotTimersToNowAndWakesTheSweepersAtCommit() throws SQLException {
        stage("q.due", "in-3-days", "interval '3 days'", null, null, false);
        stage("q.due", "overdue", "interval '-1 minute'", null, null, false);
        stage("q.due", "claimed", "interval '3 days'", UUID.randomUUID(), "interval '30 seconds'", false);
        stage("q.due", "backing-off", "interval '3 days'", null, "interval '1 hour'", false);
        stage("q.due", "series", "interval '3 days'", null, null, true);
        stage("q.other", "in-3-days", "interval '3 days'", null, null, false);
        Map<String, String> before = deliverAt("q.due");

        try (Connection listener = db.dataSource().getConnection(); Connection c = db.dataSource().getConnection()) {
            exec(listener, "LISTEN queen_timers_wake");
            c.setAutoCommit(false);
            List<String> moved = advance(c, "q.due", null);
            assertThat(notifications(listener)).as("not before the commit").isEmpty();
            c.commit();
            assertThat(notifications(listener)).extracting(PGNotification::getName).containsExactly("queen_timers_wake");

            assertThat(moved).containsExactly("backing-off|false", "in-3-days|true", "overdue|true");
        }
        Map<String, String> after = deliverAt("q.due");
        assertThat(after.get("in-3-days")).isEqualTo("due");
        assertThat(after.get("overdue")).as("already due: kept").isEqualTo(before.get("overdue"));
        assertThat(after.get("backing-off")).as("moved, its backoff kept").isEqualTo("due");
        assertThat(after.get("claimed")).as("in a sweeper's hands").isEqualTo(before.get("claimed"));
        assertThat(after.get("series")).as("a series is planned from deliver_at").isEqualTo(before.get("series"));
        assertThat(deliverAt("q.other").get("in-3-days")).isNotEqualTo("due");
    }

    @Test
    void advanceMovesEachTimerByTheIntervalAndNotBeforeNow() throws SQLException {
        stage("q.advance", "in-1-day", "interval '1 day'", null, null, false);
        stage("q.advance", "in-5-days", "interval '5 days'", null, null, false);
        Map<String, String> before = rawDeliverAt("q.advance");
        try (Connection c = db.dataSource().getConnection()) {
            assertThat(advance(c, "q.advance", "2 days")).containsExactly("in-1-day|true", "in-5-days|false");
        }
        Map<String, String> after = rawDeliverAt("q.advance");
        assertThat(after.get("in-5-days")).isEqualTo(shift(before.get("in-5-days"), "-2 days"));
        assertThat(deliverAt("q.advance").get("in-1-day")).isEqualTo("due");
        try (Connection c = db.dataSource().getConnection()) {
            assertThatThrownBy(() -> advance(c, "q.advance", "-1 day")).hasMessageContaining("must not be negative");
        }
    }

    private static void stage(String queue, String key, String in, UUID token, String claimedFor, boolean recurring) throws SQLException {
        try (Connection c = db.dataSource().getConnection(); PreparedStatement st = c.prepareStatement(
                "INSERT INTO queen.log_timers (queue, timer_key, deliver_at, txn, message_id, payload, claim_token, claimed_until, recurrence)"
                        + " VALUES (?, ?, now() + " + in + ", 't-' || ?, queen.timer_uuidv7_v1(now()), '\\x7b7d'::bytea, ?,"
                        + " now() + " + (claimedFor == null ? "NULL" : claimedFor) + ", " + (recurring ? "'{\"every\":\"PT24H\"}'::jsonb" : "NULL") + ")")) {
            st.setString(1, queue);
            st.setString(2, key);
            st.setString(3, key);
            st.setObject(4, token);
            st.executeUpdate();
        }
    }

    /** "key|due" per moved row, in key order. */
    private static List<String> advance(Connection c, String queue, String by) throws SQLException {
        try (PreparedStatement st = c.prepareStatement("SELECT timer_key, due FROM queen.timer_advance_v1(?, ?, ?::interval) ORDER BY 1")) {
            st.setObject(1, TENANT);
            st.setString(2, queue);
            st.setString(3, by);
            List<String> out = new ArrayList<>();
            try (ResultSet rs = st.executeQuery()) {
                while (rs.next()) {
                    out.add(rs.getString(1) + "|" + rs.getBoolean(2));
                }
            }
            return out;
        }
    }

    /** Key -> "due" when deliver_at <= now(), else the stored instant. */
    private static Map<String, String> deliverAt(String queue) throws SQLException {
        return map("SELECT timer_key, CASE WHEN deliver_at <= now() THEN 'due' ELSE deliver_at::text END FROM queen.log_timers WHERE queue = '"
                + queue + "'");
    }

    private static Map<String, String> rawDeliverAt(String queue) throws SQLException {
        return map("SELECT timer_key, deliver_at::text FROM queen.log_timers WHERE queue = '" + queue + "'");
    }

    private static String shift(String instant, String by) throws SQLException {
        return map("SELECT 'x', ('" + instant + "'::timestamptz + interval '" + by + "')::text").get("x");
    }

    private static Map<String, String> map(String sql) throws SQLException {
        Map<String, String> out = new TreeMap<>();
        try (Connection c = db.dataSource().getConnection(); Statement st = c.createStatement(); ResultSet rs = st.executeQuery(sql)) {
            while (rs.next()) {
                out.put(rs.getString(1), rs.getString(2));
            }
        }
        return out;
    }

    private static void exec(Connection c, String sql) throws SQLException {
        try (Statement st = c.createStatement()) {
            st.execute(sql);
        }
    }

    private static List<PGNotification> notifications(Connection c) throws SQLException {
        PGNotification[] n = c.unwrap(PGConnection.class).getNotifications(500);
        return n == null ? List.of() : List.of(n);
    }
}
