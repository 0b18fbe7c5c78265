package io.queen.timers.sql;

import static org.assertj.core.api.Assertions.assertThat;

import io.queen.timers.testkit.FreshDatabase;
import io.queen.timers.testkit.TestPostgres;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.util.Arrays;
import javax.sql.DataSource;
import org.junit.jupiter.api.Test;

/** The storage settings of queen.log_timers after every migration: V002's, each with its dated measured block. */
class MeasuredStorageSettingsIT {

    @Test
    void logTimersCarriesTheMeasuredStorageSettingsAndSaysWhere() throws Exception {
        try (FreshDatabase fresh = TestPostgres.createDatabase("storage")) {
            DataSource ds = fresh.newDataSource(3);
            Migrations.migrate(ds);
            try (Connection c = ds.getConnection(); Statement st = c.createStatement();
                 ResultSet rs = st.executeQuery("SELECT c.reloptions, obj_description(c.oid, 'pg_class') FROM pg_class c"
                         + " WHERE c.oid = 'queen.log_timers'::regclass")) {
                rs.next();
                String[] options = (String[]) rs.getArray(1).getArray();
                assertThat(Arrays.asList(options)).containsExactlyInAnyOrder(
                        "fillfactor=100",                           // measured: no update here can be HOT
                        "autovacuum_vacuum_scale_factor=0.02",      // measured, kept
                        "autovacuum_vacuum_threshold=1000",         // measured, kept
                        "autovacuum_vacuum_insert_scale_factor=0.05", // measured, kept
                        "vacuum_truncate=off");                     // not a number
                assertThat(rs.getString(2)).contains("measured 2026-12-03").contains("V002__log_timers.sql");
            }
        }
    }
}
