package io.queen.timers.sql;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.zip.CRC32;
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
 * on a connection of its own, so the second waits and then finds nothing to do. Flyway also locks on
 * PostgreSQL; ours is kept so the guarantee is this class's, not a detail of a Flyway version.
 * Price: one extra connection for the duration of a migration.
 *
 * <p>A released versioned migration never changes (docs/schema-and-roles.md#schema): every database it ran
 * on recorded its checksum, and Flyway's validation refuses a text that differs. Nothing here rewrites a
 * recorded checksum; ReleasedMigrationsTest pins every shipped text.
 *
 * <p>{@link #migrate(DataSource, String)} to a version below the newest (tests that need a database as
 * it was at an old version) reads the versioned migrations only: the repeatable ones (db/current)
 * define the functions of the newest schema and run after every versioned one.
 */
public final class Migrations {

    private static final Logger LOG = LoggerFactory.getLogger(Migrations.class);
    public static final String HISTORY_SCHEMA = "queen_timers";
    public static final String HISTORY_TABLE = "schema_history";
    private static final String LOCATION_PATH = "db/migration";
    /** Versioned migrations: tables, indexes, types, data, and the DROPs of retired functions. */
    private static final String LOCATION = "classpath:" + LOCATION_PATH;
    /** Repeatable migrations (R__<family>.sql): every function and view, once, in its current form. */
    private static final String CURRENT = "classpath:db/current";
    /** The roles and grants of the least-privilege deployment, applied after every migrate (docs/schema-and-roles.md#database-roles). */
    static final String LEAST_PRIVILEGE = "db/least-privilege.sql";
    /** Arbitrary but fixed: the advisory lock key every queen-timers process agrees on. */
    private static final long MIGRATION_LOCK_KEY = 0x7175_6565_6e74_6d72L; // "queentmr"

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
            PostgresVersion.require(lock);   // an older server is refused in one sentence, before any migration fails on it
            advisory(lock, "SELECT pg_advisory_lock(?)");
            try {
                refuseRewrittenHistory(lock);
                revokePublicExecuteByDefault(lock);
                MigrateResult result;
                try (BorrowedConnections flywaysOwn = new BorrowedConnections(dataSource)) {
                    result = flyway(flywaysOwn, targetVersion).migrate();
                }
                if (MigrationVersion.LATEST.getVersion().equals(targetVersion)) {
                    applyLeastPrivilege(lock);
                }
                return result;
            } finally {
                unlockOrDrop(lock);
            }
        } catch (SQLException e) {
            throw new IllegalStateException("cannot take the migration lock: " + e.getMessage(), e);
        }
    }

    /**
     * A function the migrating role creates from now on gets no EXECUTE for PUBLIC at any moment: PostgreSQL grants
     * it by default, and {@value #LEAST_PRIVILEGE} takes it away only after the migrations have
     * committed, so a function a migration created was callable by every login in between. Global for the role, not
     * per schema: a per-schema default can only add to the global one. Idempotent; a role may always set its own
     * defaults. PRICE: functions the same role creates in other schemas get no PUBLIC EXECUTE either (grant them).
     */
    private static void revokePublicExecuteByDefault(Connection c) throws SQLException {
        try (Statement st = c.createStatement()) {
            st.execute("ALTER DEFAULT PRIVILEGES REVOKE EXECUTE ON FUNCTIONS FROM PUBLIC");
        }
    }

    /**
     * The service roles and their grants ({@value #LEAST_PRIVILEGE}), re-applied after every migrate to the
     * newest version so every function that exists now is covered, in one transaction.
     */
    private static void applyLeastPrivilege(Connection c) throws SQLException {
        boolean auto = c.getAutoCommit();
        c.setAutoCommit(false);
        try (Statement st = c.createStatement()) {
            st.execute(SqlFile.load(Migrations.class, "/" + LEAST_PRIVILEGE));
            c.commit();
        } catch (SQLException | RuntimeException e) {
            c.rollback();
            throw e;
        } finally {
            c.setAutoCommit(auto);
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
                    versions.add(MigrationVersion.fromVersion(rs.getString("version")));
                }
            }
            return versions;
        } catch (SQLException e) {
            throw new IllegalStateException("cannot read the schema history " + history + ": " + e.getMessage(), e);
        }
    }

    private static boolean historyExists(Connection c) throws SQLException {
        try (PreparedStatement exists = c.prepareStatement("SELECT to_regclass(?) IS NOT NULL AS present")) {
            exists.setString(1, HISTORY_SCHEMA + "." + HISTORY_TABLE);
            try (ResultSet rs = exists.executeQuery()) {
                rs.next();
                return rs.getBoolean("present");
            }
        }
    }

    private static Flyway flyway(DataSource dataSource, String target) {
        return Flyway.configure()
                .dataSource(dataSource)
                .locations(MigrationVersion.LATEST.getVersion().equals(target) ? new String[] {LOCATION, CURRENT} : new String[] {LOCATION})
                .schemas(HISTORY_SCHEMA)
                .createSchemas(true)
                .table(HISTORY_TABLE)
                .placeholderReplacement(false)
                // One transaction for all pending migrations: an upgrade drops retired functions (a
                // versioned migration) and re-creates their callers (db/current) at once, so a running
                // process of the previous release sees the old functions or the new ones, never a mix.
                .group(true)
                .target(target)
                .load();
    }

    /**
     * Flyway's checksum of a classpath text: CRC32 over its lines (terminators dropped, a leading
     * byte-order mark too), as Flyway computes it when it records a migration. ReleasedMigrationsTest
     * pins every shipped text by it; MigrationsIT pins that it is what Flyway records.
     */
    static int checksum(String resource) {
        InputStream in = Migrations.class.getClassLoader().getResourceAsStream(resource);
        if (in == null) {
            throw new IllegalStateException("no migration text " + resource + " on the classpath");
        }
        CRC32 crc = new CRC32();
        try (BufferedReader r = new BufferedReader(new InputStreamReader(in, StandardCharsets.UTF_8))) {
            boolean first = true;
            for (String line = r.readLine(); line != null; line = r.readLine()) {
                if (first && line.startsWith("\uFEFF")) {
                    line = line.substring(1);
                }
                first = false;
                crc.update(line.getBytes(StandardCharsets.UTF_8));
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return (int) crc.getValue();
    }

    /**
     * Refuses, in one sentence, a database whose history records a shipped version with another file or another
     * checksum than this build's. A released migration never changes, so such a history was written by a build
     * whose migrations this one does not continue: one from before the schema's baseline, or one with an edited
     * text (docs/schema-and-roles.md#schema). Flyway would refuse it too, but file by file and with the advice to
     * "run repair", which would record this build's texts as applied over a schema they never made. Versions this
     * build does not ship (a database a newer build migrated) are Flyway's to judge, as before. PRICE: one read of
     * the history and a checksum of each shipped text per migrate (Flyway computes the same).
     */
    private static void refuseRewrittenHistory(Connection c) throws SQLException {
        if (!historyExists(c)) {
            return;
        }
        Map<MigrationVersion, String> shipped = ShippedMigrations.scripts();
        List<String> differ = new ArrayList<>();
        try (PreparedStatement st = c.prepareStatement("SELECT version, script, checksum FROM " + HISTORY_SCHEMA + "." + HISTORY_TABLE
                        + " WHERE version IS NOT NULL AND success ORDER BY installed_rank");
                ResultSet rs = st.executeQuery()) {
            while (rs.next()) {
                String recorded = rs.getString("script");
                String script = shipped.get(MigrationVersion.fromVersion(rs.getString("version")));
                if (script == null) {
                    continue;
                }
                int ours = checksum(LOCATION_PATH + "/" + script);
                if (!script.equals(recorded)) {
                    differ.add(recorded + " (this build's version " + rs.getString("version") + " is " + script + ")");
                } else if (ours != rs.getInt("checksum")) {
                    differ.add(recorded + " (checksum " + rs.getInt("checksum") + ", this build's " + ours + ")");
                }
            }
        }
        if (!differ.isEmpty()) {
            throw new IllegalStateException("the schema history " + HISTORY_SCHEMA + "." + HISTORY_TABLE + " records "
                    + String.join(", ", differ) + ": a released migration never changes, so this database was migrated by a build"
                    + " from before the schema's baseline or by an edited migration (docs/schema-and-roles.md#schema); this build"
                    + " cannot upgrade it: migrate a new database");
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
