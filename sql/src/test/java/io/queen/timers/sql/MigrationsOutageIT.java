package io.queen.timers.sql;

import static org.assertj.core.api.Assertions.assertThat;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import io.queen.timers.testkit.FreshDatabase;
import io.queen.timers.testkit.TestPostgres;
import java.io.PrintWriter;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.Random;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.logging.Logger;
import javax.sql.DataSource;
import org.flywaydb.core.Flyway;
import org.junit.jupiter.api.Test;

/**
 * The database goes away in the middle of reading the schema version or of a migration, at every call the
 * code makes on its connections in turn: whatever fails, every connection goes back to the pool, and the
 * next call works. What a restart of PostgreSQL does to the sessions is done here deterministically:
 * {@code pg_terminate_backend} of every session of the database, just before the n-th call (in a migration, every
 * fourth call of a run from a random start: see the test).
 */
class MigrationsOutageIT {

    @Test
    void readingThePendingCountGivesEveryConnectionBackWhereverTheSessionsAreKilled() throws Exception {
        try (FreshDatabase fresh = TestPostgres.createDatabase("outage_pending"); HikariDataSource pool = pool(fresh)) {
            Migrations.migrate(pool);
            assertThat(Migrations.pendingCount(pool)).isZero();
            int calls = countCalls(pool, ds -> Migrations.pendingCount(ds));
            for (int n = 1; n <= calls; n++) {
                KillingDataSource killing = new KillingDataSource(pool, fresh, n);
                try {
                    Migrations.pendingCount(killing);
                } catch (RuntimeException expected) {
                    // the database went away: an answer or an error, never a connection kept
                }
                assertThat(active(pool)).as("connections not given back when the sessions die before call %d of %d", n, calls).isZero();
                assertThat(pendingCountOnceTheDeadConnectionsAreGone(pool)).as("after a kill before call %d", n).isZero();
            }
        }
    }

    @Test
    void aMigrationGivesEveryConnectionBackWhereverTheSessionsAreKilled() throws Exception {
        try (FreshDatabase fresh = TestPostgres.createDatabase("outage_migrate"); HikariDataSource pool = pool(fresh)) {
            Migrations.migrate(pool, "5");
            // the calls of a migration that has one version to apply (the newest versioned migration is re-runnable:
            // applied again after its history row is deleted)
            int calls = countCalls(pool, ds -> Migrations.migrate(ds).migrationsExecuted);
            // whether the last attempt applied the version, read from the history table: a round trip, where Flyway's own
            // pending count (checked once, below) scans and checksums every migration, at each of the hundreds of calls
            long applied = appliedVersions(pool);
            // A kill before each of the ~550 calls takes ~140 s; a run kills before every STRIDE-th call from a random
            // start (a different quarter each run, printed), -Dmigrations.outage.stride=1 for every call. The price: a
            // single run covers a quarter of the calls; every call is covered in a few runs.
            int stride = Integer.getInteger("migrations.outage.stride", 4);
            long seed = Long.getLong("migrations.outage.seed", System.nanoTime());
            int first = 1 + new Random(seed).nextInt(stride);
            System.out.printf("MigrationsOutageIT: %d calls, a kill before every %d-th from call %d (seed %d; rerun with"
                    + " -Dmigrations.outage.seed=%d)%n", calls, stride, first, seed, seed);
            for (int n = first; n <= calls; n += stride) {
                // the sessions the last kill left idle in the pool are not what this test is about
                pool.getHikariPoolMXBean().softEvictConnections();
                if (appliedVersions(pool) == applied) {
                    forgetNewest(pool);
                }
                try {
                    Migrations.migrate(new KillingDataSource(pool, fresh, n));
                } catch (RuntimeException expected) {
                    // the start-up retries it
                }
                assertThat(active(pool)).as("connections not given back when the sessions die before call %d of %d", n, calls).isZero();
            }
            pool.getHikariPoolMXBean().softEvictConnections();
            if (Migrations.pendingCount(pool) == 0) {
                forgetNewest(pool);
            }
            assertThat(Migrations.pendingCount(pool)).isOne();
            assertThat(Migrations.migrate(pool).migrationsExecuted).isOne();
            assertThat(Migrations.pendingCount(pool)).isZero();
            assertThat(active(pool)).isZero();
        }
    }

    private static long appliedVersions(DataSource pool) throws SQLException {
        String history = Migrations.HISTORY_SCHEMA + "." + Migrations.HISTORY_TABLE;
        try (Connection c = pool.getConnection(); Statement st = c.createStatement();
                ResultSet rs = st.executeQuery("SELECT count(*) FROM " + history + " WHERE version IS NOT NULL AND success")) {
            rs.next();
            return rs.getLong(1);
        }
    }

    private static void forgetNewest(DataSource pool) throws SQLException {
        String history = Migrations.HISTORY_SCHEMA + "." + Migrations.HISTORY_TABLE;
        try (Connection c = pool.getConnection(); Statement st = c.createStatement()) {
            st.execute("DELETE FROM " + history + " WHERE installed_rank = (SELECT max(installed_rank) FROM " + history
                    + " WHERE version IS NOT NULL)");
        }
    }

