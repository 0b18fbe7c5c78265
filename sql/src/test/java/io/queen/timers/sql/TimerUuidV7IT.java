package io.queen.timers.sql;

import static org.assertj.core.api.Assertions.assertThat;

import io.queen.timers.testkit.PostgresDatabase;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.UUID;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * queen.timer_uuidv7_v1 (R__timer_cadence.sql, issue 43): the UUIDv7 a successor occurrence is staged with,
 * since PostgreSQL before 18 has no uuidv7(). Read back with java.util.UUID, as the log's readers read it:
 * version 7, variant 10 (RFC 9562), the given instant's Unix milliseconds in the top 48 bits, the rest random.
 */
class TimerUuidV7IT {

    @RegisterExtension
    static final PostgresDatabase db = PostgresDatabase.initializedWith(Migrations::migrate);

    private static final String TENANT = "00000000-0000-0000-0000-000000000001";

    @Test
    void versionSevenVariantTenAndTheInstantsMillisecondsFlooredNeverAfterIt() throws SQLException {
        // a sub-millisecond instant: the id's time is its millisecond, never the next (an id is never later than its staging)
        for (String at : List.of("2026-12-05T05:53:07.123999Z", "2026-12-05T05:53:07.124000Z", "1970-01-01T00:00:00.000001Z",
                "2100-01-01T00:00:00Z")) {
            UUID id = uuid("SELECT queen.timer_uuidv7_v1('" + at + "'::timestamptz)");
            assertThat(id.version()).as(at).isEqualTo(7);
            assertThat(id.variant()).as(at).isEqualTo(2);   // java.util.UUID's 2 is the RFC's variant 10
            assertThat(id.getMostSignificantBits() >>> 16).as(at).isEqualTo(Instant.parse(at).toEpochMilli());
        }
        assertThat(strings("SELECT queen.timer_uuidv7_v1(NULL)::text")).containsExactly((String) null);
    }

    @Test
    void theOtherBitsAreRandomSoIdsOfOneMillisecondDiffer() throws SQLException {
        List<String> ids = strings("SELECT queen.timer_uuidv7_v1('2026-12-05T05:53:07.123Z')::text FROM generate_series(1, 2000)");
        Set<Long> randA = new HashSet<>();
        Set<Long> randB = new HashSet<>();
        for (String s : ids) {
            UUID id = UUID.fromString(s);
            assertThat(id.version()).isEqualTo(7);
            assertThat(id.variant()).isEqualTo(2);
            assertThat(id.getMostSignificantBits() >>> 16).isEqualTo(Instant.parse("2026-12-05T05:53:07.123Z").toEpochMilli());
            randA.add(id.getMostSignificantBits() & 0xFFF);
            randB.add(id.getLeastSignificantBits() & 0x3FFF_FFFF_FFFF_FFFFL);
        }
        assertThat(new HashSet<>(ids)).hasSize(2000);
        assertThat(randB).hasSize(2000);
        assertThat(randA).hasSizeGreaterThan(1000);   // 12 bits: 2,000 draws from 4,096 values repeat some, never most
    }

    @Test
    void aSuccessorIsStagedWithAUuidV7OfTheStagingTransactionsNow() throws SQLException {
        try (Connection c = db.dataSource().getConnection(); Statement st = c.createStatement()) {
            st.execute("DELETE FROM queen.log_timers");
            st.execute("INSERT INTO queen.log_timers (tenant_id, queue, timer_key, deliver_at, txn, message_id, payload, recurrence)"
                    + " VALUES ('" + TENANT + "', 'uuid.q', 'k', '2026-01-01T00:00:00Z', 's@2026-01-01T00:00:00Z', queen.timer_uuidv7_v1(now()),"
                    + " '\\x7b7d'::bytea, '{\"every\":\"PT1H\",\"startAt\":\"2026-01-01T00:00:00Z\",\"catchUp\":\"one\",\"txn\":\"s\",\"seq\":1}')");
            c.setAutoCommit(false);
            long stagedAt;
            try (ResultSet rs = st.executeQuery("SELECT (floor(extract(epoch FROM now()) * 1000))::bigint")) {
                rs.next();
                stagedAt = rs.getLong(1);
            }
            // as the fire's deliver step calls it: in the statement that deletes the occurrence
            st.executeQuery("WITH gone AS (DELETE FROM queen.log_timers t WHERE t.timer_key = 'k' RETURNING t)"
                    + " SELECT queen.timer_series_next_v1(g.t, '{\"deliver\": true, \"next\": \"2026-01-01T01:00:00Z\"}') FROM gone g").close();
            c.commit();
            c.setAutoCommit(true);
            UUID successor = uuid("SELECT message_id FROM queen.log_timers WHERE txn = 's@2026-01-01T01:00:00Z'");
            assertThat(successor.version()).isEqualTo(7);
            assertThat(successor.variant()).isEqualTo(2);
            assertThat(successor.getMostSignificantBits() >>> 16).isEqualTo(stagedAt);
        }
    }

    @Test
    void noServiceRoleMayCallIt() throws SQLException {
        for (String role : List.of("queen_bridge", "queen_sweeper", "queen_operator")) {
            assertThat(strings("SELECT 'yes' WHERE has_function_privilege('" + role + "', 'queen.timer_uuidv7_v1(timestamptz)', 'EXECUTE')"))
                    .as(role).isEmpty();
        }
    }

    private static UUID uuid(String sql) throws SQLException {
        try (Connection c = db.dataSource().getConnection(); Statement st = c.createStatement(); ResultSet rs = st.executeQuery(sql)) {
            assertThat(rs.next()).as(sql).isTrue();
            return rs.getObject(1, UUID.class);
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
