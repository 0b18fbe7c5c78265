package io.queen.timers.sql;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.List;
import java.util.Optional;
import javax.sql.DataSource;
import org.flywaydb.core.Flyway;
import org.flywaydb.core.api.MigrationInfo;
import org.flywaydb.core.api.MigrationVersion;
import org.flywaydb.core.api.output.MigrateResult;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

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
 *
 * <p>V001 and V006 changed text when the log tables became Queen's own shape (issue 17; the README's
 * "Schema" section says why). A database that ran their earlier text has those versions recorded with
 * the earlier checksums, which Flyway's validation would refuse. Before migrating, exactly those two
 * recorded checksums, and no other, are set to the current text's ({@link #SUPERSEDED}); V060 then
 * converts the tables that earlier text made. Any other mismatch still fails validation, as it should.
 */
public final class Migrations {

    private static final Logger LOG = LoggerFactory.getLogger(Migrations.class);
    private static final int EARLIER_V001 = 1098086925;
    private static final int CURRENT_V001 = 1275280228;
    private static final int EARLIER_V006 = -1865753502;
    private static final int CURRENT_V006 = 1373894078;

    public static final String HISTORY_SCHEMA = "queen_timers";
    public static final String HISTORY_TABLE = "schema_history";
    private static final String LOCATION = "classpath:db/migration";
    /** Arbitrary but fixed: the advisory lock key every queen-timers process agrees on. */
    private static final long MIGRATION_LOCK_KEY = 0x7175_6565_6e74_6d72L; // "queentmr"

    /**
     * Version, checksum Flyway recorded for the text shipped before issue 17, checksum of the text
     * now. Pinned by MigrationsTest (the current values) and EarlierShapeUpgradeTest (the earlier).
     */
    record Superseded(String version, int earlier, int current) {}

    static final List<Superseded> SUPERSEDED = List.of(
            new Superseded("1", EARLIER_V001, CURRENT_V001),
            new Superseded("6", EARLIER_V006, CURRENT_V006));

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
                realignSupersededChecksums(lock);
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

    private static void realignSupersededChecksums(Connection c) throws SQLException {
        String history = HISTORY_SCHEMA + "." + HISTORY_TABLE;
        try (PreparedStatement exists = c.prepareStatement("SELECT to_regclass(?) IS NOT NULL")) {
            exists.setString(1, history);
            try (ResultSet rs = exists.executeQuery()) {
                rs.next();
                if (!rs.getBoolean(1)) {
                    return;
                }
            }
        }
        try (PreparedStatement st = c.prepareStatement(
                "UPDATE " + history + " SET checksum = ? WHERE version ~ '^[0-9]+$' AND version::int = ?::int AND checksum = ?")) {
            for (Superseded s : SUPERSEDED) {
                st.setInt(1, s.current());
                st.setString(2, s.version());
                st.setInt(3, s.earlier());
                if (st.executeUpdate() > 0) {
                    LOG.info("schema history: V{} ran the text shipped before issue 17; checksum realigned, V060 converts its tables",
                            s.version());
                }
            }
        }
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
