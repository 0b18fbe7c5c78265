package io.queen.timers.sweeper.probe;

import io.queen.timers.sql.SqlFile;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Timestamp;
import java.util.Optional;
import javax.sql.DataSource;

/** Runs {@code queen.timer_probe_v1}: one read for the wake-up time, the due count and the lateness. */
public final class DueProbe {

    private static final String PROBE = SqlFile.load(DueProbe.class, "probe.sql");

    private final DataSource dataSource;
    private final int dueCap;

    public DueProbe(DataSource dataSource, int dueCap) {
        this.dataSource = dataSource;
        this.dueCap = dueCap;
    }

    public ProbeResult probe() throws SQLException {
        try (Connection c = dataSource.getConnection(); PreparedStatement st = c.prepareStatement(PROBE)) {
            st.setInt(1, dueCap);
            try (ResultSet rs = st.executeQuery()) {
                rs.next();
                Timestamp next = rs.getTimestamp("next_visible_at");
                return new ProbeResult(rs.getTimestamp("db_now").toInstant(),
                        Optional.ofNullable(next).map(Timestamp::toInstant), rs.getInt("due"));
            }
        }
    }
}
