package io.queen.timers.log.push;

import io.queen.timers.log.codec.PackedSegment;
import io.queen.timers.sql.SqlFile;
import java.sql.Array;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.OffsetDateTime;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import javax.sql.DataSource;

/**
 * Pushes packed segments into the log through the V002 functions: test support (log's test-jar), to
 * arrange the log as Queen's own push would; no process pushes through it (the sweeper's fire is
 * {@code timer_fire_v1}).
 *
 * <p>Two shapes. {@link #push(Destination, PackedSegment)} and {@link #pushAll(List)} run in a
 * transaction of their own. The {@code Connection} overloads run inside the caller's transaction
 * (the sweeper's fire pushes and deletes its timer rows in one commit) and never commit or roll
 * back.
 *
 * <p>Lock order (docs/architecture.md#lock-order): queen.queues → queen.log_partitions (ascending id, one statement)
 * → leaves. A caller that holds timer rows is already past queen.log_timers; a caller must not
 * hold a partition lock from an earlier statement of its transaction when it calls these.
 *
 * <p>Errors are the driver's {@link SQLException}s, SQLSTATE intact, so the caller's one classifier
 * (core's SqlStates) decides transient or permanent.
 */
public final class LogPusher {

    private static final String PUSH = SqlFile.load(LogPusher.class, "push.sql");
    private static final String PROVISION = SqlFile.load(LogPusher.class, "provision.sql");
    private static final String LOCK = SqlFile.load(LogPusher.class, "lock_partitions.sql");
    private static final String APPEND = SqlFile.load(LogPusher.class, "append.sql");

    private final DataSource dataSource;

    public LogPusher(DataSource dataSource) {
        this.dataSource = dataSource;
    }

    /** Pushes one segment in a transaction of its own. */
    public Appended push(Destination destination, PackedSegment segment) throws SQLException {
        try (Connection c = dataSource.getConnection()) {
            return inTransaction(c, () -> push(c, destination, segment));
        }
    }

    /** Pushes several segments, into any number of partitions, in one transaction of their own. */
    public List<Appended> pushAll(List<SegmentPush> pushes) throws SQLException {
        try (Connection c = dataSource.getConnection()) {
            return inTransaction(c, () -> pushAll(c, pushes));
        }
    }

    /**
     * Pushes one segment inside the caller's transaction: {@code queen.log_push_v1}, one round trip
     * (provision, lock, append). For one segment per transaction; see {@link #pushAll(Connection, List)}.
     */
    public Appended push(Connection c, Destination destination, PackedSegment segment) throws SQLException {
        try (PreparedStatement st = c.prepareStatement(PUSH)) {
            st.setObject(1, destination.tenantId());
            st.setString(2, destination.queue());
            st.setString(3, destination.partition());
            st.setInt(4, segment.count());
            st.setBytes(5, segment.blob());
            st.setBytes(6, segment.hashes());
            try (ResultSet rs = st.executeQuery()) {
                if (!rs.next()) {
                    throw new SQLException("log_push_v1 returned no row for " + destination, "XX000");
                }
                return new Appended(destination, rs.getObject(1, UUID.class), rs.getLong(2), segment.count(),
                        rs.getObject(3, OffsetDateTime.class).toInstant());
            }
        }
    }

    /**
     * Pushes several segments inside the caller's transaction: provisions every destination in one
     * statement, pre-locks every partition in ascending id in one statement, then appends the
     * segments in list order (segments for one destination land in list order, back to back).
     *
     * <p>A partition that cleanup deleted between provisioning and locking is provisioned and
     * locked again. PRICE: that second lock is outside the ascending order of the first, so in
     * that rare race two pushers may deadlock; PostgreSQL detects it and one gets 40P01
     * (transient, retried), which is cheaper than holding every push to a retry loop of its own.
     */
    public List<Appended> pushAll(Connection c, List<SegmentPush> pushes) throws SQLException {
        Set<Destination> destinations = new LinkedHashSet<>();
        pushes.forEach(p -> destinations.add(p.destination()));
        Map<Destination, UUID> ids = new HashMap<>();
        Set<UUID> locked = new HashSet<>();
        Collection<Destination> todo = destinations;
        for (int round = 1; !todo.isEmpty(); round++) {
            if (round > 2) {
                throw new SQLException("partitions vanished twice between provisioning and locking: " + todo, "40001");
            }
            Map<Destination, UUID> provisioned = provision(c, todo);
            ids.putAll(provisioned);
            locked.addAll(lockPartitions(c, provisioned.values()));
            List<Destination> missing = new ArrayList<>();
            for (Destination d : todo) {
                UUID id = ids.get(d);
                if (id == null || !locked.contains(id)) {
                    missing.add(d);
                }
            }
            todo = missing;
        }
        List<Appended> out = new ArrayList<>(pushes.size());
        for (SegmentPush p : pushes) {
            out.add(append(c, p.destination(), ids.get(p.destination()), p.segment()));
        }
        return out;
    }

