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
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import javax.sql.DataSource;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * A database migrated from scratch holds Queen's log tables exactly (QueenLogFacts: columns in order with
 * types, nullability and defaults; indexes; constraints; storage settings), Queen's signature of
 * log_partition_dead_v1 with its parameter names, and no function of ours under a name Queen uses.
 */
class QueenLogSchemaIT {

    @RegisterExtension
    static final PostgresDatabase db = PostgresDatabase.initializedWith(Migrations::migrate);

    @Test
    void everyLogTableIsQueensToTheColumnIndexConstraintAndStorageSetting() throws SQLException {
        for (Map.Entry<String, QueenLogFacts.Table> e : QueenLogFacts.TABLES.entrySet()) {
            assertTable(db.dataSource(), e.getKey(), e.getValue(), true);
        }
    }

    @Test
    void theDeadPartitionFunctionHasQueensSignatureAndParameterNames() throws SQLException {
        assertThat(Catalog.function(db.dataSource(), "queen.log_partition_dead_v1(uuid, timestamptz)"))
                .isEqualTo(QueenLogFacts.DEAD_PARTITION_FUNCTION);
    }

    @Test
    void noFunctionOfOursCarriesANameQueenUses() throws SQLException {
        List<String> ours = new ArrayList<>();
        try (Connection c = db.dataSource().getConnection(); Statement st = c.createStatement();
                ResultSet rs = st.executeQuery("SELECT p.proname FROM pg_proc p WHERE p.pronamespace = 'queen'::regnamespace")) {
            while (rs.next()) {
                ours.add(rs.getString(1));
            }
        }
        assertThat(ours).contains("log_append_v1", "log_partition_dead_v1");
        assertThat(ours).doesNotContainAnyElementsOf(QueenLogFacts.QUEEN_FUNCTION_NAMES);
    }

    @Test
    void whenQueenWasFirstNothingOfItsLogIsAlteredOrReplaced() throws SQLException {
        try (FreshDatabase fresh = TestPostgres.createDatabase("queen_made")) {
            DataSource ds = fresh.newDataSource(4);
            // Queen's log objects without our history: what a Queen broker that booted first leaves. Marks
            // on them show whether anything of ours touched them.
            Migrations.migrate(ds, "1");
            execute(ds, "DROP SCHEMA " + Migrations.HISTORY_SCHEMA + " CASCADE");
            execute(ds, "ALTER TABLE queen.log_partitions SET (fillfactor = 55)");
            execute(ds, "ALTER TABLE queen.log_segments ALTER COLUMN blob SET STORAGE EXTENDED");
            execute(ds, "CREATE OR REPLACE FUNCTION queen.log_partition_dead_v1(p_pid uuid, p_cutoff timestamptz) RETURNS boolean"
                    + " LANGUAGE sql STABLE AS $$ SELECT /* queen-made */ FALSE $$");

            Migrations.migrate(ds);

            assertThat(Catalog.storageParameters(ds, "queen.log_partitions")).contains("fillfactor=55");
            assertThat(Catalog.storageOverrides(ds, "queen.log_segments")).isEmpty();
            assertThat(Catalog.indexes(ds, "queen.log_dlq")).hasSize(2);
            try (Connection c = ds.getConnection(); Statement st = c.createStatement(); ResultSet rs = st.executeQuery(
                    "SELECT prosrc FROM pg_proc WHERE oid = 'queen.log_partition_dead_v1(uuid, timestamptz)'::regprocedure")) {
                rs.next();
                assertThat(rs.getString(1)).contains("queen-made");
            }
        }
    }

    @Test
    void aQueenSchemaOlderThanThePinnedVersionStopsTheMigrationAndSaysWhatToDo() throws SQLException {
        try (FreshDatabase fresh = TestPostgres.createDatabase("older_queen")) {
            DataSource ds = fresh.newDataSource(4);
            // What a Queen broker older than the pinned version leaves, booted first: log_partitions without the
            // retention watermarks, and no history of ours.
            Migrations.migrate(ds, "1");
            execute(ds, "DROP SCHEMA " + Migrations.HISTORY_SCHEMA + " CASCADE");
            execute(ds, "ALTER TABLE queen.log_partitions DROP COLUMN oldest_live_at, DROP COLUMN oldest_txn_at");
            assertThatThrownBy(() -> Migrations.migrate(ds))
                    .hasStackTraceContaining("older than the version queen-timers follows (queen-mq/queen 81010fab")
                    .hasStackTraceContaining("upgrade the Queen broker");
            assertThat(Catalog.columns(ds, "queen.log_partitions")).noneMatch(c -> c.name().startsWith("oldest_"));
        }
    }

    private static void execute(DataSource ds, String sql) throws SQLException {
        try (Connection c = ds.getConnection(); Statement st = c.createStatement()) {
            st.execute(sql);
        }
    }

    /** Column order is compared only when {@code ordered}: a converted table keeps its own order. */
    static void assertTable(DataSource ds, String table, QueenLogFacts.Table facts, boolean ordered) throws SQLException {
        List<String> columns = Catalog.columns(ds, table).stream().map(QueenLogFacts::describe).toList();
        if (ordered) {
            assertThat(columns).as(table + " columns").containsExactlyElementsOf(facts.columns());
        } else {
            assertThat(columns).as(table + " columns").containsExactlyInAnyOrderElementsOf(facts.columns());
        }
        assertThat(Catalog.indexes(ds, table).stream().map(Catalog.Index::definition).sorted().toList())
                .as(table + " indexes").containsExactlyElementsOf(facts.indexes());
        assertThat(Catalog.constraints(ds, table)).as(table + " constraints").containsExactlyElementsOf(facts.constraints());
        assertThat(Catalog.storageParameters(ds, table)).as(table + " storage parameters")
                .containsExactlyElementsOf(facts.storageParameters());
        assertThat(Catalog.storageOverrides(ds, table)).as(table + " column storage").containsExactlyElementsOf(facts.storageOverrides());
    }
}
