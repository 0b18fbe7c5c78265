package io.queen.timers.sweeper;

import io.queen.timers.log.codec.Frame;
import io.queen.timers.log.codec.SegmentCodec;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import javax.sql.DataSource;

/**
 * Everything in the log, decoded: every segment of every partition unpacked with the log's codec. Tests
 * check deliveries against this (what a consumer would read), never against row counts. Reading fails on a
 * frame whose message id is not a UUIDv7.
 */
public final class LogContents {

    public record Message(UUID tenantId, String queue, String partition, UUID partitionId, long offset, Instant createdAt, Frame frame) {
        public String txn() {
            return frame.txn();
        }
    }

    private LogContents() {}

    public static List<Message> read(DataSource ds) {
        String sql = "SELECT q.tenant_id, q.name, p.name, p.id, s.base_offset, s.end_offset, s.created_at, s.blob"
                + " FROM queen.log_segments s JOIN queen.log_partitions p ON p.id = s.partition_id"
                + " JOIN queen.queues q ON q.id = p.queue_id ORDER BY q.tenant_id, q.name, p.name, s.base_offset";
        List<Message> out = new ArrayList<>();
        try (Connection c = ds.getConnection(); Statement st = c.createStatement(); ResultSet rs = st.executeQuery(sql)) {
            while (rs.next()) {
                List<Frame> frames = SegmentCodec.unpack(rs.getBytes(8));
                long base = rs.getLong(5);
                if (frames.size() != rs.getLong(6) - base + 1) {
                    throw new AssertionError("segment at " + base + " holds " + frames.size() + " frames, its offsets say otherwise");
                }
                for (int i = 0; i < frames.size(); i++) {
                    // Issue 43: every message id in the log is a UUIDv7 minted at staging, fixtures' included,
                    // so every test that reads the log checks it.
                    if (frames.get(i).messageId().version() != 7) {
                        throw new AssertionError("offset " + (base + i) + " of " + rs.getString(2) + " has message id "
                                + frames.get(i).messageId() + ", not a UUIDv7");
                    }
                    out.add(new Message(rs.getObject(1, UUID.class), rs.getString(2), rs.getString(3), rs.getObject(4, UUID.class),
                            base + i, rs.getTimestamp(7).toInstant(), frames.get(i)));
                }
            }
        } catch (SQLException e) {
            throw new IllegalStateException(e);
        }
        return out;
    }

    /** How many times each txn is in the log. */
    public static Map<String, Integer> txnCounts(DataSource ds) {
        Map<String, Integer> counts = new HashMap<>();
        for (Message m : read(ds)) {
            counts.merge(m.txn(), 1, Integer::sum);
        }
        return counts;
    }
}
