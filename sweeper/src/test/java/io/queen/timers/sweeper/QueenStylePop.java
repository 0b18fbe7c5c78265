package io.queen.timers.sweeper;

import io.queen.timers.log.codec.Frame;
import io.queen.timers.log.codec.SegmentCodec;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import javax.sql.DataSource;

/**
 * A consumer of the log written from the rules Queen's pop and ack follow (queen-mq/queen 67fb3e4b
 * 004_log_pop.sql, 005_log_ack.sql), on the project's tables and in our own words: the cursor is
 * log_consumers.committed (everything at or below it is done, the next wanted offset is committed + 1);
 * a claim skips a row whose lease is live; it takes the segment that covers the wanted offset (the
 * greatest base_offset at or below it) from frame wanted - base_offset, then the following segments from
 * frame 0, until the budget; it leases the span (committed, batch_end]; an ack moves committed to
 * batch_end and releases the lease. Segments are sliced by offset arithmetic alone.
 */
final class QueenStylePop {

    record Delivered(long offset, Frame frame) {}

    private final DataSource ds;

    QueenStylePop(DataSource ds) {
        this.ds = ds;
    }

    /** Claims up to {@code budget} messages for {@code group}; empty when nothing is pending or the lease is held. */
    List<Delivered> pop(UUID tenant, String queue, String partition, String group, int budget, String worker)
            throws SQLException {
        List<Delivered> out = new ArrayList<>();
        try (Connection c = ds.getConnection()) {
            c.setAutoCommit(false);
            UUID pid = partitionId(c, tenant, queue, partition);
            if (pid == null) {
                c.rollback();
                return out;
            }
            try (PreparedStatement st = c.prepareStatement(
                    "INSERT INTO queen.log_consumers (partition_id, consumer_group) VALUES (?, ?) ON CONFLICT DO NOTHING")) {
                st.setObject(1, pid);
                st.setString(2, group);
                st.executeUpdate();
            }
            Long committed = null;
            try (PreparedStatement st = c.prepareStatement("SELECT committed FROM queen.log_consumers"
                    + " WHERE partition_id = ? AND consumer_group = ? AND (lease_expires_at IS NULL OR lease_expires_at < now())"
                    + " FOR UPDATE SKIP LOCKED")) {
                st.setObject(1, pid);
                st.setString(2, group);
                try (ResultSet rs = st.executeQuery()) {
                    if (rs.next()) {
                        committed = rs.getLong(1);
                    }
                }
            }
            if (committed == null) {
                c.commit();
                return out;
            }
            long wanted = committed + 1;
            String segments = """
                    (SELECT base_offset, end_offset, blob FROM queen.log_segments
                      WHERE partition_id = ? AND base_offset <= ? ORDER BY base_offset DESC LIMIT 1)
                    UNION ALL
                    (SELECT base_offset, end_offset, blob FROM queen.log_segments
                      WHERE partition_id = ? AND base_offset > ? ORDER BY base_offset)
                    ORDER BY base_offset""";
            try (PreparedStatement st = c.prepareStatement(segments)) {
                st.setObject(1, pid);
                st.setLong(2, wanted);
                st.setObject(3, pid);
                st.setLong(4, wanted);
                try (ResultSet rs = st.executeQuery()) {
                    while (rs.next() && out.size() < budget) {
                        long base = rs.getLong(1);
                        long end = rs.getLong(2);
                        if (end < wanted) {
                            continue;   // the head segment is already consumed
                        }
                        List<Frame> frames = SegmentCodec.unpack(rs.getBytes(3));
                        for (long off = Math.max(base, wanted); off <= end && out.size() < budget; off++) {
                            out.add(new Delivered(off, frames.get((int) (off - base))));
                        }
                    }
                }
            }
            if (!out.isEmpty()) {
                try (PreparedStatement st = c.prepareStatement("UPDATE queen.log_consumers SET worker_id = ?, batch_end = ?,"
                        + " lease_acquired_at = now(), lease_expires_at = now() + interval '30 seconds'"
                        + " WHERE partition_id = ? AND consumer_group = ?")) {
                    st.setString(1, worker);
                    st.setLong(2, out.get(out.size() - 1).offset());
                    st.setObject(3, pid);
                    st.setString(4, group);
                    st.executeUpdate();
                }
            }
            c.commit();
        }
        return out;
    }

    /** Acks the leased batch up to {@code upto}; false when the lease is not {@code worker}'s or upto is past batch_end. */
    boolean ack(UUID tenant, String queue, String partition, String group, String worker, long upto) throws SQLException {
        try (Connection c = ds.getConnection()) {
            UUID pid = partitionId(c, tenant, queue, partition);
            try (PreparedStatement st = c.prepareStatement("UPDATE queen.log_consumers SET committed = ?, batch_end = NULL,"
                    + " worker_id = NULL, lease_expires_at = NULL, total_consumed = total_consumed + (? - committed)"
                    + " WHERE partition_id = ? AND consumer_group = ? AND worker_id = ? AND ? <= batch_end"
                    + " AND lease_expires_at >= now()")) {
                st.setLong(1, upto);
                st.setLong(2, upto);
                st.setObject(3, pid);
                st.setString(4, group);
                st.setString(5, worker);
                st.setLong(6, upto);
                return st.executeUpdate() == 1;
            }
        }
    }

    private static UUID partitionId(Connection c, UUID tenant, String queue, String partition) throws SQLException {
        try (PreparedStatement st = c.prepareStatement("SELECT p.id FROM queen.log_partitions p JOIN queen.queues q ON q.id = p.queue_id"
                + " WHERE q.tenant_id = ? AND q.name = ? AND p.name = ?")) {
            st.setObject(1, tenant);
            st.setString(2, queue);
            st.setString(3, partition);
            try (ResultSet rs = st.executeQuery()) {
                return rs.next() ? rs.getObject(1, UUID.class) : null;
            }
        }
    }
}
