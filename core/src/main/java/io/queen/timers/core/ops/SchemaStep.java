package io.queen.timers.core.ops;

import com.zaxxer.hikari.HikariDataSource;
import io.micrometer.core.instrument.MeterRegistry;
import io.queen.timers.core.config.CommonSettings;
import io.queen.timers.core.config.ConfigException;
import io.queen.timers.core.db.DataSources;
import io.queen.timers.core.db.DatabaseRole;
import io.queen.timers.core.db.SessionTimeouts;
import io.queen.timers.sql.Migrations;
import io.queen.timers.sql.PostgresVersion;
import java.sql.Connection;
import java.sql.SQLException;
import javax.sql.DataSource;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A service's schema step at start, before its own pool opens: the PostgreSQL version, then the least-privilege check
 * of its login ({@link DatabaseRole}) and a current schema, or the migration. A start-up step like the others, so it
 * lives with {@link Startup}, whose retries ride out a database that is away; the checks it runs are the db package's.
 */
public final class SchemaStep {

    private static final Logger LOG = LoggerFactory.getLogger(SchemaStep.class);

    private SchemaStep() {}

    /**
     * Runs the step on a pool of its own (closed before the service's pool opens). With
     * {@link CommonSettings#DB_ROLE_CHECK} (the default): the role check, then the schema must be current; the
     * service does not migrate whatever {@link CommonSettings#MIGRATE_ON_START} says, because a role allowed to
     * migrate is one the check refuses (the owner migrates: `queen-timers migrate`). Without it: the migration
     * when {@link CommonSettings#MIGRATE_ON_START}, as before. An unreachable database is retried through
     * {@code startup}; a refused role, a pending migration or a PostgreSQL older than {@link PostgresVersion#OLDEST_MAJOR}
     * (checked first, in both cases) is a {@link ConfigException}. With both settings off nothing here reads the
     * database, the version neither: the `migrate` that made the schema checked it.
     */
    public static void atStart(CommonSettings config, MeterRegistry registry, Startup startup, String service, String group) {
        boolean check = config.schema().roleCheck();
        if (!check && !config.schema().migrateOnStart()) {
            return;
        }
        // a migration's statements are not bounded like a batch's (SessionTimeouts.MIGRATION)
        try (HikariDataSource ds = DataSources.create(config.database(), SessionTimeouts.MIGRATION, 3, registry)) {
            // the PostgreSQL version first, inside the step the service is known by (readiness names it while the database
            // is away): an older server is refused naming the supported versions, whichever branch follows
            if (!check) {
                startup.retry("apply the schema migrations", () -> {
                    requireSupportedVersion(ds, service);
                    return Migrations.migrate(ds);
                });
                return;
            }
            startup.retry("check the database role", () -> {
                requireSupportedVersion(ds, service);
                DatabaseRole.requireLeastPrivilege(ds, service, group);
                return null;
            });
            int pending = startup.retry("read the schema version", () -> Migrations.pendingCount(ds));
            if (pending > 0) {
                throw new ConfigException(service + ": " + pending + " schema migration(s) pending, which its least-privilege role may"
                        + " not apply: run `queen-timers migrate` as the owner of the queen schema first (compose's `migrate` service does)");
            }
            if (config.schema().migrateOnStart()) {
                LOG.info("{}: the schema is current; {} is not applied by a least-privilege role (the owner migrates)", service,
                        CommonSettings.MIGRATE_ON_START);
            }
        }
    }

    /** {@link PostgresVersion#require}, as a {@link ConfigException}: a deployment's choice, which waiting would not fix. */
    private static int requireSupportedVersion(DataSource dataSource, String service) throws SQLException {
        try (Connection c = dataSource.getConnection()) {
            return PostgresVersion.require(c);
        } catch (PostgresVersion.Unsupported e) {
            throw new ConfigException(service + " refuses to start: " + e.getMessage());
        }
    }
}