    /**
     * Hikari hands out a connection used in the last 500 ms without checking it, so each connection the kill
     * left idle in the pool can fail one call (and is then evicted): at most one per pooled connection.
     */
    private static int pendingCountOnceTheDeadConnectionsAreGone(HikariDataSource pool) {
        RuntimeException last = null;
        for (int attempt = 0; attempt <= pool.getMaximumPoolSize(); attempt++) {
            try {
                return Migrations.pendingCount(pool);
            } catch (RuntimeException e) {
                last = e;
            }
        }
        throw last;
    }

    @Test
    void thePendingCountIsFlywaysOwn() throws Exception {
        try (FreshDatabase fresh = TestPostgres.createDatabase("outage_count"); HikariDataSource pool = pool(fresh)) {
            assertThat(Migrations.pendingCount(pool)).isEqualTo(flywayPending(pool)).isPositive();
            assertThat(Migrations.appliedVersion(pool)).isEmpty();
            Migrations.migrate(pool, "1");
            assertThat(Migrations.pendingCount(pool)).isEqualTo(flywayPending(pool)).isPositive();
            assertThat(Migrations.appliedVersion(pool)).contains(flywayCurrent(pool));
            Migrations.migrate(pool);
            assertThat(Migrations.pendingCount(pool)).isEqualTo(flywayPending(pool)).isZero();
        }
    }

    private static int flywayPending(DataSource ds) {
        return flyway(ds).info().pending().length;
    }

    private static String flywayCurrent(DataSource ds) {
        return flyway(ds).info().current().getVersion().getVersion();
    }

    private static Flyway flyway(DataSource ds) {
        return Flyway.configure().dataSource(ds).locations("classpath:db/migration").schemas(Migrations.HISTORY_SCHEMA)
                .table(Migrations.HISTORY_TABLE).placeholderReplacement(false).load();
    }

    private static HikariDataSource pool(FreshDatabase db) {
        HikariConfig c = new HikariConfig();
        c.setJdbcUrl(db.jdbcUrl());
        c.setUsername(db.user());
        c.setPassword(db.password());
        c.setMaximumPoolSize(3);
        c.setMinimumIdle(0);
        // a kept connection shows as a quick failure, not as a long wait
        c.setConnectionTimeout(2_000);
        c.setPoolName("outage-" + db.name());
        return new HikariDataSource(c);
    }

    private static int active(HikariDataSource pool) {
        return pool.getHikariPoolMXBean().getActiveConnections();
    }

    interface Call {
        Object run(DataSource ds) throws Exception;
    }

    /** How many calls (getConnection and every call on a connection) {@code call} makes when nothing fails. */
    private static int countCalls(HikariDataSource pool, Call call) throws Exception {
        KillingDataSource counting = new KillingDataSource(pool, null, Integer.MAX_VALUE);
        call.run(counting);
        return counting.calls.get();
    }

    /** Terminates every session of the database just before the n-th call made through it. */
    private static final class KillingDataSource implements DataSource {
        private final DataSource pool;
        private final FreshDatabase db;
        private final int killAt;
        final AtomicInteger calls = new AtomicInteger();

        KillingDataSource(DataSource pool, FreshDatabase db, int killAt) {
            this.pool = pool;
            this.db = db;
            this.killAt = killAt;
        }

        private void call() throws SQLException {
            if (calls.incrementAndGet() == killAt) {
                try (Connection admin = DriverManager.getConnection(db.jdbcUrl(), db.user(), db.password());
                        Statement st = admin.createStatement();
                        ResultSet rs = st.executeQuery("SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity"
                                + " WHERE datname = current_database() AND pid <> pg_backend_pid()")) {
                    rs.next();
                }
            }
        }

        @Override
        public Connection getConnection() throws SQLException {
            call();
            Connection c = pool.getConnection();
            return (Connection) Proxy.newProxyInstance(Connection.class.getClassLoader(), new Class<?>[] {Connection.class},
                    (proxy, method, args) -> {
                        call();
                        try {
                            return method.invoke(c, args);
                        } catch (InvocationTargetException e) {
                            throw e.getCause();
                        }
                    });
        }

        @Override
        public Connection getConnection(String username, String password) {
            throw new UnsupportedOperationException();
        }

        @Override
        public PrintWriter getLogWriter() {
            return null;
        }

        @Override
        public void setLogWriter(PrintWriter out) {}

        @Override
        public void setLoginTimeout(int seconds) {}

        @Override
        public int getLoginTimeout() {
            return 0;
        }

        @Override
        public Logger getParentLogger() {
            return Logger.getGlobal();
        }

        @Override
        public <T> T unwrap(Class<T> iface) throws SQLException {
            throw new SQLException("not a wrapper");
        }

        @Override
        public boolean isWrapperFor(Class<?> iface) {
            return false;
        }
    }
}
