package io.queen.timers.sql;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.Optional;
import javax.sql.DataSource;
import org.flywaydb.core.Flyway;
import org.flywaydb.core.api.MigrationInfo;
import org.flywaydb.core.api.MigrationVersion;
import org.flywaydb.core.api.output.MigrateResult;

/**
 * The only code that applies the schema. Both services call {@link #migrate(DataSource)} at start.
 *
 * <p>Flyway's history lives in its own schema, {@value #HISTORY_SCHEMA}, not in {@code queen}: a
 * Queen broker may share the database and own a non-empty {@code queen} schema, which Flyway would
 * otherwise refuse to migrate ("non-empty schema without history table"). The migrations create
 * {@code queen} objects with {@code IF NOT EXISTS} for the same reason.
 *
 * <p>Two processes starting at once: the whole migration runs under a session advisory lock held
 * on a connection of its own, so the second waits and then finds nothing to do. Flyway 13 also
 * locks on PostgreSQL (on 2026-12-02, MigrationsTest's concurrent case passed 3 of 3 runs without
 * our lock); ours is kept so the guarantee is this class's, not a detail of a Flyway version.
 * Price: one extra connection for the duration of a migration.
 */
public final class Migrations {

    public static final String HISTORY_SCHEMA = "queen_timers";
    public static final String HISTORY_TABLE = "schema_history";
    private static final String LOCATION = "classpath:db/migration";
    /** Arbitrary but fixed: the advisory lock key every queen-timers process agrees on. */
    private static final long MIGRATION_LOCK_KEY = 0x7175_6565_6e74_6d72L; // "queentmr"

    private Migrations() {}

    /** Migrates to the newest version on the classpath. Idempotent. */
    public static MigrateResult migrate(DataSource dataSource) {
        return migrate(dataSource, MigrationVersion.LATEST.getVersion());
    }

    /** Migrates up to and including {@code targetVersion} (for example "6"). */
    public static MigrateResult migrate(DataSource dataSource, String targetVersion) {
        try (Connection lock = dataSource.getConnection()) {
            advisory(lock, "SELECT pg_advisory_lock(?)");
            try {
                return flyway(dataSource, targetVersion).migrate();
            } finally {
                advisory(lock, "SELECT pg_advisory_unlock(?)");
            }
        } catch (SQLException e) {
            throw new IllegalStateException("cannot take the migration lock: " + e.getMessage(), e);
        }
    }

    /** Migrations shipped in this build but not applied yet: zero means the schema is current. */
    public static int pendingCount(DataSource dataSource) {
        return flyway(dataSource, MigrationVersion.LATEST.getVersion()).info().pending().length;
    }

    /** The newest version applied to the database, empty when none is. */
    public static Optional<String> appliedVersion(DataSource dataSource) {
        MigrationInfo current = flyway(dataSource, MigrationVersion.LATEST.getVersion()).info().current();
        return current == null ? Optional.empty() : Optional.of(current.getVersion().getVersion());
    }

    private static Flyway flyway(DataSource dataSource, String target) {
        return Flyway.configure()
                .dataSource(dataSource)
                .locations(LOCATION)
                .schemas(HISTORY_SCHEMA)
                .createSchemas(true)
                .table(HISTORY_TABLE)
                .placeholderReplacement(false)
                .target(target)
                .load();
    }

    private static void advisory(Connection c, String sql) throws SQLException {
        try (PreparedStatement st = c.prepareStatement(sql)) {
            st.setLong(1, MIGRATION_LOCK_KEY);
            try (ResultSet rs = st.executeQuery()) {
                rs.next();
            }
        }
    }
}
