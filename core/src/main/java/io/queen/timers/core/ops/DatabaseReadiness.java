package io.queen.timers.core.ops;

import io.queen.timers.core.health.ReadinessCheck;
import io.queen.timers.sql.Migrations;
import java.sql.Connection;
import java.sql.SQLException;
import java.util.Optional;
import javax.sql.DataSource;

/**
 * Ready when a connection answers within a short timeout and the schema is at the version this
 * build ships ({@link Migrations#pendingCount} is zero).
 *
 * <p>The pending count is one read of the history table on the probe's connection (not Flyway, which
 * may keep its connections when the database goes away under it). It is asked only until the answer is
 * zero once; after that only the connection is probed, because a schema does not go backwards under a
 * running process.
 */
public final class DatabaseReadiness implements ReadinessCheck {

    private static final int VALID_TIMEOUT_SECONDS = 2;

    private final DataSource dataSource;
    private volatile boolean schemaCurrent;

    public DatabaseReadiness(DataSource dataSource) {
        this.dataSource = dataSource;
    }

    @Override
    public String name() {
        return "database";
    }

    @Override
    public Optional<String> problem() {
        try (Connection c = dataSource.getConnection()) {
            if (!c.isValid(VALID_TIMEOUT_SECONDS)) {
                return Optional.of("connection did not answer within " + VALID_TIMEOUT_SECONDS + " s");
            }
        } catch (SQLException e) {
            return Optional.of("unreachable: " + firstLine(e.getMessage()));
        }
        if (!schemaCurrent) {
            int pending;
            try {
                pending = Migrations.pendingCount(dataSource);
            } catch (RuntimeException e) {
                return Optional.of("cannot read the schema version: " + firstLine(e.getMessage()));
            }
            if (pending > 0) {
                return Optional.of(pending + " migration(s) pending: run `queen-timers migrate` as the owner of the schema");
            }
            schemaCurrent = true;
        }
        return Optional.empty();
    }

    private static String firstLine(String s) {
        if (s == null) {
            return "no message";
        }
        int nl = s.indexOf('\n');
        return nl < 0 ? s : s.substring(0, nl).trim();
    }
}
