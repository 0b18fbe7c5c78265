package io.queen.timers.sweeper.probe;

import io.queen.timers.sql.SqlFile;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import javax.sql.DataSource;

/**
 * How many timers wait in {@code queen.log_dlq}, up to a cap: what an operator has to replay. Saturates at
 * the cap like the due count, because past it the number changes nothing about what to do.
 */
public final class DeadLetterCount {

    private static final String COUNT = SqlFile.load(DeadLetterCount.class, "dead_letters.sql");

    private final DataSource dataSource;
    private final int cap;

    public DeadLetterCount(DataSource dataSource, int cap) {
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
