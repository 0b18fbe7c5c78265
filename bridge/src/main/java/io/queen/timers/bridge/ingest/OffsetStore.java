package io.queen.timers.bridge.ingest;

import io.queen.timers.sql.SqlFile;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.Collection;
import java.util.HashMap;
import java.util.Map;
import javax.sql.DataSource;
import org.apache.kafka.common.TopicPartition;

/**
 * Reads the group's stored offsets (queen.bridge_offsets); writing them is part of every batch apply,
 * except {@link #move}: an operator's decision, audited.
 */
public final class OffsetStore {

    private static final String SELECT = SqlFile.load(OffsetStore.class, "offsets.sql");
    private static final String MOVE = SqlFile.load(OffsetStore.class, "offset-move.sql");

    private final DataSource dataSource;
    private final String groupId;

    public OffsetStore(DataSource dataSource, String groupId) {
        this.dataSource = dataSource;
        this.groupId = groupId;
    }

    public String groupId() {
        return groupId;
    }

    /** The stored next offset of each partition that has one. */
    public Map<TopicPartition, Long> load(Collection<String> topics) throws SQLException {
        Map<TopicPartition, Long> out = new HashMap<>();
        try (Connection c = dataSource.getConnection(); PreparedStatement st = c.prepareStatement(SELECT)) {
            st.setString(1, groupId);
            st.setArray(2, c.createArrayOf("text", topics.toArray()));
            try (ResultSet rs = st.executeQuery()) {
                while (rs.next()) {
                    out.put(new TopicPartition(rs.getString(1), rs.getInt(2)), rs.getLong(3));
                }
            }
        }
        return out;
    }

    /**
     * Sets one partition's stored offset on purpose ({@code queen-timers offsets set}) and writes an
     * {@code offset_moved} audit event naming {@code actor} and {@code reason}, in one transaction.
     * A running bridge seeks to it at its next batch of that partition.
     *
     * @return the offset it replaced, or null when none was stored
     */
    public Long move(String topic, int partition, long offset, String reason, String actor) throws SQLException {
        try (Connection c = dataSource.getConnection(); PreparedStatement st = c.prepareStatement(MOVE)) {
            st.setString(1, groupId);
            st.setString(2, topic);
            st.setInt(3, partition);
            st.setLong(4, offset);
            st.setString(5, reason);
            st.setString(6, actor);
            try (ResultSet rs = st.executeQuery()) {
                rs.next();
                long previous = rs.getLong(1);
                return rs.wasNull() ? null : previous;
            }
        }
    }
}
