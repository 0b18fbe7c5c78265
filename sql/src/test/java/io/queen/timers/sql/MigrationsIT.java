package io.queen.timers.sql;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.queen.timers.testkit.FreshDatabase;
import io.queen.timers.testkit.TestPostgres;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import javax.sql.DataSource;
import org.flywaydb.core.api.output.MigrateResult;
import org.junit.jupiter.api.Test;

class MigrationsIT {

    @Test
    void migratingTwiceIsANoOp() throws Exception {
        try (FreshDatabase fresh = TestPostgres.createDatabase("twice")) {
            DataSource ds = fresh.newDataSource(4);
            MigrateResult first = Migrations.migrate(ds);
            assertThat(first.migrationsExecuted).isGreaterThanOrEqualTo(4);
            assertThat(Migrations.pendingCount(ds)).isZero();
            String schemaBefore = schemaFingerprint(ds);
            MigrateResult second = Migrations.migrate(ds);
            assertThat(second.migrationsExecuted).isZero();
            assertThat(schemaFingerprint(ds)).isEqualTo(schemaBefore);
        }
    }

    @Test
    void flywayRecordsTheChecksumReleasedMigrationsTestPins() throws Exception {
        try (FreshDatabase fresh = TestPostgres.createDatabase("checksums")) {
            DataSource ds = fresh.newDataSource(4);
            Migrations.migrate(ds);
            Map<String, Integer> recorded = new TreeMap<>();
            try (Connection c = ds.getConnection(); Statement st = c.createStatement();
                    ResultSet rs = st.executeQuery("SELECT script, checksum FROM " + Migrations.HISTORY_SCHEMA + "."
                            + Migrations.HISTORY_TABLE + " WHERE version IS NOT NULL")) {
                while (rs.next()) {
                    recorded.put(rs.getString(1), rs.getInt(2));
                }
            }
            assertThat(recorded).isNotEmpty().hasSameSizeAs(ShippedMigrations.versions());
            recorded.forEach((script, checksum) ->
                    assertThat(Migrations.checksum("db/migration/" + script)).as(script).isEqualTo(checksum));
        }
    }

    @Test
    void aHistoryThatRecordsAnotherTextOfAShippedMigrationIsRefusedInOneSentence() throws Exception {
        try (FreshDatabase fresh = TestPostgres.createDatabase("rewritten_history")) {
            DataSource ds = fresh.newDataSource(4);
            Migrations.migrate(ds);
            // What a database migrated before the baseline holds: another file under a shipped version, and another text.
            String history = Migrations.HISTORY_SCHEMA + "." + Migrations.HISTORY_TABLE;
            try (Connection c = ds.getConnection(); Statement st = c.createStatement()) {
                st.execute("UPDATE " + history + " SET script = 'V001__log_schema.sql' WHERE version = '001'");
                st.execute("UPDATE " + history + " SET checksum = checksum + 1 WHERE version = '002'");
            }
            assertThatThrownBy(() -> Migrations.migrate(ds))
                    .isInstanceOf(IllegalStateException.class)
                    .hasMessageContaining("records V001__log_schema.sql (this build's version 001 is V001__queen_log.sql),"
                            + " V002__log_timers.sql (checksum ")
                    .hasMessageContaining("migrate a new database");
        }
    }

    @Test
    void concurrentMigrationsOfAnEmptyDatabaseAllSucceedAndApplyEachVersionOnce() throws Exception {
        try (FreshDatabase fresh = TestPostgres.createDatabase("concurrent")) {
            int processes = 4;
            CyclicBarrier start = new CyclicBarrier(processes);
            ExecutorService pool = Executors.newFixedThreadPool(processes);
            List<Future<MigrateResult>> results = new ArrayList<>();
            for (int i = 0; i < processes; i++) {
                DataSource ds = fresh.newDataSource(3); // each "process" has its own pool
                results.add(pool.submit(() -> {
                    start.await();
                    return Migrations.migrate(ds);
                }));
            }
            int executed = 0;
            for (Future<MigrateResult> f : results) {
                executed += f.get().migrationsExecuted; // get() rethrows a failed migration
            }
            pool.shutdown();
            DataSource ds = fresh.newDataSource(2);
            try (Connection c = ds.getConnection(); Statement st = c.createStatement();
                    ResultSet rs = st.executeQuery("SELECT count(version), count(DISTINCT version), count(*) - count(version),"
                            + " count(DISTINCT script) FILTER (WHERE version IS NULL), count(*) FROM "
                            + Migrations.HISTORY_SCHEMA + "." + Migrations.HISTORY_TABLE + " WHERE success AND type = 'SQL'")) {
                rs.next();
                // Each versioned migration once, each repeatable one (db/current) once, and nothing else.
                assertThat(rs.getInt(1)).isEqualTo(rs.getInt(2));
                assertThat(rs.getInt(3)).isEqualTo(rs.getInt(4)).isPositive();
                assertThat(rs.getInt(5)).isEqualTo(executed);
            }
            assertThat(Migrations.pendingCount(ds)).isZero();
        }
    }

    private static String schemaFingerprint(DataSource ds) throws Exception {
        try (Connection c = ds.getConnection(); Statement st = c.createStatement();
                ResultSet rs = st.executeQuery("""
                        SELECT string_agg(c.relname || ':' || c.relkind::text, ',' ORDER BY c.relname)
                          FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = 'queen'""")) {
            rs.next();
            return rs.getString(1);
        }
    }
}
