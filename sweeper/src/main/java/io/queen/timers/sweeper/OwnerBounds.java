package io.queen.timers.sweeper;

import io.queen.timers.sql.SqlFile;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import javax.sql.DataSource;

/**
 * The schema owner's bounds on what the sweeper passes its functions (queen.timer_settings, V006;
 * db/current/R__timer_bounds.sql), read once at start so that {@link SweeperSettings#checkOwnerBounds} refuses a setting
 * the database would refuse at every call, naming both. {@code maxLease} and {@code minCleanupIdle} hold for every
 * login; the others only when {@code bindsCaller} (a login that may not change them: every service role).
 */
public record OwnerBounds(boolean bindsCaller, Duration maxLease, Duration minCleanupIdle, Duration maxTransientBackoff,
                          Duration maxBackoff, int minAttempts, int minDeadLettersInRow) {

    private static final String READ = SqlFile.load(OwnerBounds.class, "owner-bounds.sql");

    /** The bounds as they hold for the login of {@code dataSource}. */
    public static OwnerBounds read(DataSource dataSource) throws SQLException {
        try (Connection c = dataSource.getConnection(); Statement st = c.createStatement(); ResultSet rs = st.executeQuery(READ)) {
            if (!rs.next()) {
                throw new SQLException("queen.timer_settings has no row (V006 inserts it): restore it as the owner", "55000");
            }
            return new OwnerBounds(rs.getBoolean("binds_caller"), seconds(rs.getDouble("max_lease_seconds")),
                    seconds(rs.getDouble("min_cleanup_idle_seconds")), seconds(rs.getDouble("max_transient_backoff_seconds")),
                    seconds(rs.getDouble("max_backoff_seconds")), rs.getInt("min_attempts"), rs.getInt("min_dead_letters_in_row"));
        }
    }

    private static Duration seconds(double s) {
        return Duration.ofNanos(Math.round(s * 1e9));
    }
}