    /**
     * {@code queen.log_provision_v1}: creates missing queues and partitions (ordered inserts,
     * {@code ON CONFLICT DO NOTHING}) and returns the partition id of each destination.
     */
    public Map<Destination, UUID> provision(Connection c, Collection<Destination> destinations) throws SQLException {
        int n = destinations.size();
        UUID[] tenants = new UUID[n];
        String[] queues = new String[n];
        String[] partitions = new String[n];
        int i = 0;
        for (Destination d : destinations) {
            tenants[i] = d.tenantId();
            queues[i] = d.queue();
            partitions[i] = d.partition();
            i++;
        }
        Map<Destination, UUID> ids = new HashMap<>();
        try (PreparedStatement st = c.prepareStatement(PROVISION)) {
            st.setArray(1, c.createArrayOf("uuid", tenants));
            st.setArray(2, c.createArrayOf("text", queues));
            st.setArray(3, c.createArrayOf("text", partitions));
            try (ResultSet rs = st.executeQuery()) {
                while (rs.next()) {
                    ids.put(new Destination(rs.getObject(1, UUID.class), rs.getString(2), rs.getString(3)),
                            rs.getObject(4, UUID.class));
                }
            }
        }
        return ids;
    }

    /**
     * {@code queen.log_lock_partitions_v1}: locks the partitions in ascending id (one statement) and
     * returns the ids it locked; an id missing from the answer was deleted meanwhile.
     */
    public Set<UUID> lockPartitions(Connection c, Collection<UUID> partitionIds) throws SQLException {
        Set<UUID> locked = new HashSet<>();
        try (PreparedStatement st = c.prepareStatement(LOCK)) {
            Array ids = c.createArrayOf("uuid", partitionIds.toArray(new UUID[0]));
            st.setArray(1, ids);
            try (ResultSet rs = st.executeQuery()) {
                while (rs.next()) {
                    locked.add(rs.getObject(1, UUID.class));
                }
            }
        }
        return locked;
    }

    /**
     * {@code queen.log_append_v1}: appends one segment to a partition (locking it if the caller has
     * not). SQLSTATE P0002 when the partition does not exist.
     */
    public Appended append(Connection c, Destination destination, UUID partitionId, PackedSegment segment) throws SQLException {
        try (PreparedStatement st = c.prepareStatement(APPEND)) {
            st.setObject(1, partitionId);
            st.setInt(2, segment.count());
            st.setBytes(3, segment.blob());
            st.setBytes(4, segment.hashes());
            try (ResultSet rs = st.executeQuery()) {
                if (!rs.next()) {
                    throw new SQLException("log_append_v1 returned no row for " + destination, "XX000");
                }
                return new Appended(destination, partitionId, rs.getLong(1), segment.count(),
                        rs.getObject(2, OffsetDateTime.class).toInstant());
            }
        }
    }

    @FunctionalInterface
    private interface Work<T> {
        T run() throws SQLException;
    }

    private static <T> T inTransaction(Connection c, Work<T> work) throws SQLException {
        boolean autoCommit = c.getAutoCommit();
        c.setAutoCommit(false);
        try {
            T result = work.run();
            c.commit();
            return result;
        } catch (SQLException | RuntimeException e) {
            try {
                c.rollback();
            } catch (SQLException rollback) {
                e.addSuppressed(rollback);
            }
            throw e;
        } finally {
            c.setAutoCommit(autoCommit);
        }
    }
}
