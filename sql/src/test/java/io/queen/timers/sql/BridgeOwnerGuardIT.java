package io.queen.timers.sql;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.queen.timers.testkit.PostgresDatabase;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Issue 37, point 3: the bridge decides ownership (not_owner) on the owner bridge_lock_v2 returned; bridge_apply_v4
 * re-checks that view against the table in the same transaction, so a key another bridge staged after the lock
 * (FOR UPDATE locks no missing row) is never written over: the call fails with 40001 and the bridge retries the batch.
 */
class BridgeOwnerGuardIT {

    @RegisterExtension
    static final PostgresDatabase db = PostgresDatabase.initializedWith(Migrations::migrate);

    private static final String TENANT = "00000000-0000-0000-0000-000000000001";

    @Test
    void aRowDecidedOnAStaleOwnerViewFailsTheCallWith40001AndTheStagedTimerStays() throws SQLException {
        int[] offset = {0};
        apply(offset, upsert("k", "svc-a", null, null), "[]");   // A stages k, no check (as a bridge of the release before)

        // B's schedule was folded while k looked absent: k is A's now
        assertThatThrownBy(() -> apply(offset, upsert("k", "svc-b", false, null), "[]"))
                .isInstanceOfSatisfying(SQLException.class, e -> assertThat(e.getSQLState()).isEqualTo("40001"));
        // a cancel folded on k as B's
        assertThatThrownBy(() -> apply(offset, "[]", delete("k", true, "svc-b")))
                .isInstanceOfSatisfying(SQLException.class, e -> assertThat(e.getSQLState()).isEqualTo("40001"));
        assertThat(text("SELECT producer_sub || ' ' || txn FROM queen.log_timers WHERE timer_key = 'k'")).isEqualTo("svc-a txn-svc-a");

        // views that match the table pass: A reschedules its own k, then cancels it
        apply(offset, upsert("k", "svc-a", true, "svc-a"), "[]");
        apply(offset, "[]", delete("k", true, "svc-a"));
        assertThat(text("SELECT count(*)::text FROM queen.log_timers WHERE timer_key = 'k'")).isEqualTo("0");
    }

    private static String upsert(String key, String sub, Boolean ownerStaged, String ownerSub) {
        return """
                [{"tenant_id": "%s", "queue": "guard.q", "timer_key": "%s", "partition": "Default", "deliver_at_ms": 1893456000000,
                  "txn": "txn-%s", "message_id": "%s", "payload": "e30=", "payload_zstd": false, "encrypted": false,
                  "producer_sub": "%s", "trace_context": null, "owner_staged": %s, "owner_sub": %s}]"""
                .formatted(TENANT, key, sub, MessageIds.v7(), sub, ownerStaged, ownerSub == null ? "null" : "\"" + ownerSub + "\"");
    }

    private static String delete(String key, boolean ownerStaged, String ownerSub) {
        return """
                [{"tenant_id": "%s", "queue": "guard.q", "timer_key": "%s", "stop_series": false, "owner_staged": %s, "owner_sub": "%s"}]"""
                .formatted(TENANT, key, ownerStaged, ownerSub);
    }

    private static void apply(int[] offset, String upserts, String deletes) throws SQLException {
        try (Connection c = db.dataSource().getConnection(); PreparedStatement st = c.prepareStatement(
                "SELECT queen.bridge_apply_v4('guard', ?::jsonb, ?::jsonb, ?::jsonb, '[]', '1 second')")) {
            st.setString(1, "[{\"topic\": \"t\", \"partition\": 0, \"expected\": " + (offset[0] == 0 ? "null" : offset[0]) + ", \"next\": "
                    + (offset[0] + 1) + "}]");
            st.setString(2, upserts);
            st.setString(3, deletes);
            try (ResultSet rs = st.executeQuery()) {
                rs.next();
                assertThat(rs.getInt(1)).as("partitions whose offset did not advance").isZero();
            }
            offset[0]++;
        }
    }

    private static String text(String sql) throws SQLException {
        try (Connection c = db.dataSource().getConnection(); Statement st = c.createStatement(); ResultSet rs = st.executeQuery(sql)) {
            rs.next();
            return rs.getString(1);
        }
    }
}
