package io.queen.timers.sweeper.probe;

import io.queen.timers.sql.SqlFile;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import javax.sql.DataSource;

/**
 * How many recurring series have a pending occurrence (docs/recurring.md), up to a cap: a series keeps one
 * row, so this counts the recurring rows. Saturates at the cap like the dead-letter count.
 */
public final class RecurringSeriesCount {

    private static final String COUNT = SqlFile.load(RecurringSeriesCount.class, "recurring_series.sql");

    private final DataSource dataSource;
    private final int cap;

    public RecurringSeriesCount(DataSource dataSource, int cap) {
        this.dataSource = dataSource;
        this.cap = cap;
    }

    public long count() throws SQLException {
        try (Connection c = dataSource.getConnection(); PreparedStatement st = c.prepareStatement(COUNT)) {
            st.setInt(1, cap);
            try (ResultSet rs = st.executeQuery()) {
                rs.next();
                return rs.getLong(1);
            }
        }
    }
}
