package io.queen.timers.sql;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.queen.timers.testkit.PostgresDatabase;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The stored functions that take rows with named fields (bridge_apply_v4, timer_fire_v3, timer_fail_v2 /
 * timer_release_v2 / timer_dead_letter_v3), called directly with JSON
 * written by hand: every named field lands where its name says, and a row that lacks a field (left out,
 * or spelt wrong) fails the whole call loudly instead of reading as NULL
 * (docs/decisions.md#rows-not-parallel-arrays).
 */
class NamedRowsIT {

    @RegisterExtension
    static final PostgresDatabase db = PostgresDatabase.initializedWith(Migrations::migrate);

    private static final String TENANT = "00000000-0000-0000-0000-000000000001";
    private static final String APPLY = "SELECT queen.bridge_apply_v4(?, ?::jsonb, ?::jsonb, ?::jsonb, ?::jsonb, '30 seconds'::interval)";
    private static final String FIRE = "SELECT seg, verdict, base_offset FROM queen.timer_fire_v3(?::jsonb, ?, ?) ORDER BY seg";

    private static String upsert(String key, String timerKeyField, String txn) {
        return """
                {"tenant_id": "%s", "queue": "named.q", "%s": "%s", "partition": "p-1", "deliver_at_ms": 1893456000000,
                 "txn": %s, "message_id": "%s", "payload": "aGVsbG8=", "payload_zstd": false, "encrypted": true,
                 "producer_sub": "svc-a", "trace_context": "%s"}"""
                .formatted(TENANT, timerKeyField, key, txn == null ? "null" : "\"" + txn + "\"", MessageIds.v7(),
                        java.util.Base64.getEncoder().encodeToString(new byte[24]));
    }

    private static String event(String key) {
        return """
                {"tenant_id": "%s", "kafka_key": "named.q/%s", "type": "scheduled", "event": {"queue": "named.q", "timerKey": "%s"}}"""
                .formatted(TENANT, key, key);
    }

    private static int apply(String topic, String upserts, String events) throws SQLException {
        try (Connection c = db.dataSource().getConnection(); PreparedStatement st = c.prepareStatement(APPLY)) {
            st.setString(1, "named-group");
            st.setString(2, "[{\"topic\": \"" + topic + "\", \"partition\": 0, \"expected\": null, \"next\": 1}]");
            st.setString(3, upserts);
            st.setString(4, "[]");
            st.setString(5, events);
            try (ResultSet rs = st.executeQuery()) {
                rs.next();
                return rs.getInt(1);
            }
        }
    }

    @Test
    void applyWritesEveryNamedFieldWhereItsNameSays() throws SQLException {
        assertThat(apply("named.t1", "[" + upsert("k-1", "timer_key", "txn-1") + "]", "[" + event("k-1") + "]")).isZero();

        assertThat(text("SELECT concat_ws('|', \"partition\", txn, convert_from(payload, 'UTF8'), payload_zstd, encrypted, producer_sub,"
                + " octet_length(trace_context), deliver_at = to_timestamp(1893456000)) FROM queen.log_timers WHERE timer_key = 'k-1'"))
                .isEqualTo("p-1|txn-1|hello|f|t|svc-a|24|t");
        assertThat(text("SELECT concat_ws('|', kafka_key, type, event->>'timerKey') FROM queen.timer_audit_outbox WHERE kafka_key = 'named.q/k-1'"))
                .isEqualTo("named.q/k-1|scheduled|k-1");
        assertThat(text("SELECT next_offset::text FROM queen.bridge_offsets WHERE group_id = 'named-group' AND topic = 'named.t1'"))
                .isEqualTo("1");
    }

    @Test
    void aMisspeltFieldFailsTheWholeCallNamingTheRowAndTheField() throws SQLException {
        String rows = "[" + upsert("k-2", "timer_key", "txn-2") + ", " + upsert("k-3", "timerKey", "txn-3") + "]";

        assertThatThrownBy(() -> apply("named.t2", rows, "[]"))
                .isInstanceOf(SQLException.class)
                .satisfies(e -> assertThat(((SQLException) e).getSQLState()).isEqualTo("22023"))
                .hasMessageContaining("bridge_apply_v4 upserts: row 2 (1-based) lacks timer_key");
        assertThat(text("SELECT count(*)::text FROM queen.log_timers WHERE timer_key IN ('k-2', 'k-3')")).isEqualTo("0");
    }

    @Test
    void aFieldLeftNullWhereTheColumnNeedsAValueFailsLoudly() {
        assertThatThrownBy(() -> apply("named.t3", "[" + upsert("k-4", "timer_key", null) + "]", "[]"))
                .isInstanceOf(SQLException.class)
                .satisfies(e -> assertThat(((SQLException) e).getSQLState()).isEqualTo("23502")) // not_null_violation
                .hasMessageContaining("txn");
    }

    @Test
    void anArrayIsRequiredNotAnObject() {
        assertThatThrownBy(() -> apply("named.t4", upsert("k-5", "timer_key", "txn-5"), "[]"))
                .isInstanceOf(SQLException.class)
                .hasMessageContaining("bridge_apply_v4 upserts: expected a JSON array of rows, got object");
    }

    @Test
    void fireTakesSegmentsAsNamedRowsAndSaysFiredOrStale() throws SQLException {
        UUID token = UUID.randomUUID();
        claimed("fire-1", "dest.a", token);
        claimed("fire-2", "dest.b", UUID.randomUUID()); // claimed by somebody else: its segment is stale
        String segments = """
                [{"tenant_id": "%s", "queue": "dest.a", "partition": "Default", "blob_length": 3,
                  "timers": [{"timer_key": "fire-1", "claim_token": "%s"}]},
                 {"tenant_id": "%s", "queue": "dest.b", "partition": "Default", "blob_length": 2,
                  "timers": [{"timer_key": "fire-2", "claim_token": "%s"}]}]"""
                .formatted(TENANT, token, TENANT, token);

        List<String> verdicts = fire(segments, new byte[] {1, 2, 3, 4, 5}, new byte[32]);

        assertThat(verdicts).containsExactly("1 fired 0", "2 stale null");
        assertThat(text("SELECT string_agg(timer_key, ',') FROM queen.log_timers WHERE timer_key LIKE 'fire-%'")).isEqualTo("fire-2");
        assertThat(text("SELECT encode(s.blob, 'hex') FROM queen.log_segments s JOIN queen.log_partitions p ON p.id = s.partition_id"
                + " JOIN queen.queues q ON q.id = p.queue_id WHERE q.name = 'dest.a'")).isEqualTo("010203");
        assertThat(text("SELECT (fired[1]).timer_key FROM queen.timer_audit_outbox WHERE type = 'fired' AND event->>'queue' = 'dest.a'"))
                .isEqualTo("fire-1");
    }

    @Test
    void aTimerWithoutItsClaimTokenFieldFailsTheFire() {
        String segments = """
                [{"tenant_id": "%s", "queue": "dest.c", "partition": "Default", "blob_length": 1,
                  "timers": [{"timer_key": "fire-3", "token": "%s"}]}]""".formatted(TENANT, UUID.randomUUID());

        assertThatThrownBy(() -> fire(segments, new byte[] {1}, new byte[16]))
                .isInstanceOf(SQLException.class)
                .satisfies(e -> assertThat(((SQLException) e).getSQLState()).isEqualTo("22023"))
                .hasMessageContaining("segment 1 (1-based) needs \"timers\"");
    }

    @Test
    void blobsThatDoNotAddUpFailTheFire() {
        String segments = """
                [{"tenant_id": "%s", "queue": "dest.d", "partition": "Default", "blob_length": 4,
                  "timers": [{"timer_key": "fire-4", "claim_token": "%s"}]}]""".formatted(TENANT, UUID.randomUUID());

        assertThatThrownBy(() -> fire(segments, new byte[] {1, 2, 3}, new byte[16]))
                .isInstanceOf(SQLException.class)
                .hasMessageContaining("blobs or hashes do not match the segments");
    }

    @Test
    void failAndDeadLetterTakeTheirTimersAsNamedRows() throws SQLException {
        UUID token = UUID.randomUUID();
        claimed("poison-1", "dest.e", token);
        String held = "[{\"tenant_id\": \"%s\", \"queue\": \"dest.e\", \"timer_key\": \"poison-1\", \"claim_token\": \"%s\"}]"
                .formatted(TENANT, token);

        assertThat(text("SELECT concat_ws('|', timer_key, attempts, exhausted) FROM queen.timer_fail_v2('" + held
                + "'::jsonb, 'boom', false, '1 second', '0 seconds', '0 seconds', 1)")).isEqualTo("poison-1|1|t");
        // the exhausting fail left the claim with us; the dead-letter takes it, and keeps the ROW's payload ({}),
        // not the one a caller slips in (issue 37, point 5)
        String dead = ("[{\"tenant_id\": \"%s\", \"queue\": \"dest.e\", \"timer_key\": \"poison-1\", \"claim_token\": \"%s\","
                + " \"payload\": \"eyJhIjogMX0=\"}]").formatted(TENANT, token);
        assertThat(text("SELECT timer_key FROM queen.timer_dead_letter_v3('" + dead + "'::jsonb, 1)")).isEqualTo("poison-1");
        assertThat(text("SELECT payload::text FROM queen.log_dlq WHERE transaction_id = 'txn-poison-1'")).isEqualTo("{}");
    }

    @Test
    void releaseWithoutTheClaimTokenFieldFailsLoudly() throws SQLException {
        UUID token = UUID.randomUUID();
        claimed("held-1", "dest.f", token);
        String misspelt = "[{\"tenant_id\": \"%s\", \"queue\": \"dest.f\", \"timer_key\": \"held-1\", \"claimToken\": \"%s\"}]"
                .formatted(TENANT, token);

        assertThatThrownBy(() -> text("SELECT queen.timer_release_v2('" + misspelt + "'::jsonb)::text"))
                .isInstanceOf(SQLException.class)
                .hasMessageContaining("timer_release_v2 timers: row 1 (1-based) lacks claim_token");
        assertThat(text("SELECT (claim_token IS NOT NULL)::text FROM queen.log_timers WHERE timer_key = 'held-1'")).isEqualTo("true");
    }

    private static void claimed(String key, String queue, UUID token) throws SQLException {
        try (Connection c = db.dataSource().getConnection(); PreparedStatement st = c.prepareStatement("""
                INSERT INTO queen.log_timers (queue, timer_key, deliver_at, txn, message_id, payload, claim_token, claimed_until)
                VALUES (?, ?, now(), ?, queen.timer_uuidv7_v1(now()), '\\x7b7d'::bytea, ?, now() + interval '1 minute')""")) {
            st.setString(1, queue);
            st.setString(2, key);
            st.setString(3, "txn-" + key);
            st.setObject(4, token);
            st.executeUpdate();
        }
    }

    private static List<String> fire(String segments, byte[] blobs, byte[] hashes) throws SQLException {
        List<String> out = new ArrayList<>();
        try (Connection c = db.dataSource().getConnection(); PreparedStatement st = c.prepareStatement(FIRE)) {
            st.setString(1, segments);
            st.setBytes(2, blobs);
            st.setBytes(3, hashes);
            try (ResultSet rs = st.executeQuery()) {
                while (rs.next()) {
                    out.add(rs.getInt(1) + " " + rs.getString(2) + " " + rs.getString(3));
                }
            }
        }
        return out;
    }

    private static String text(String sql) throws SQLException {
        try (Connection c = db.dataSource().getConnection(); Statement st = c.createStatement(); ResultSet rs = st.executeQuery(sql)) {
            rs.next();
            return rs.getString(1);
        }
    }
}
