package io.queen.timers.sweeper.fail;

import io.queen.timers.core.db.ErrorClass;
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
 * What happens to claimed timers that were not delivered: {@link #fail} (V034: backoff, attempts, a
 * {@code retrying} event), {@link #release} (V034: back to the queue untouched) and {@link #deadLetter}
 * (V035: to queen.log_dlq). Each call is one statement in its own transaction and touches only rows whose
 * claim token this sweeper presents (the dead-letter: only rows with no token at all).
 */
public final class Failer {

    private static final String FAIL = SqlFile.load(Failer.class, "fail.sql");
    private static final String RELEASE = SqlFile.load(Failer.class, "release.sql");
    private static final String DEAD_LETTER = SqlFile.load(Failer.class, "dead_letter.sql");

    /** One timer and the error its fire (or its packing) met. */
    public record Failure(ClaimedTimer timer, String error) {}

    private final DataSource dataSource;
    private final Duration transientBackoff;
    private final Duration backoffBase;
    private final Duration backoffMax;
    private final int maxAttempts;

    public Failer(DataSource dataSource, Duration transientBackoff, Duration backoffBase, Duration backoffMax, int maxAttempts) {
        this.dataSource = dataSource;
        this.transientBackoff = transientBackoff;
        this.backoffBase = backoffBase;
        this.backoffMax = backoffMax;
        this.maxAttempts = maxAttempts;
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
            bindKeys(c, st, timers);
            st.setArray(4, c.createArrayOf("uuid", timers.stream().map(ClaimedTimer::claimToken).toArray(UUID[]::new)));
            st.setString(5, error);
            st.setBoolean(6, errorClass == ErrorClass.TRANSIENT);
            st.setDouble(7, seconds(transientBackoff));
            st.setDouble(8, seconds(backoffBase));
            st.setDouble(9, seconds(backoffMax));
            st.setInt(10, maxAttempts);
            List<FailOutcome> out = new ArrayList<>();
            try (ResultSet rs = st.executeQuery()) {
                while (rs.next()) {
                    out.add(new FailOutcome(rs.getObject(1, UUID.class), rs.getString(2), rs.getString(3), rs.getInt(4),
                            rs.getTimestamp(5).toInstant(), rs.getBoolean(6)));
                }
            }
            return out;
        }
    }

    /** Hands claimed timers back untouched (claimable at once). Returns how many still carried our token. */
    public int release(List<ClaimedTimer> timers) throws SQLException {
        if (timers.isEmpty()) {
            return 0;
        }
        try (Connection c = dataSource.getConnection(); PreparedStatement st = c.prepareStatement(RELEASE)) {
            bindKeys(c, st, timers);
            st.setArray(4, c.createArrayOf("uuid", timers.stream().map(ClaimedTimer::claimToken).toArray(UUID[]::new)));
            try (ResultSet rs = st.executeQuery()) {
                rs.next();
                return rs.getInt(1);
            }
        }
    }

    /**
     * Moves the named timers to queen.log_dlq if they still have attempts >= max and no token (a reschedule
     * in between wins). {@code payloads} are the decompressed payloads, index for index (an element may be
     * null when the stored payload did not decompress: it is then kept in its stored form).
     */
    public List<DeadLettered> deadLetter(List<ClaimedTimer> timers, List<byte[]> payloads) throws SQLException {
        if (timers.isEmpty()) {
            return List.of();
        }
        try (Connection c = dataSource.getConnection(); PreparedStatement st = c.prepareStatement(DEAD_LETTER)) {
            bindKeys(c, st, timers);
            st.setArray(4, c.createArrayOf("bytea", payloads.toArray(new byte[0][])));
            st.setInt(5, maxAttempts);
            List<DeadLettered> out = new ArrayList<>();
            try (ResultSet rs = st.executeQuery()) {
                while (rs.next()) {
                    out.add(new DeadLettered(rs.getObject(1, UUID.class), rs.getString(2), rs.getString(3),
                            rs.getObject(4, UUID.class), rs.getObject(5, UUID.class)));
                }
            }
            return out;
        }
    }

    private static void bindKeys(Connection c, PreparedStatement st, List<ClaimedTimer> timers) throws SQLException {
        st.setArray(1, c.createArrayOf("uuid", timers.stream().map(ClaimedTimer::tenantId).toArray(UUID[]::new)));
        st.setArray(2, c.createArrayOf("text", timers.stream().map(ClaimedTimer::queue).toArray(String[]::new)));
        st.setArray(3, c.createArrayOf("text", timers.stream().map(ClaimedTimer::timerKey).toArray(String[]::new)));
    }

    private static double seconds(Duration d) {
        return d.toNanos() / 1e9;
    }
}
