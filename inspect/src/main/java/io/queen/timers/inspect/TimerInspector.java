package io.queen.timers.inspect;

import io.queen.timers.log.read.LogReader;
import io.queen.timers.log.read.TxnHit;
import io.queen.timers.sql.SqlFile;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Timestamp;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.UUID;
import javax.sql.DataSource;

/**
 * The operators' read-only view of queen.log_timers, for the CLI and the HTTP API alike: {@link #peek} one
 * timer with its payload, {@link #list} a queue's timers by keyset without payloads, {@link #series} the recurring
 * series scheduled with a txn, {@link #find} where a txn is in the log. A recurring timer's row carries its
 * rule. Plain reads through the operator role's functions: they never block a fire.
 */
public final class TimerInspector {

    /** The server clamps a page to this many rows. */
    public static final int MAX_PAGE = 1000;

    private static final String PEEK = SqlFile.load(TimerInspector.class, "peek.sql");
    private static final String LIST = SqlFile.load(TimerInspector.class, "list.sql");
    private static final String SERIES = SqlFile.load(TimerInspector.class, "series.sql");

    private final DataSource dataSource;

    public TimerInspector(DataSource dataSource) {
        this.dataSource = dataSource;
    }

    /** The timer, or empty when it is not pending (never scheduled, cancelled, or already fired: ask the log). */
    public Optional<TimerView> peek(UUID tenantId, String queue, String timerKey) throws SQLException {
        try (Connection c = dataSource.getConnection(); PreparedStatement st = c.prepareStatement(PEEK)) {
            st.setObject(1, tenantId);
            st.setString(2, queue);
            st.setString(3, timerKey);
            try (ResultSet rs = st.executeQuery()) {
                if (!rs.next()) {
                    return Optional.empty();
                }
                return Optional.of(new TimerView(rs.getObject("tenant_id", UUID.class), rs.getString("queue"),
                        rs.getString("timer_key"), rs.getString("partition"), instant(rs, "deliver_at"), instant(rs, "visible_at"),
                        TimerState.of(rs.getString("state")), rs.getString("txn"), rs.getObject("message_id", UUID.class),
                        rs.getBytes("payload"), rs.getBoolean("payload_zstd"), rs.getBoolean("encrypted"),
                        rs.getString("producer_sub"), rs.getInt("attempts"), rs.getString("last_error"),
                        instant(rs, "claimed_until"), instant(rs, "created_at"), instant(rs, "updated_at"), instant(rs, "db_now"),
                        Recurring.of(rs.getString("recurrence"))));
            }
        }
    }

    /**
     * Up to {@code limit} timers of the queue with timer_key after {@code afterKey} (null: from the first), in
     * timer_key (byte) order. The limit is clamped to 1..{@value #MAX_PAGE}. The next page starts after the
     * last key returned.
     */
    public List<TimerSummary> list(UUID tenantId, String queue, String afterKey, int limit) throws SQLException {
        try (Connection c = dataSource.getConnection(); PreparedStatement st = c.prepareStatement(LIST)) {
            st.setObject(1, tenantId);
            st.setString(2, queue);
            st.setString(3, afterKey);
            st.setInt(4, limit);
            List<TimerSummary> out = new ArrayList<>();
            try (ResultSet rs = st.executeQuery()) {
                while (rs.next()) {
                    out.add(new TimerSummary(rs.getString("timer_key"), rs.getString("partition"), instant(rs, "deliver_at"),
                            instant(rs, "visible_at"), TimerState.of(rs.getString("state")), rs.getString("txn"),
                            rs.getObject("message_id", UUID.class), rs.getInt("payload_bytes"), rs.getBoolean("payload_zstd"),
                            rs.getBoolean("encrypted"), rs.getString("producer_sub"), rs.getInt("attempts"),
                            rs.getString("last_error"), instant(rs, "claimed_until"), instant(rs, "created_at"),
                            instant(rs, "updated_at"), Recurring.of(rs.getString("recurrence"))));
                }
            }
            return out;
        }
    }

    /**
     * The pending occurrence of each recurring series of the queue that was scheduled with {@code seriesTxn}
     * (its occurrences' txns are {@code <seriesTxn>@<instant>}), in key order; empty when none is pending
     * (never such a series, or it ended or was cancelled).
     */
    public List<PendingSeries> series(UUID tenantId, String queue, String seriesTxn) throws SQLException {
        try (Connection c = dataSource.getConnection(); PreparedStatement st = c.prepareStatement(SERIES)) {
            st.setObject(1, tenantId);
            st.setString(2, queue);
            st.setString(3, seriesTxn);
            List<PendingSeries> out = new ArrayList<>();
            try (ResultSet rs = st.executeQuery()) {
                while (rs.next()) {
                    out.add(new PendingSeries(rs.getString("timer_key"), instant(rs, "next_occurrence"), rs.getString("txn"),
                            TimerState.of(rs.getString("state")), Recurring.of(rs.getString("recurrence"))));
                }
            }
            return out;
        }
    }

    /**
     * "Was it sent?": where {@code txn} is in the queue's log (the authority, not the timer table), and the pending
     * series scheduled with it (a series' own txn is never in the log; each occurrence is sent as
     * {@code <txn>@<instant>}).
     */
    public Finding find(UUID tenantId, String queue, String txn) throws SQLException {
        return new Finding(new LogReader(dataSource).find(tenantId, queue, txn), series(tenantId, queue, txn));
    }

    /** What {@link #find} found: found when either list is not empty (a pending series is an answer too). */
    public record Finding(List<TxnHit> hits, List<PendingSeries> series) {
        public boolean found() {
            return !hits.isEmpty() || !series.isEmpty();
        }
    }

    private static Instant instant(ResultSet rs, String column) throws SQLException {
        Timestamp t = rs.getTimestamp(column);
        return t == null ? null : t.toInstant();
    }
}
