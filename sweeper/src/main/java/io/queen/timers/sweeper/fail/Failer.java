package io.queen.timers.sweeper.fail;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.databind.JsonNode;
import io.queen.timers.core.db.ErrorClass;
import io.queen.timers.sql.JsonRows;
import io.queen.timers.sql.SqlFile;
import io.queen.timers.sweeper.claim.ClaimedTimer;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import javax.sql.DataSource;

/**
 * What happens to claimed timers that were not delivered: {@link #fail} (backoff, attempts, a
 * {@code retrying} event), {@link #release} (back to the queue untouched) and {@link #deadLetter}
 * (to queen.log_dlq), each a v2 function taking the timers as named rows (db/current/R__timer_fail.sql,
 * R__timer_dead_letter.sql). Each call
 * is one statement in its own transaction and touches only rows whose
 * claim token this sweeper presents (the dead-letter: only while that claim's lease runs).
 */
public final class Failer {

    private static final String FAIL = SqlFile.load(Failer.class, "fail.sql");
    private static final String RELEASE = SqlFile.load(Failer.class, "release.sql");
    private static final String HOLD_ALONE = SqlFile.load(Failer.class, "hold_alone.sql");
    private static final String DEAD_LETTER = SqlFile.load(Failer.class, "dead_letter.sql");
    private static final String SKIP = SqlFile.load(Failer.class, "skip.sql");

    /** One timer and the error its fire (or its packing) met. */
    public record Failure(ClaimedTimer timer, String error) {}

    private final DataSource dataSource;
    private final Duration transientBackoff;
    private final Duration backoffBase;
    private final Duration backoffMax;
    private final int maxAttempts;
    /** recurring.max.consecutive.dead.letters: sent with each dead letter's plan, decided by the dead letter's transaction. */
    private int maxConsecutiveDeadLetters = 3;

    public Failer(DataSource dataSource, Duration transientBackoff, Duration backoffBase, Duration backoffMax, int maxAttempts) {
        this.dataSource = dataSource;
        this.transientBackoff = transientBackoff;
        this.backoffBase = backoffBase;
        this.backoffMax = backoffMax;
        this.maxAttempts = maxAttempts;
    }

    /** Sets recurring.max.consecutive.dead.letters (default 3); before the first dead letter. */
    public Failer withMaxConsecutiveDeadLetters(int max) {
        this.maxConsecutiveDeadLetters = max;
        return this;
    }

    public Duration transientBackoff() {
        return transientBackoff;
    }

    public int maxAttempts() {
        return maxAttempts;
    }

    /**
     * Records failed fires. Transient: no attempt spent, {@code sweeper.transient.backoff}. Permanent: one
     * attempt spent, min(base * 2^attempts, max). Rows whose token no longer matches are left alone. One call
     * per distinct error (a fire fails as a whole, so that is usually one).
     */
    public List<FailOutcome> fail(List<Failure> failures, ErrorClass errorClass) throws SQLException {
        Map<String, List<ClaimedTimer>> byError = new LinkedHashMap<>();
        for (Failure f : failures) {
            byError.computeIfAbsent(f.error(), e -> new ArrayList<>()).add(f.timer());
        }
        List<FailOutcome> out = new ArrayList<>();
        for (Map.Entry<String, List<ClaimedTimer>> e : byError.entrySet()) {
            out.addAll(fail(e.getValue(), e.getKey(), errorClass));
        }
        return out;
    }

    private List<FailOutcome> fail(List<ClaimedTimer> timers, String error, ErrorClass errorClass) throws SQLException {
        try (Connection c = dataSource.getConnection(); PreparedStatement st = c.prepareStatement(FAIL)) {
            st.setString(1, heldRows(timers));
            st.setString(2, error);
            st.setBoolean(3, errorClass == ErrorClass.TRANSIENT);
            st.setDouble(4, seconds(transientBackoff));
            st.setDouble(5, seconds(backoffBase));
            st.setDouble(6, seconds(backoffMax));
            st.setInt(7, maxAttempts);
            List<FailOutcome> out = new ArrayList<>();
            try (ResultSet rs = st.executeQuery()) {
                while (rs.next()) {
                    out.add(new FailOutcome(rs.getObject("tenant_id", UUID.class), rs.getString("queue"), rs.getString("timer_key"),
                            rs.getInt("attempts"), rs.getTimestamp("retry_at").toInstant(), rs.getBoolean("exhausted")));
                }
            }
            return out;
        }
    }

    /** Hands claimed timers back untouched (claimable at once). Returns how many still carried our token. */
    public int release(List<ClaimedTimer> timers) throws SQLException {
        return onHeld(RELEASE, timers);
    }

