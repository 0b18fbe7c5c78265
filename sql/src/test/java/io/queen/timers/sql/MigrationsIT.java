package io.queen.timers.sql;

import static org.assertj.core.api.Assertions.assertThat;

import io.queen.timers.testkit.FreshDatabase;
import io.queen.timers.testkit.TestPostgres;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
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
    void theCurrentTextsOfV001AndV006HaveTheChecksumsTheRealignmentWrites() throws Exception {
        try (FreshDatabase fresh = TestPostgres.createDatabase("checksums")) {
            DataSource ds = fresh.newDataSource(4);
            Migrations.migrate(ds);
            for (Migrations.Superseded s : Migrations.SUPERSEDED) {
                assertThat(EarlierShapeUpgradeIT.checksum(ds, s.version())).as("V" + s.version()).isEqualTo(s.current());
            }
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
