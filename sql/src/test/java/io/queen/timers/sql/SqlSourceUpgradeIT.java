package io.queen.timers.sql;

import static org.assertj.core.api.Assertions.assertThat;

import io.queen.timers.testkit.FreshDatabase;
import io.queen.timers.testkit.TestPostgres;
import java.io.IOException;
import java.net.URISyntaxException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.stream.Stream;
import javax.sql.DataSource;
import org.flywaydb.core.Flyway;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * A database migrated by a release before issue 26 (main at 1408545, or at 9466e1f with V120: every
 * versioned migration as it was shipped, kept verbatim under db/shipped-before-sql-source) upgrades to the layout where each
 * function lives once in db/current (docs/decisions.md#one-live-definition-of-every-function): the
 * recorded checksums of the edited texts are realigned, V121 drops the retired versions, the R__ files
 * re-create the rest, and the result is the schema a fresh install gets, with its pending timers and
 * fired segments kept; then the bridge's apply, the claim and the fire work on it.
 */
class SqlSourceUpgradeIT {

    private static final String SHIPPED = "db/shipped-before-sql-source";
    private static final String TENANT = "00000000-0000-0000-0000-000000000001";

    @Test
    void everyShippedTextStillExistsAndEachThatChangedHasItsRealignment() throws IOException, URISyntaxException {
        Path shipped = Path.of(SqlSourceUpgradeIT.class.getClassLoader().getResource(SHIPPED).toURI());
        List<String> files;
        try (Stream<Path> s = Files.list(shipped)) {
            files = s.map(p -> p.getFileName().toString()).sorted().toList();
        }
        assertThat(files).hasSize(28);
        int changed = 0;
        for (String f : files) {
            int earlier = Migrations.checksum(SHIPPED + "/" + f);
            int current = Migrations.checksum("db/migration/" + f); // throws when the file is gone
            if (earlier != current) {
                changed++;
                assertThat(Migrations.SUPERSEDED).as(f + ": an applied text changed without its realignment")
                        .anyMatch(s -> s.file().equals(f) && s.earlier() == earlier);
            }
        }
        assertThat(changed).isEqualTo(24);
    }

    /** 110: main at 1408545, the commit issue 26 started from; 120: main at 9466e1f, with V120. */
    @ParameterizedTest
    @ValueSource(strings = {"110", "120"})
    void theShippedSchemaWithPendingTimersAndFiredSegmentsUpgradesToAFreshInstallsSchemaAndStillFires(String shippedVersion)
            throws SQLException {
        try (FreshDatabase old = TestPostgres.createDatabase("shipped_v" + shippedVersion);
                FreshDatabase fresh = TestPostgres.createDatabase("fresh_install")) {
            DataSource ds = old.newDataSource(4);
            Flyway.configure().dataSource(ds).locations("classpath:" + SHIPPED)
                    .schemas(Migrations.HISTORY_SCHEMA).createSchemas(true).table(Migrations.HISTORY_TABLE)
                    .placeholderReplacement(false).target(shippedVersion).load().migrate();
            assertThat(query(ds, "SELECT count(*) FROM pg_proc WHERE proname = 'bridge_apply_v1'")).isEqualTo(1);

            // The old schema at work: four timers staged by the bridge, two of them due, claimed and fired.
            long now = System.currentTimeMillis();
            apply(ds, 0, upsert("due-1", "up.fired", now - 60_000) + ", " + upsert("due-2", "up.fired", now - 30_000)
                    + ", " + upsert("later-1", "up.later", now + 3_600_000) + ", " + upsert("later-2", "up.later", now + 7_200_000));
            assertThat(claimAndFire(ds, "timer_claim_v3")).containsExactly("1 fired");
            assertThat(query(ds, "SELECT count(*) FROM queen.log_segments")).isEqualTo(1);

            int executed = Migrations.migrate(ds).migrationsExecuted;
            DataSource freshDs = fresh.newDataSource(4);
            Migrations.migrate(freshDs);

            // V120 where it had not run, V121, V122, V123, V125, V126, V127, V128, V129, V130, V131, V132, V133, V134, V135, V140, V150,
            // V151, and every R__ file (R__timer_audit_relay.sql is issue 24's, R__timer_dead_letters.sql issue 27's, R__timer_cadence.sql
            // issue 28's, R__bridge_groups.sql issue 37's, R__timer_advance.sql issue 41's, R__timer_bounds.sql issue 47's,
            // R__bridge_access.sql issue 54's)
            assertThat(executed).isEqualTo(("110".equals(shippedVersion) ? 17 : 16) + 24);
            assertThat(schema(ds)).isEqualTo(schema(freshDs));
            assertThat(query(ds, "SELECT count(*) FROM pg_proc WHERE proname ~ '^(bridge_apply_v[123]|timer_claim_v[1234]|timer_(fire|fail|release|dead_letter)_v1)$'"))
                    .isZero();
            assertThat(query(ds, "SELECT count(*) FROM queen.log_timers WHERE queue = 'up.later'")).isEqualTo(2);
            assertThat(query(ds, "SELECT count(*) FROM queen.log_segments")).isEqualTo(1);

            // The new layout at work on the same rows: the bridge reschedules the pending timers to now,
            // the sweeper claims and fires them into the partition that already holds a segment.
            apply(ds, 1, upsert("later-1", "up.later", now - 1_000) + ", " + upsert("later-2", "up.later", now - 1_000));
            apply(ds, 2, upsert("again-1", "up.fired", now - 1_000));
            assertThat(claimAndFire(ds, "timer_claim_v5")).containsExactly("1 fired", "2 fired");
            assertThat(query(ds, "SELECT count(*) FROM queen.log_timers")).isZero();
            assertThat(query(ds, "SELECT max(s.end_offset) FROM queen.log_segments s JOIN queen.log_partitions p ON p.id = s.partition_id"
                    + " JOIN queen.queues q ON q.id = p.queue_id WHERE q.name = 'up.fired'")).isEqualTo(2);
            assertThat(query(ds, "SELECT count(*) FROM queen.timer_audit_events WHERE type = 'fired'")).isEqualTo(5);
            assertThat(Migrations.migrate(ds).migrationsExecuted).isZero();
            assertThat(Migrations.appliedVersion(ds)).contains("151"); // the newest versioned one, not an R__ file
            assertThat(Migrations.pendingCount(ds)).isZero();
        }
    }

    private static String upsert(String key, String queue, long deliverAtMs) {
        return """
                {"tenant_id": "%s", "queue": "%s", "timer_key": "%s", "partition": "Default", "deliver_at_ms": %d,
                 "txn": "txn-%s", "message_id": "%s", "payload": "e30=", "payload_zstd": false, "encrypted": false,
                 "producer_sub": null, "trace_context": null}"""
                .formatted(TENANT, queue, key, deliverAtMs, key, MessageIds.v7());
    }

    private static void apply(DataSource ds, int offset, String upserts) throws SQLException {
        try (Connection c = ds.getConnection(); PreparedStatement st = c.prepareStatement(
                "SELECT queen.bridge_apply_v4('upgrade', ?::jsonb, ?::jsonb, '[]', '[]', '1 second')")) {
            st.setString(1, "[{\"topic\": \"t\", \"partition\": 0, \"expected\": " + (offset == 0 ? "null" : offset) + ", \"next\": "
                    + (offset + 1) + "}]");
            st.setString(2, "[" + upserts + "]");
            try (ResultSet rs = st.executeQuery()) {
                rs.next();
                assertThat(rs.getInt(1)).as("partitions whose offset did not advance").isZero();
            }
        }
    }

    /** Claims every due timer with {@code claim} (the shipped schema's v3, the current v5) and fires one segment per queue
     *  (timer_fire_v2); the verdicts. */
    private static List<String> claimAndFire(DataSource ds, String claim) throws SQLException {
        Map<String, List<String>> byQueue = new TreeMap<>();
        try (Connection c = ds.getConnection(); Statement st = c.createStatement();
                ResultSet rs = st.executeQuery("SELECT queue, timer_key, claim_token FROM queen." + claim + "(100, '1 minute', 100, 100000000, true)")) {
            while (rs.next()) {
                byQueue.computeIfAbsent(rs.getString(1), q -> new ArrayList<>())
                        .add("{\"timer_key\": \"%s\", \"claim_token\": \"%s\"}".formatted(rs.getString(2), rs.getString(3)));
            }
        }
        List<String> segments = new ArrayList<>();
        int frames = 0;
        for (Map.Entry<String, List<String>> e : byQueue.entrySet()) {
            segments.add("{\"tenant_id\": \"%s\", \"queue\": \"%s\", \"partition\": \"Default\", \"blob_length\": 1, \"timers\": [%s]}"
                    .formatted(TENANT, e.getKey(), String.join(", ", e.getValue())));
            frames += e.getValue().size();
        }
        List<String> verdicts = new ArrayList<>();
        try (Connection c = ds.getConnection(); PreparedStatement st = c.prepareStatement(
                "SELECT seg, verdict FROM queen.timer_fire_v2(?::jsonb, ?, ?) ORDER BY seg")) {
            st.setString(1, "[" + String.join(", ", segments) + "]");
            st.setBytes(2, new byte[segments.size()]);
            st.setBytes(3, new byte[16 * frames]);
            try (ResultSet rs = st.executeQuery()) {
                while (rs.next()) {
                    verdicts.add(rs.getInt(1) + " " + rs.getString(2));
                }
            }
        }
        return verdicts;
    }

    /** Functions (full definitions), views, columns, indexes, constraints and types of the queen schema. */
    static List<String> schema(DataSource ds) throws SQLException {
        List<String> out = new ArrayList<>();
        try (Connection c = ds.getConnection(); Statement st = c.createStatement();
                ResultSet rs = st.executeQuery("""
                        SELECT 'function ' || p.oid::regprocedure::text || E'\\n' || pg_get_functiondef(p.oid)
                          FROM pg_proc p WHERE p.pronamespace = 'queen'::regnamespace
                        UNION ALL
                        SELECT 'view ' || v.relname || E'\\n' || pg_get_viewdef(v.oid)
                          FROM pg_class v WHERE v.relnamespace = 'queen'::regnamespace AND v.relkind = 'v'
                        UNION ALL
                        SELECT 'column ' || c.relname || '.' || a.attname || ' ' || format_type(a.atttypid, a.atttypmod)
                               || ' ' || a.attnotnull || ' ' || coalesce(pg_get_expr(d.adbin, d.adrelid), '')
                          FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid
                          LEFT JOIN pg_attrdef d ON d.adrelid = a.attrelid AND d.adnum = a.attnum
                         WHERE c.relnamespace = 'queen'::regnamespace AND c.relkind IN ('r', 'c') AND a.attnum > 0
                           AND NOT a.attisdropped
                        UNION ALL
                        SELECT 'index ' || pg_get_indexdef(i.indexrelid)
                          FROM pg_index i JOIN pg_class c ON c.oid = i.indrelid WHERE c.relnamespace = 'queen'::regnamespace
                        UNION ALL
                        SELECT 'constraint ' || n.conrelid::regclass::text || ' ' || n.conname || ' ' || pg_get_constraintdef(n.oid)
                          FROM pg_constraint n WHERE n.connamespace = 'queen'::regnamespace AND n.contype <> 'n'
                        UNION ALL
                        -- the grants of db/least-privilege.sql: an upgraded database has exactly a fresh install's
                        SELECT 'grants ' || p.oid::regprocedure::text || ' ' || coalesce(p.proacl::text, 'default')
                          FROM pg_proc p WHERE p.pronamespace = 'queen'::regnamespace
                        UNION ALL
                        SELECT 'grants ' || c.oid::regclass::text || ' ' || coalesce(c.relacl::text, 'default')
                          FROM pg_class c WHERE c.relnamespace = 'queen'::regnamespace AND c.relkind IN ('r', 'p', 'v')
                         ORDER BY 1""")) {
            while (rs.next()) {
                out.add(rs.getString(1));
            }
        }
        return out;
    }

    private static long query(DataSource ds, String sql) throws SQLException {
        try (Connection c = ds.getConnection(); Statement st = c.createStatement(); ResultSet rs = st.executeQuery(sql)) {
            rs.next();
            return rs.getLong(1);
        }
    }
}