    /** Marks claimed timers as fired alone (timer_hold_alone_v1). Returns how many still carried our token. */
    public int holdAlone(List<ClaimedTimer> timers) throws SQLException {
        return onHeld(HOLD_ALONE, timers);
    }

    /** Runs a statement over the timers' held rows (tenant, queue, key, token) that returns how many it touched. */
    private int onHeld(String sql, List<ClaimedTimer> timers) throws SQLException {
        if (timers.isEmpty()) {
            return 0;
        }
        try (Connection c = dataSource.getConnection(); PreparedStatement st = c.prepareStatement(sql)) {
            st.setString(1, heldRows(timers));
            try (ResultSet rs = st.executeQuery()) {
                rs.next();
                return rs.getInt("touched");
            }
        }
    }

    /**
     * Moves the named timers to queen.log_dlq if they still carry our claim token, its lease running, with attempts
     * >= max (a fail that exhausts a timer leaves it claimed: R__timer_fail.sql). The database keeps the row's own
     * payload, in its stored form: nothing the sweeper passes decides what is kept.
     */
    public List<DeadLettered> deadLetter(List<ClaimedTimer> timers) throws SQLException {
        if (timers.isEmpty()) {
            return List.of();
        }
        try (Connection c = dataSource.getConnection(); PreparedStatement st = c.prepareStatement(DEAD_LETTER)) {
            List<DeadLetterRow> rows = new ArrayList<>(timers.size());
            for (int i = 0; i < timers.size(); i++) {
                ClaimedTimer t = timers.get(i);
                // a recurring timer's successor is staged with its dead letter, unless this one makes the run of dead
                // letters in a row reach the bound: timer_series_next_v1 counts and ends the series, in this transaction
                rows.add(new DeadLetterRow(t.key().tenantId(), t.key().queue(), t.key().timerKey(), t.lease().claimToken(),
                        t.recurring() ? t.plan(true).toJson().put("deadLetter", true)
                                .put("maxDeadLettersInRow", maxConsecutiveDeadLetters) : null));
            }
            st.setString(1, JsonRows.write(rows));
            st.setInt(2, maxAttempts);
            List<DeadLettered> out = new ArrayList<>();
            try (ResultSet rs = st.executeQuery()) {
                while (rs.next()) {
                    out.add(new DeadLettered(rs.getObject("tenant_id", UUID.class), rs.getString("queue"), rs.getString("timer_key"),
                            rs.getObject("dlq_id", UUID.class), rs.getObject("partition_id", UUID.class)));
                }
            }
            return out;
        }
    }

    /**
     * Skips the missed occurrences of recurring timers whose catchUp is none (docs/recurring.md): each row
     * still carrying our token is deleted, its successor staged after the database's now (as its claim read it), a
     * {@code skipped} event written (queen.timer_skip_v1). Returns how many were skipped; the others are no longer ours.
     */
    public int skip(List<ClaimedTimer> timers) throws SQLException {
        if (timers.isEmpty()) {
            return 0;
        }
        List<SkipRow> rows = new ArrayList<>(timers.size());
        for (ClaimedTimer t : timers) {
            rows.add(new SkipRow(t.key().tenantId(), t.key().queue(), t.key().timerKey(), t.lease().claimToken(), t.plan(false).toJson()));
        }
        try (Connection c = dataSource.getConnection(); PreparedStatement st = c.prepareStatement(SKIP)) {
            st.setString(1, JsonRows.write(rows));
            try (ResultSet rs = st.executeQuery()) {
                rs.next();
                return rs.getInt("skipped");
            }
        }
    }

    /** A row of timer_skip_v1: a missed occurrence this sweeper claimed, and its series' plan. */
    private record SkipRow(UUID tenantId, String queue, String timerKey, UUID claimToken, JsonNode plan) {}

    /** A row of timer_fail_v2 / timer_release_v2: a timer this sweeper claimed, with its token. */
    private record HeldRow(UUID tenantId, String queue, String timerKey, UUID claimToken) {}

    /** A row of timer_dead_letter_v3: a timer this sweeper holds the live claim of. */
    private record DeadLetterRow(UUID tenantId, String queue, String timerKey, UUID claimToken,
                                 @JsonInclude(JsonInclude.Include.NON_NULL) JsonNode plan) {}

    private static String heldRows(List<ClaimedTimer> timers) {
        List<HeldRow> rows = new ArrayList<>(timers.size());
        for (ClaimedTimer t : timers) {
            rows.add(new HeldRow(t.key().tenantId(), t.key().queue(), t.key().timerKey(), t.lease().claimToken()));
        }
        return JsonRows.write(rows);
    }

    private static double seconds(Duration d) {
        return d.toNanos() / 1e9;
    }
}
