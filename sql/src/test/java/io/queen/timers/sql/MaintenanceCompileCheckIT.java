package io.queen.timers.sql;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.queen.timers.testkit.FreshDatabase;
import io.queen.timers.testkit.PostgresDatabase;
import io.queen.timers.testkit.TestPostgres;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import javax.sql.DataSource;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The compile-time check is real (docs/decisions.md#the-dead-partition-check-is-a-compile-time-check):
 * queen.log_partition_dead_v1 is LANGUAGE sql, so PostgreSQL resolves its tables at creation. Its one
 * definition (db/current/R__log_maintenance.sql) compiles on a database at V001 (Queen's log tables),
 * where queen.log_timers (V002) does not exist yet, so a leg naming it would fail here.
 */
class MaintenanceCompileCheckIT {

    @RegisterExtension
    static final PostgresDatabase db = PostgresDatabase.initializedWith(Migrations::migrate);

    private static final String LEG_ON_TIMERS = """
            CREATE FUNCTION queen.dead_with_timer_leg(p uuid) RETURNS boolean LANGUAGE sql AS $$
                SELECT NOT EXISTS (SELECT 1 FROM queen.log_timers t WHERE t.queue = p::text)
            $$""";

    @Test
    void deadPartitionFunctionIsLanguageSqlAndNeverNamesTheTimerTable() throws SQLException {
        try (Connection c = db.dataSource().getConnection(); Statement st = c.createStatement();
                ResultSet rs = st.executeQuery("""
                        SELECT l.lanname, p.prosrc FROM pg_proc p JOIN pg_language l ON l.oid = p.prolang
                         WHERE p.oid = 'queen.log_partition_dead_v1(uuid, timestamptz)'::regprocedure""")) {
            assertThat(rs.next()).isTrue();
            assertThat(rs.getString(1)).isEqualTo("sql");
            assertThat(rs.getString(2)).doesNotContain("log_timers").contains("queen.log_segments");
        }
    }

    @Test
    void aLegNamingLogTimersFailsOnADatabaseMigratedToV001() throws Exception {
        try (FreshDatabase v001 = TestPostgres.createDatabase("v001only")) {
            DataSource ds = v001.newDataSource(4);
            Migrations.migrate(ds, "1");
            try (Connection c = ds.getConnection(); Statement st = c.createStatement()) {
                st.execute(SqlFile.load(Migrations.class, "/db/current/R__log_maintenance.sql"));
                // The function's one definition compiles at V001: the database really is at V001 ...
                try (ResultSet rs = st.executeQuery("SELECT to_regprocedure('queen.log_partition_dead_v1(uuid, timestamptz)') IS NOT NULL,"
                        + " to_regclass('queen.log_timers') IS NULL")) {
                    rs.next();
                    assertThat(rs.getBoolean(1)).isTrue();
                    assertThat(rs.getBoolean(2)).isTrue();
                }
                // ... and a LANGUAGE sql leg on the timer table is refused at creation time.
                assertThatThrownBy(() -> st.execute(LEG_ON_TIMERS))
                        .isInstanceOf(SQLException.class)
                        .satisfies(e -> assertThat(((SQLException) e).getSQLState()).isEqualTo("42P01"))
                        .hasMessageContaining("log_timers");
            }
        }
    }

    @Test
    void theSameLegCompilesOnceTheTableExistsSoTheFailureAboveIsTheTablesAbsence() throws SQLException {
        try (Connection c = db.dataSource().getConnection(); Statement st = c.createStatement()) {
            st.execute(LEG_ON_TIMERS);
            st.execute("DROP FUNCTION queen.dead_with_timer_leg(uuid)");
        }
    }
}
