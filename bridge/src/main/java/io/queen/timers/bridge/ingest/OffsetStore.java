package io.queen.timers.bridge.ingest;

import io.queen.timers.log.SqlFile;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.Collection;
import java.util.HashMap;
import java.util.Map;
import javax.sql.DataSource;
import org.apache.kafka.common.TopicPartition;

/** Reads the group's stored offsets (queen.bridge_offsets); writing them is part of every batch apply. */
public final class OffsetStore {

    private static final String SELECT = SqlFile.load(OffsetStore.class, "offsets.sql");

    private final DataSource dataSource;
    private final String groupId;

    public OffsetStore(DataSource dataSource, String groupId) {
        this.dataSource = dataSource;
        this.groupId = groupId;
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
}
