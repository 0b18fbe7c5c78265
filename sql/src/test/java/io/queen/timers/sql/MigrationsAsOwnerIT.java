package io.queen.timers.sql;

import static org.assertj.core.api.Assertions.assertThat;

import io.queen.timers.testkit.FreshDatabase;
import io.queen.timers.testkit.TestPostgres;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.Statement;
import org.junit.jupiter.api.Test;
import org.postgresql.ds.PGSimpleDataSource;

/**
 * The least-privilege deployment (docker/postgres-init/10-queen-role.sh): a role that is not a superuser
 * and owns nothing but its database applies every migration, and ends up owning the queen objects.
 */
class MigrationsAsOwnerIT {

    @Test
    void aNonSuperuserThatOwnsTheDatabaseAppliesEveryMigrationAndOwnsTheSchemas() throws Exception {
        try (FreshDatabase admin = TestPostgres.createDatabase("MigrationsAsOwnerIT")) {
            String role = admin.name() + "_owner";
            String database = admin.name() + "_q";
            // the init script's statements
            exec(admin, "CREATE ROLE " + role + " LOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE NOREPLICATION NOBYPASSRLS PASSWORD 'owner-secret'");
            exec(admin, "CREATE DATABASE " + database + " OWNER " + role);
            exec(admin, "REVOKE ALL ON DATABASE " + database + " FROM PUBLIC");
            exec(admin, "GRANT CONNECT, TEMPORARY ON DATABASE " + database + " TO " + role);
            for (String group : new String[] {"queen_bridge", "queen_sweeper", "queen_operator"}) {
                // the service roles (cluster-wide: another test may have made them already); the owner may not create roles
                exec(admin, "DO $$ BEGIN CREATE ROLE " + group + " NOLOGIN; EXCEPTION WHEN duplicate_object OR unique_violation THEN NULL; END $$");
            }
            String url = admin.jdbcUrl().replace("/" + admin.name(), "/" + database);
            try {
                PGSimpleDataSource ds = new PGSimpleDataSource();
                ds.setUrl(url);
                ds.setUser(role);
                ds.setPassword("owner-secret");
                Migrations.migrate(ds);
                assertThat(Migrations.pendingCount(ds)).isZero();
                try (Connection c = ds.getConnection(); Statement st = c.createStatement();
                        ResultSet rs = st.executeQuery("SELECT rolsuper, (SELECT string_agg(nspname || '=' || pg_get_userbyid(nspowner), ',' ORDER BY nspname)"
                                + " FROM pg_namespace WHERE nspname IN ('queen', 'queen_timers')) FROM pg_roles WHERE rolname = current_user")) {
                    rs.next();
                    assertThat(rs.getBoolean(1)).isFalse();
                    assertThat(rs.getString(2)).isEqualTo("queen=" + role + ",queen_timers=" + role);
                }
            } finally {
                exec(admin, "DROP DATABASE IF EXISTS " + database + " WITH (FORCE)");
                exec(admin, "DROP ROLE IF EXISTS " + role);
            }
        }
    }

    private static void exec(FreshDatabase db, String sql) throws Exception {
        try (Connection c = DriverManager.getConnection(db.jdbcUrl(), db.user(), db.password()); Statement st = c.createStatement()) {
            st.execute(sql);
        }
    }
}
