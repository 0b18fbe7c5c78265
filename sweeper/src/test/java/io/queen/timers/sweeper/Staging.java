package io.queen.timers.sweeper;

import io.queen.timers.log.codec.UuidV7;
import io.queen.timers.testkit.WireSchemas;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.sql.Timestamp;
import java.time.Instant;
import java.util.UUID;
import javax.sql.DataSource;

/**
 * Writes and reads queen.log_timers rows directly with SQL, the way the bridge would leave them (the bridge
 * is another module's work; the sweeper's tests must not depend on it). Delivery times are relative to
 * PostgreSQL's clock.
 */
public final class Staging {

    public static final UUID DEFAULT_TENANT = UUID.fromString("00000000-0000-0000-0000-000000000001");

    private static final String INSERT = "INSERT INTO queen.log_timers (tenant_id, queue, timer_key, \"partition\", deliver_at, txn,"
            + " message_id, payload, payload_zstd, payload_bytes) VALUES (?, ?, ?, ?, now() + make_interval(secs => ?), ?, ?, ?, ?, ?)";

    private final DataSource dataSource;

    public Staging(DataSource dataSource) {
        this.dataSource = dataSource;
    }

    public DataSource dataSource() {
        return dataSource;
    }

    /** A timer due {@code delaySeconds} from the database's now (negative: in the past). txn = "txn-" + key. */
    public void schedule(UUID tenant, String queue, String key, double delaySeconds) {
        schedule(tenant, queue, key, "Default", delaySeconds, "txn-" + key, json(key), false);
    }

    public void schedule(UUID tenant, String queue, String key, String partition, double delaySeconds, String txn,
                         byte[] payload, boolean zstd) {
        schedule(tenant, queue, key, partition, delaySeconds, txn, payload, zstd, null);
    }

    /** As above, with payload_bytes (V120: the raw length, as the bridge records it; null as a row staged before V120). */
    public void schedule(UUID tenant, String queue, String key, String partition, double delaySeconds, String txn,
                         byte[] payload, boolean zstd, Integer payloadBytes) {
        try (Connection c = dataSource.getConnection(); PreparedStatement st = c.prepareStatement(INSERT)) {
            st.setObject(10, payloadBytes, java.sql.Types.INTEGER);
            st.setObject(1, tenant);
            st.setString(2, queue);
            st.setString(3, key);
            st.setString(4, partition);
            st.setDouble(5, delaySeconds);
            st.setString(6, txn);
            st.setObject(7, UuidV7.next());   // as the bridge mints it: every id in the log is a UUIDv7
            st.setBytes(8, payload);
            st.setBoolean(9, zstd);
            st.executeUpdate();
        } catch (SQLException e) {
            throw new IllegalStateException(e);
        }
    }

    public static byte[] json(String key) {
        return ("{\"key\":\"" + key + "\"}").getBytes(StandardCharsets.UTF_8);
    }

    /** The row as the sweeper's tests look at it, or null when it is gone. */
    public Row row(UUID tenant, String queue, String key) {
        String sql = "SELECT attempts, last_error, claim_token, claimed_until, visible_at, deliver_at, now()"
                + " FROM queen.log_timers WHERE tenant_id = ? AND queue = ? AND timer_key = ?";
        try (Connection c = dataSource.getConnection(); PreparedStatement st = c.prepareStatement(sql)) {
            st.setObject(1, tenant);
            st.setString(2, queue);
            st.setString(3, key);
            try (ResultSet rs = st.executeQuery()) {
                if (!rs.next()) {
                    return null;
                }
                return new Row(rs.getInt(1), rs.getString(2), rs.getObject(3, UUID.class), instant(rs.getTimestamp(4)),
                        instant(rs.getTimestamp(5)), instant(rs.getTimestamp(6)), instant(rs.getTimestamp(7)));
            }
        } catch (SQLException e) {
            throw new IllegalStateException(e);
        }
    }

    public long count(String sql) {
        try (Connection c = dataSource.getConnection(); Statement st = c.createStatement(); ResultSet rs = st.executeQuery(sql)) {
            rs.next();
            return rs.getLong(1);
        } catch (SQLException e) {
            throw new IllegalStateException(sql + ": " + e.getMessage(), e);
        }
    }

    /**
     * Empties the timers, the outbox, the DLQ and the log (queues cascade to partitions, segments and consumers;
     * Queen's log_txns and log_dlq have no foreign key, so they are named). The audit events still in the
     * outbox are checked against schemas/audit-event.schema.json first: every suite that clears between
     * tests so checks the events its fires, failures and dead letters wrote.
     */
    public void clear() {
        checkAuditEvents();
        execute("TRUNCATE queen.log_timers, queen.timer_audit_outbox, queen.log_dlq, queen.log_txns, queen.queues CASCADE");
    }

    /** Every event in the outbox, as the relay would publish it (V026's view), valid by the schema and the client. */
    public void checkAuditEvents() {
        String sql = "SELECT (jsonb_build_object('eventId', event_id, 'type', type, 'at', created_at, 'tenant', tenant_id) || event)::text"
                + " FROM queen.timer_audit_events ORDER BY id, seq";
        try (Connection c = dataSource.getConnection(); Statement st = c.createStatement(); ResultSet rs = st.executeQuery(sql)) {
            while (rs.next()) {
                WireSchemas.auditEvent(rs.getString(1).getBytes(StandardCharsets.UTF_8));
            }
        } catch (SQLException e) {
            throw new IllegalStateException(sql + ": " + e.getMessage(), e);
        }
    }

    public void execute(String sql) {
        try (Connection c = dataSource.getConnection(); Statement st = c.createStatement()) {
            st.execute(sql);
        } catch (SQLException e) {
            throw new IllegalStateException(sql + ": " + e.getMessage(), e);
        }
    }

    private static Instant instant(Timestamp t) {
        return t == null ? null : t.toInstant();
    }

    public record Row(int attempts, String lastError, UUID claimToken, Instant claimedUntil, Instant visibleAt,
                      Instant deliverAt, Instant dbNow) {}
}
