package io.queen.timers.sql;

import static org.assertj.core.api.Assertions.assertThat;

import io.queen.timers.testkit.FreshDatabase;
import io.queen.timers.testkit.TestPostgres;
import java.sql.Array;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.Statement;
import java.util.UUID;
import javax.sql.DataSource;
import org.junit.jupiter.api.Test;

/**
 * The bridge's lock looks each key of a batch up through the primary key even when the statistics
 * say the table is empty (vacuumed near-empty, then filled faster than ANALYZE runs). A semi join of the
 * batch's keys with the table, the plan the planner chose there, read the whole primary key and compared every row with every key: ingest slowed with the table's size.
 */
class KeyLookupPlanIT {

    @Test
    void theLockUsesThePrimaryKeyWhenTheStatisticsSayTheTableIsEmpty() throws Exception {
        try (FreshDatabase fresh = TestPostgres.createDatabase("keylookup")) {
            DataSource ds = fresh.newDataSource(3);
            Migrations.migrate(ds);
            UUID tenant = UUID.fromString("00000000-0000-0000-0000-000000000001");
            try (Connection c = ds.getConnection(); Statement st = c.createStatement()) {
                st.execute("ALTER TABLE queen.log_timers SET (autovacuum_enabled = false)");
                // a burst that fired: its pages stay (vacuum_truncate = off), VACUUM counts 0 rows in them, and the
                // planner trusts reltuples = 0 over those pages until the next ANALYZE
                st.execute(insert(tenant, "fired-"));
                st.execute("DELETE FROM queen.log_timers");
                st.execute("VACUUM queen.log_timers");
                st.execute(insert(tenant, "present-"));   // the next flood, faster than ANALYZE
            }
            int n = 500;
            UUID[] tenants = new UUID[n];
            String[] queues = new String[n];
            String[] keys = new String[n];
            for (int i = 0; i < n; i++) {
                tenants[i] = tenant;
                queues[i] = "q";
                keys[i] = (i % 2 == 0 ? "absent-" : "present-") + (i + 1);
            }
            int found = 0;
            try (Connection c = ds.getConnection()) {
                c.setAutoCommit(false);
                // this backend's counts not flushed yet (they may include the set-up's scans): the lock's are the difference
                long[] before = pendingScans(c);
                try (PreparedStatement ps = c.prepareStatement("SELECT * FROM queen.bridge_lock_v2(?, ?, ?)")) {
                    Array a1 = c.createArrayOf("uuid", tenants);
                    Array a2 = c.createArrayOf("text", queues);
                    Array a3 = c.createArrayOf("text", keys);
                    ps.setArray(1, a1);
                    ps.setArray(2, a2);
                    ps.setArray(3, a3);
                    try (ResultSet rs = ps.executeQuery()) {
                        while (rs.next()) {
                            found++;
                        }
                    }
                }
                long[] after = pendingScans(c);
                assertThat(after[0] - before[0]).as("sequential scans of queen.log_timers by the lock").isZero();
                assertThat(after[1] - before[1]).as("index scans of queen.log_timers by the lock").isPositive();
                assertThat(after[2] - before[2]).as("rows the lock's index scans fetched: the batch's, not the table's 20,000")
                        .isLessThanOrEqualTo(n);
                c.rollback();
            }
            assertThat(found).as("the present keys of the batch, locked").isEqualTo(n / 2);
        }
    }

    private static String insert(UUID tenant, String keyPrefix) {
        return "INSERT INTO queen.log_timers (tenant_id, queue, timer_key, deliver_at, txn, message_id, payload)"
                + " SELECT '" + tenant + "', 'q', '" + keyPrefix + "' || i, now() + interval '1 hour', 't' || i, queen.timer_uuidv7_v1(now()), '\\x7b7d'"
                + " FROM generate_series(1, 20000) i";
    }

    /** {seq_scan, idx_scan, idx_tup_fetch} of queen.log_timers that this backend counted and has not flushed yet. */
    private static long[] pendingScans(Connection c) throws Exception {
        try (Statement st = c.createStatement(); ResultSet rs = st.executeQuery(
                "SELECT seq_scan, idx_scan, idx_tup_fetch FROM pg_stat_xact_user_tables WHERE relid = 'queen.log_timers'::regclass")) {
            rs.next();
            return new long[] {rs.getLong(1), rs.getLong(2), rs.getLong(3)};
        }
    }
}
