package io.queen.timers.sql;

import static org.assertj.core.api.Assertions.assertThat;

import io.queen.timers.testkit.PostgresDatabase;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * db/least-privilege.sql, read back from the catalog (issue 24, point 6; docs/schema-and-roles.md#database-roles): the service
 * roles write no table, every function they may call that writes is SECURITY DEFINER with its search_path
 * pinned, PUBLIC executes none of those, and every migrate re-applies the lists (a stray grant is taken away).
 */
class LeastPrivilegeGrantsIT {

    @RegisterExtension
    static final PostgresDatabase db = PostgresDatabase.initializedWith(Migrations::migrate);

    static final List<String> ROLES = List.of("queen_bridge", "queen_sweeper", "queen_operator");

    @Test
    void noServiceRoleMayWriteATable() throws SQLException {
        for (String role : ROLES) {
            assertThat(strings("SELECT c.oid::regclass::text FROM pg_class c WHERE c.relnamespace IN ('queen'::regnamespace,"
                    + " 'queen_timers'::regnamespace) AND c.relkind IN ('r', 'p', 'v')"
                    + " AND has_table_privilege('" + role + "', c.oid, 'INSERT, UPDATE, DELETE, TRUNCATE')")).as(role).isEmpty();
            assertThat(strings("SELECT 'create' WHERE has_schema_privilege('" + role + "', 'queen', 'CREATE')")).as(role).isEmpty();
        }
    }

    @Test
    void everySecurityDefinerFunctionPinsItsSearchPathAndPublicExecutesNone() throws SQLException {
        assertThat(strings("SELECT p.oid::regprocedure::text FROM pg_proc p WHERE p.pronamespace = 'queen'::regnamespace AND p.prosecdef"))
                .contains("queen.bridge_apply_v4(text,jsonb,jsonb,jsonb,jsonb,interval)", "queen.timer_audit_delete_v3(uuid,uuid,bigint[])",
                        "queen.timer_audit_lease_v1(uuid)")
                .hasSizeGreaterThan(10);
        assertThat(strings("SELECT p.oid::regprocedure::text FROM pg_proc p WHERE p.pronamespace = 'queen'::regnamespace AND p.prosecdef"
                + " AND NOT coalesce('search_path=pg_catalog, queen, pg_temp' = ANY (p.proconfig), false)")).isEmpty();
        assertThat(strings("SELECT p.oid::regprocedure::text FROM pg_proc p WHERE p.pronamespace = 'queen'::regnamespace AND p.prosecdef"
                + " AND (p.proacl IS NULL OR EXISTS (SELECT 1 FROM aclexplode(p.proacl) a WHERE a.grantee = 0))")).isEmpty();
    }

    @Test
    void whatTheRolesMayCallIsTheirDefinerFunctionsAndReadersOnly() throws SQLException {
        // a function that is not SECURITY DEFINER runs with the caller's rights: harmless, but listed, so a new one is a decision
        for (String role : ROLES) {
            assertThat(strings("SELECT p.proname::text FROM pg_proc p WHERE p.pronamespace = 'queen'::regnamespace AND NOT p.prosecdef"
                    + " AND has_function_privilege('" + role + "', p.oid, 'EXECUTE')")).as(role)
                    .isSubsetOf("timer_trace_fields_v1", "log_push_v1", "log_provision_v1", "log_lock_partitions_v1", "log_append_v1");
        }
        assertThat(strings("SELECT p.proname::text FROM pg_proc p WHERE p.pronamespace = 'queen'::regnamespace"
                + " AND has_function_privilege('queen_bridge', p.oid, 'EXECUTE') AND p.prosecdef ORDER BY 1"))
                .containsExactly("bridge_apply_v4", "bridge_lock_v2", "bridge_offset_start_v1", "bridge_sealed_queues_set_v1",
                        "bridge_topics_register_v1", "timer_audit_delete_v3", "timer_audit_lease_release_v1", "timer_audit_lease_v1",
                        "timer_audit_read_v3", "timer_tenant_pending_v1", "timer_tenant_series_v1");
        assertThat(strings("SELECT p.proname::text FROM pg_proc p WHERE p.pronamespace = 'queen'::regnamespace"
                + " AND has_function_privilege('queen_operator', p.oid, 'EXECUTE') AND p.prosecdef ORDER BY 1"))
                .containsExactly("bridge_offset_set_v2", "timer_dead_letter_remove_v1", "timer_dead_letters_v1", "timer_list_v2",
                        "timer_peek_v2", "timer_series_v1");
        assertThat(strings("SELECT p.proname::text FROM pg_proc p WHERE p.pronamespace = 'queen'::regnamespace"
                + " AND has_function_privilege('queen_sweeper', p.oid, 'EXECUTE') AND p.prosecdef AND p.proname LIKE 'bridge%'")).isEmpty();
    }

    @Test
    void onlyTheOwnerMayMoveDueTimes() throws SQLException {
        // the tests' clock (R__timer_advance.sql) makes timers fire early: no service role and not PUBLIC
        for (String role : ROLES) {
            assertThat(strings("SELECT 'yes' WHERE has_function_privilege('" + role + "',"
                    + " 'queen.timer_advance_v1(uuid, text, interval)', 'EXECUTE')")).as(role).isEmpty();
        }
        assertThat(strings("SELECT 'public' FROM pg_proc p, aclexplode(p.proacl) a WHERE p.oid ="
                + " 'queen.timer_advance_v1(uuid, text, interval)'::regprocedure AND a.grantee = 0")).isEmpty();
        assertThat(strings("SELECT p.proacl IS NOT NULL FROM pg_proc p WHERE p.oid = 'queen.timer_advance_v1(uuid, text, interval)'::regprocedure"))
                .as("an explicit ACL, PUBLIC's default EXECUTE revoked").containsExactly("t");
    }

    @Test
    void onlyTheOwnerMayBindABridgeGroup() throws SQLException {
        // a group's login and its topics' tenants are the owner's to bind (queen-timers migrate), never a service's
        for (String role : ROLES) {
            assertThat(strings("SELECT 'yes' WHERE has_function_privilege('" + role + "',"
                    + " 'queen.bridge_group_bind_v1(text, text, jsonb)', 'EXECUTE')")).as(role).isEmpty();
        }
        assertThat(strings("SELECT 'public' FROM pg_proc p, aclexplode(p.proacl) a WHERE p.oid ="
                + " 'queen.bridge_group_bind_v1(text, text, jsonb)'::regprocedure AND a.grantee = 0")).isEmpty();
    }

    @Test
    void onlyTheRelaysRolesMayTakeTheRelayLease() throws SQLException {
        // the relay's exclusivity is a lease a login of another role can neither take nor hold (an advisory lock is
        // open to every login), and no role may write its row directly
        assertThat(strings("SELECT r.role FROM (VALUES ('queen_bridge'), ('queen_sweeper'), ('queen_operator')) AS r(role)"
                + " WHERE has_function_privilege(r.role, 'queen.timer_audit_lease_v1(uuid)', 'EXECUTE') ORDER BY 1"))
                .containsExactly("queen_bridge", "queen_sweeper");
        for (String role : ROLES) {
            assertThat(strings("SELECT 'yes' WHERE has_table_privilege('" + role + "', 'queen.timer_audit_relay_lease', 'SELECT, UPDATE')"))
                    .as(role).isEmpty();
        }
        assertThat(strings("SELECT 'public' FROM pg_proc p, aclexplode(p.proacl) a WHERE p.oid ="
                + " 'queen.timer_audit_lease_v1(uuid)'::regprocedure AND a.grantee = 0")).isEmpty();
    }

    @Test
    void everyMigrateReappliesTheListsAndTakesAStrayGrantAway() throws SQLException {
        execute("GRANT DELETE ON queen.timer_audit_outbox TO queen_bridge");
        execute("GRANT EXECUTE ON FUNCTION queen.json_rows_v1(text, jsonb, text[]) TO PUBLIC");
        assertThat(strings("SELECT 'yes' WHERE has_table_privilege('queen_bridge', 'queen.timer_audit_outbox', 'DELETE')")).hasSize(1);
        Migrations.migrate(db.dataSource());
        assertThat(strings("SELECT 'yes' WHERE has_table_privilege('queen_bridge', 'queen.timer_audit_outbox', 'DELETE')")).isEmpty();
        assertThat(strings("SELECT 'yes' WHERE has_function_privilege('queen_bridge', 'queen.json_rows_v1(text, jsonb, text[])', 'EXECUTE')"))
                .isEmpty();
        assertThat(strings("SELECT 'yes' WHERE has_table_privilege('queen_bridge', 'queen.timer_audit_outbox', 'SELECT')")).hasSize(1);
    }

    private static void execute(String sql) throws SQLException {
        try (Connection c = db.dataSource().getConnection(); Statement st = c.createStatement()) {
            st.execute(sql);
        }
    }

    private static List<String> strings(String sql) throws SQLException {
        List<String> out = new ArrayList<>();
        try (Connection c = db.dataSource().getConnection(); Statement st = c.createStatement(); ResultSet rs = st.executeQuery(sql)) {
            while (rs.next()) {
                out.add(rs.getString(1));
            }
        }
        return out;
    }
}
