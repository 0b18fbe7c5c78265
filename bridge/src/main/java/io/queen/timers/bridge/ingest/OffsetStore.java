package io.queen.timers.bridge.ingest;

import io.queen.timers.sql.SqlFile;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.Collection;
import java.util.HashMap;
import java.util.Map;
import java.util.UUID;
import javax.sql.DataSource;
import org.apache.kafka.common.TopicPartition;

/**
 * Reads the group's stored offsets (queen.bridge_offsets); writing them is part of every batch apply,
 * except {@link #move}, an operator's decision, and {@link #start}, a new group's first offset chosen by
 * bridge.start.position: both audited.
 */
public final class OffsetStore {

    private static final String SELECT = SqlFile.load(OffsetStore.class, "offsets.sql");
    private static final String MOVE = SqlFile.load(OffsetStore.class, "offset-move.sql");
    private static final String START = SqlFile.load(OffsetStore.class, "offset-start.sql");
    private static final String REGISTER = SqlFile.load(OffsetStore.class, "topics-register.sql");

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
                    out.put(new TopicPartition(rs.getString("topic"), rs.getInt("partition")), rs.getLong("next_offset"));
                }
            }
        }
        return out;
    }

    /** What {@link #move} did: the offset it replaced (null: none was stored) and the tenant its audit event went to. */
    public record Moved(Long previous, UUID tenant) {}

    /**
     * Sets one partition's stored offset on purpose ({@code queen-timers offsets set}) and writes an
     * {@code offset_moved} audit event with {@code reason}, to the tenant that owns the topic, in one transaction.
     * The database refuses (SQLSTATE 55000) to move a stored offset backwards unless {@code replay}, and records
     * the actor itself (session user and client address); {@code clientLabel} is kept beside it as the client's
     * claim. {@code tenant} may be null when a bridge of the group registered the topic; otherwise it must agree.
     * A running bridge seeks to the new offset at its next batch of that partition.
     */
    public Moved move(String topic, int partition, long offset, String reason, boolean replay, UUID tenant, String clientLabel)
            throws SQLException {
        try (Connection c = dataSource.getConnection(); PreparedStatement st = c.prepareStatement(MOVE)) {
            st.setString(1, groupId);
            st.setString(2, topic);
            st.setInt(3, partition);
            st.setLong(4, offset);
            st.setString(5, reason);
            st.setBoolean(6, replay);
            st.setString(7, tenant == null ? null : tenant.toString());
            st.setString(8, clientLabel);
            try (ResultSet rs = st.executeQuery()) {
                rs.next();
                long previous = rs.getLong("previous_offset");
                Long p = rs.wasNull() ? null : previous;
                return new Moved(p, UUID.fromString(rs.getString("tenant_id")));
            }
        }
    }

    /**
     * Stores a new group's first offset in a partition that holds records (bridge.start.position), with its
     * audit event, unless one is stored already; returns the stored offset.
     */
    public long start(TopicPartition tp, long offset, String position, long logStart, long logEnd, UUID tenant) throws SQLException {
        try (Connection c = dataSource.getConnection(); PreparedStatement st = c.prepareStatement(START)) {
            st.setString(1, groupId);
            st.setString(2, tp.topic());
            st.setInt(3, tp.partition());
            st.setLong(4, offset);
            st.setString(5, position);
            st.setLong(6, logStart);
            st.setLong(7, logEnd);
            st.setString(8, tenant.toString());
            try (ResultSet rs = st.executeQuery()) {
                rs.next();
                return rs.getLong("next_offset");
            }
        }
    }

    /** Registers which tenant each command topic of this group stands for (read by {@link #move} and {@link #start}). */
    public void register(Map<String, UUID> tenants) throws SQLException {
        try (Connection c = dataSource.getConnection(); PreparedStatement st = c.prepareStatement(REGISTER)) {
            st.setString(1, groupId);
            st.setArray(2, c.createArrayOf("text", tenants.keySet().toArray()));
            st.setArray(3, c.createArrayOf("text", tenants.values().stream().map(UUID::toString).toArray()));
            st.executeQuery().close();
        }
    }
}
