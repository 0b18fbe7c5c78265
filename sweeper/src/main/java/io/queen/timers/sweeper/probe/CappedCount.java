package io.queen.timers.sweeper.probe;

import io.queen.timers.sql.SqlFile;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import javax.sql.DataSource;

/**
 * A count the dashboard shows, up to a cap, by one statement of this package that takes the cap and returns one
 * number: {@link #deadLetters} (the timers waiting in {@code queen.log_dlq}: what an operator has to replay) and
 * {@link #recurringSeries} (the recurring series with a pending occurrence, docs/recurring.md: a series keeps one
 * row). It saturates at the cap like the due count, because past it the number changes nothing about what to do.
 */
public final class CappedCount {

    private final DataSource dataSource;
    private final String sql;
    private final int cap;

    private CappedCount(DataSource dataSource, String sqlFile, int cap) {
        this.dataSource = dataSource;
        this.sql = SqlFile.load(CappedCount.class, sqlFile);
        this.cap = cap;
    }

    public static CappedCount deadLetters(DataSource dataSource, int cap) {
        return new CappedCount(dataSource, "dead_letters.sql", cap);
    }

    public static CappedCount recurringSeries(DataSource dataSource, int cap) {
        return new CappedCount(dataSource, "recurring_series.sql", cap);
    }

    public long count() throws SQLException {
        try (Connection c = dataSource.getConnection(); PreparedStatement st = c.prepareStatement(sql)) {
            st.setInt(1, cap);
            try (ResultSet rs = st.executeQuery()) {
                rs.next();
                return rs.getLong("counted");
            }
        }
    }
}
