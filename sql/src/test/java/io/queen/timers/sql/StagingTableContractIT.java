package io.queen.timers.sql;

import static org.assertj.core.api.Assertions.assertThat;

import io.queen.timers.testkit.PostgresDatabase;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.List;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * queen.log_timers is the contracted table, exactly (docs/decisions.md#the-staging-table-is-keyed-by-names).
 * The reference is the contract's own CREATE TABLE (test resource staging-table-contract.sql), created in
 * a scratch schema; the comparison is between the two catalogs, so a changed type, default, collation,
 * generated expression, key or index in V002 fails here.
 */
class StagingTableContractIT {

    @RegisterExtension
    static final PostgresDatabase db = PostgresDatabase.initializedWith(Migrations::migrate);

    @BeforeAll
    static void createContractReference() throws Exception {
        try (Connection c = db.dataSource().getConnection(); Statement st = c.createStatement()) {
            st.execute("CREATE SCHEMA contract_ref");
            st.execute(resource("/staging-table-contract.sql"));
        }
    }

    @Test
    void columnsMatchTheContractOneByOne() throws SQLException {
        List<Catalog.Column> ours = Catalog.columns(db.dataSource(), "queen.log_timers");
        List<Catalog.Column> contract = Catalog.columns(db.dataSource(), "contract_ref.log_timers");
        // The contract's 19 columns exactly, then V002's columns beyond it: trace_context (nullable, no default:
        // docs/tracing.md#trace-context), payload_bytes (nullable, no default: the raw length the sweeper's byte bound
        // counts), deaths and held_alone (not null with a constant default: a catalog-only ADD COLUMN; how a death is
        // counted), recurrence (nullable, no default: a recurring timer's rule, docs/recurring.md).
        assertThat(ours).hasSize(24);
        assertThat(ours.subList(0, 19)).containsExactlyElementsOf(contract);
        assertThat(ours.get(19)).isEqualTo(new Catalog.Column("trace_context", "bytea", false, "", "", ""));
        assertThat(ours.get(20)).isEqualTo(new Catalog.Column("payload_bytes", "integer", false, "", "", ""));
        assertThat(ours.get(21)).isEqualTo(new Catalog.Column("deaths", "smallint", true, "", "", "0"));
        assertThat(ours.get(22)).isEqualTo(new Catalog.Column("held_alone", "boolean", true, "", "", "false"));
        assertThat(ours.get(23)).isEqualTo(new Catalog.Column("recurrence", "jsonb", false, "", "", ""));
    }

    @Test
    void keyColumnsSortBytewiseAndGeneratedColumnsAreStored() throws SQLException {
        List<Catalog.Column> cols = Catalog.columns(db.dataSource(), "queen.log_timers");
        assertThat(column(cols, "queue").collation()).isEqualTo("C");
        assertThat(column(cols, "timer_key").collation()).isEqualTo("C");
        assertThat(column(cols, "shard").generated()).isEqualTo("s");
        assertThat(column(cols, "shard").expression()).contains("hashtextextended(timer_key").contains("63");
        assertThat(column(cols, "visible_at").generated()).isEqualTo("s");
        assertThat(column(cols, "visible_at").expression()).contains("claimed_until").contains("deliver_at");
        assertThat(column(cols, "tenant_id").expression()).contains("00000000-0000-0000-0000-000000000001");
        assertThat(cols).noneMatch(c -> c.name().equals("id") || c.name().contains("queue_id") || c.name().contains("partition_id"));
    }

    /**
     * The contract's two indexes, plus two beyond it (V002 says why and what each costs): the partial (tenant_id, visible_at),
     * the per-tenant slices of the claim and the skip scan over tenants (one tenant's flood must not starve the others),
     * and the partial (tenant_id) over recurring rows only, the dashboard's count of series (one-shot rows never enter
     * it). Any other index fails here.
     */
    @Test
    void primaryKeyAndTheVisibleIndexAreTheOnlyIndexesBesidesTheTenantFairnessAndRecurringOnes() throws SQLException {
        List<Catalog.Index> all = Catalog.indexes(db.dataSource(), "queen.log_timers");
        assertThat(all).hasSize(4);
        assertThat(all).filteredOn(i -> i.name().equals("queen.idx_log_timers_tenant_visible")).singleElement()
                .satisfies(i -> assertThat(i.definition()).endsWith("USING btree (tenant_id, visible_at) WHERE (claim_token IS NULL)"));
        assertThat(all).filteredOn(i -> i.name().equals("queen.idx_log_timers_recurring")).singleElement()
                .satisfies(i -> assertThat(i.definition()).endsWith("USING btree (tenant_id) WHERE (recurrence IS NOT NULL)"));
        List<Catalog.Index> ours = all.stream().filter(i -> !i.name().equals("queen.idx_log_timers_tenant_visible")
                && !i.name().equals("queen.idx_log_timers_recurring")).toList();
        Catalog.Index pk = ours.stream().filter(Catalog.Index::primary).findFirst().orElseThrow();
        assertThat(pk.definition()).endsWith("USING btree (tenant_id, queue, timer_key)");
        Catalog.Index visible = ours.stream().filter(i -> !i.primary()).findFirst().orElseThrow();
        assertThat(visible.name()).isEqualTo("queen.idx_log_timers_visible");
        assertThat(visible.definition())
                .isEqualTo("CREATE INDEX idx_log_timers_visible ON queen.log_timers USING btree (shard, visible_at)");
        List<Catalog.Index> contract = Catalog.indexes(db.dataSource(), "contract_ref.log_timers");
        assertThat(contract.stream().map(i -> i.definition().replaceAll(".*USING", "")).sorted().toList())
                .isEqualTo(ours.stream().map(i -> i.definition().replaceAll(".*USING", "")).sorted().toList());
    }

    private static Catalog.Column column(List<Catalog.Column> cols, String name) {
        return cols.stream().filter(c -> c.name().equals(name)).findFirst().orElseThrow();
    }

    private static String resource(String name) throws IOException {
        try (InputStream in = StagingTableContractIT.class.getResourceAsStream(name)) {
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        }
    }
}
