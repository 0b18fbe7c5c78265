package io.queen.timers.sql;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import javax.sql.DataSource;
import org.flywaydb.core.Flyway;
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

    /**
     * Migrates up to and including {@code targetVersion} (for example "6").
     *
     * <p>Every connection Flyway takes is given back when the call ends, whatever happened: Flyway 13 does not
     * close its connections on every error path (when the database goes away under it, restoring a
     * connection's original state fails and the close after it is skipped), and each connection it keeps is
     * one the pool never gets back. A pool of three would be empty after two such failures and every retry
     * of the start-up would then time out waiting for a connection.
     */
    public static MigrateResult migrate(DataSource dataSource, String targetVersion) {
        try (Connection lock = dataSource.getConnection()) {
            advisory(lock, "SELECT pg_advisory_lock(?)");
            try {
                realignSupersededChecksums(lock);
                try (BorrowedConnections flywaysOwn = new BorrowedConnections(dataSource)) {
                    return flyway(flywaysOwn, targetVersion).migrate();
                }
            } finally {
                unlockOrDrop(lock);
            }
        } catch (SQLException e) {
            throw new IllegalStateException("cannot take the migration lock: " + e.getMessage(), e);
        }
    }

    /**
     * Migrations shipped in this build but not applied yet: zero means the schema is current. A plain read of
     * the history table on one connection (no Flyway: see {@link #migrate(DataSource, String)}), so a
     * readiness probe that runs it while the database restarts gives its connection back.
     */
    public static int pendingCount(DataSource dataSource) {
        List<MigrationVersion> applied = applied(dataSource);
        int pending = 0;
        for (MigrationVersion shipped : ShippedMigrations.versions()) {
            if (!applied.contains(shipped)) {
                pending++;
            }
        }
        return pending;
    }

    /** The newest version applied to the database, empty when none is. */
    public static Optional<String> appliedVersion(DataSource dataSource) {
        return applied(dataSource).stream().max(MigrationVersion::compareTo).map(MigrationVersion::getVersion);
    }

    /** The versions the history records as applied successfully; empty when there is no history yet. */
    private static List<MigrationVersion> applied(DataSource dataSource) {
        String history = HISTORY_SCHEMA + "." + HISTORY_TABLE;
        try (Connection c = dataSource.getConnection()) {
            if (!historyExists(c)) {
                return List.of();
            }
            List<MigrationVersion> versions = new ArrayList<>();
            try (PreparedStatement st = c.prepareStatement("SELECT version FROM " + history + " WHERE version IS NOT NULL AND success");
                    ResultSet rs = st.executeQuery()) {
                while (rs.next()) {
                    versions.add(MigrationVersion.fromVersion(rs.getString(1)));
                }
            }
            return versions;
        } catch (SQLException e) {
            throw new IllegalStateException("cannot read the schema history " + history + ": " + e.getMessage(), e);
        }
    }

    private static boolean historyExists(Connection c) throws SQLException {
        try (PreparedStatement exists = c.prepareStatement("SELECT to_regclass(?) IS NOT NULL")) {
            exists.setString(1, HISTORY_SCHEMA + "." + HISTORY_TABLE);
            try (ResultSet rs = exists.executeQuery()) {
                rs.next();
                return rs.getBoolean(1);
            }
        }
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
        if (!historyExists(c)) {
            return;
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

    /**
     * The lock connection goes back to the pool: it must not carry the session lock with it, or the next
     * attempt (on another connection of the same pool) would wait for a lock its own pool holds. When the
     * unlock fails the session is dropped instead; if the session is gone, the lock went with it.
     */
    private static void unlockOrDrop(Connection lock) {
        try {
            advisory(lock, "SELECT pg_advisory_unlock(?)");
        } catch (SQLException e) {
            try {
                lock.abort(Runnable::run);
            } catch (SQLException | RuntimeException alreadyGone) {
                LOG.debug("migration lock connection already gone: {}", alreadyGone.toString());
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
