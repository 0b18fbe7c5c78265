package io.queen.timers.sql;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.queen.timers.testkit.FreshDatabase;
import io.queen.timers.testkit.TestPostgres;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.Map;
import javax.sql.DataSource;
import org.flywaydb.core.Flyway;
import org.junit.jupiter.api.Test;

/**
 * A database migrated before issue 17 (V001-V006 as they were shipped, kept verbatim under
 * db/shipped-before-queen-schema) upgrades by a plain migrate: the two superseded checksums are
 * realigned, V060 converts the tables the earlier V001 made, and the result holds Queen's facts
 * (column order aside) with the rows it had.
 */
class EarlierShapeUpgradeIT {

    private static final String TENANT = "00000000-0000-0000-0000-000000000001";

    @Test
    void aDatabaseAtTheEarlierV006MigratesToQueensShapeKeepingItsRows() throws SQLException {
        try (FreshDatabase fresh = TestPostgres.createDatabase("earlier")) {
            DataSource ds = fresh.newDataSource(4);
            Flyway.configure().dataSource(ds).locations("classpath:db/shipped-before-queen-schema")
                    .schemas(Migrations.HISTORY_SCHEMA).createSchemas(true).table(Migrations.HISTORY_TABLE)
                    .placeholderReplacement(false).load().migrate();
            assertThat(checksum(ds, "1")).isEqualTo(earlier("1"));
            assertThat(checksum(ds, "6")).isEqualTo(earlier("6"));
            // Rows as the earlier schema held them: a pushed segment (earlier log_push_v1), a consumer, a DLQ row.
            execute(ds, "SELECT * FROM queen.log_push_v1('" + TENANT + "', 'orders', 'p1', 2, '\\x00'::bytea,"
                    + " decode(repeat('ab', 32), 'hex'))");
            execute(ds, "INSERT INTO queen.log_partitions (queue_id, name) SELECT id, 'never-written' FROM queen.queues");
            execute(ds, "INSERT INTO queen.log_consumers (partition_id, consumer_group, committed, last_activity_at)"
                    + " SELECT id, 'g', 0, '2026-01-01Z' FROM queen.log_partitions WHERE name = 'p1'");
            execute(ds, "INSERT INTO queen.log_dlq (partition_id, consumer_group, \"offset\", error)"
                    + " SELECT id, 'g', 1, 'boom' FROM queen.log_partitions WHERE name = 'p1'");

            Migrations.migrate(ds);

            assertThat(checksum(ds, "1")).isEqualTo(current("1"));
            assertThat(checksum(ds, "6")).isEqualTo(current("6"));
            for (Map.Entry<String, QueenLogFacts.Table> e : QueenLogFacts.TABLES.entrySet()) {
                QueenLogSchemaIT.assertTable(ds, e.getKey(), e.getValue(), false);
            }
            assertThat(Catalog.function(ds, "queen.log_partition_dead_v1(uuid, timestamptz)"))
                    .isEqualTo(QueenLogFacts.DEAD_PARTITION_FUNCTION);
            // The segment's partition got its watermarks from its rows; the never-written one stays empty.
            assertThat(query(ds, "SELECT count(*) FROM queen.log_partitions p JOIN queen.log_segments s ON s.partition_id = p.id"
                    + " WHERE p.oldest_live_at = s.created_at AND p.oldest_txn_at = s.created_at AND p.last_write_at = s.created_at"))
                    .isEqualTo(1);
            assertThat(query(ds, "SELECT count(*) FROM queen.log_partitions WHERE name = 'never-written'"
                    + " AND oldest_live_at IS NULL AND last_write_at = created_at")).isEqualTo(1);
            assertThat(query(ds, "SELECT count(*) FROM queen.log_consumers WHERE lease_acquired_at = '2026-01-01Z'")).isEqualTo(1);
            assertThat(query(ds, "SELECT count(*) FROM queen.log_dlq")).isEqualTo(1);
            assertThat(query(ds, "SELECT dedup_window_seconds FROM queen.queues")).isZero();   // its own value, kept
            // And the converted schema takes the next append with Queen's bookkeeping.
            execute(ds, "SELECT * FROM queen.log_push_v1('" + TENANT + "', 'orders', 'fresh', 1, '\\x00'::bytea,"
                    + " decode(repeat('cd', 16), 'hex'))");
            assertThat(query(ds, "SELECT count(*) FROM queen.log_partitions WHERE name = 'fresh' AND oldest_live_at IS NOT NULL"))
                    .isEqualTo(1);
            // A second migrate finds nothing to do.
            assertThat(Migrations.migrate(ds).migrationsExecuted).isZero();
        }
    }

    @Test
    void aQueenSchemaOlderThanThePinnedVersionStopsTheMigrationAndSaysWhatToDo() throws SQLException {
        try (FreshDatabase fresh = TestPostgres.createDatabase("older_queen")) {
            DataSource ds = fresh.newDataSource(4);
            Migrations.migrate(ds, "36");
            // What a Queen broker from before 2026-08-24 leaves: log_partitions without the retention watermarks.
            execute(ds, "ALTER TABLE queen.log_partitions DROP COLUMN oldest_live_at, DROP COLUMN oldest_txn_at");
            assertThatThrownBy(() -> Migrations.migrate(ds))
                    .hasStackTraceContaining("older than the version queen-timers follows (queen-mq/queen 81010fab")
                    .hasStackTraceContaining("upgrade the Queen broker");
        }
    }

    private static int earlier(String version) {
        return Migrations.SUPERSEDED.stream().filter(s -> s.version().equals(version)).findFirst().orElseThrow().earlier();
    }

    private static int current(String version) {
        return Migrations.SUPERSEDED.stream().filter(s -> s.version().equals(version)).findFirst().orElseThrow().current();
    }

    static int checksum(DataSource ds, String version) throws SQLException {
        return (int) query(ds, "SELECT checksum FROM " + Migrations.HISTORY_SCHEMA + "." + Migrations.HISTORY_TABLE
                + " WHERE version ~ '^[0-9]+$' AND version::int = " + Integer.parseInt(version));
    }

    private static long query(DataSource ds, String sql) throws SQLException {
        try (Connection c = ds.getConnection(); Statement st = c.createStatement(); ResultSet rs = st.executeQuery(sql)) {
            rs.next();
            return rs.getLong(1);
        }
    }

    private static void execute(DataSource ds, String sql) throws SQLException {
        try (Connection c = ds.getConnection(); Statement st = c.createStatement()) {
            st.execute(sql);
        }
    }
}
