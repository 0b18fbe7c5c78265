package io.queen.timers.log.cleanup;

import io.queen.timers.sql.SqlFile;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import javax.sql.DataSource;

/**
 * The maintenance step that deletes dead partitions (docs/decisions.md#partition-cleanup-runs-on-its-own-slow-clock):
 * partitions that
 * {@code queen.log_partition_dead_v1} calls dead with cutoff = PostgreSQL's {@code now() - idle},
 * at most {@code maxPerCall} per call, through {@code queen.log_cleanup_partitions_v1} (V003, V061: lock
 * with SKIP LOCKED, re-check with a fresh snapshot, delete the partitions' log_txns rows, which Queen's
 * table does not cascade to, then the partitions). One call is one short transaction that never waits
 * for a push. The caller owns the schedule (a slow clock, never the fire path) and the switch to turn it
 * off (a Queen broker sharing the database runs its own partition cleanup).
 */
public final class PartitionCleanup {

    private static final String CLEANUP = SqlFile.load(PartitionCleanup.class, "cleanup.sql");

    private final DataSource dataSource;
    private final Duration idle;
    private final int maxPerCall;

    /**
     * @param idle       a partition is a candidate once it was created and last written longer ago
     *                   than this (default 7 days, cleanup.idle); at least one second
     * @param maxPerCall partitions deleted per call at most (bounds the transaction); at least 1
     */
    public PartitionCleanup(DataSource dataSource, Duration idle, int maxPerCall) {
        if (idle.compareTo(Duration.ofSeconds(1)) < 0) {
            throw new IllegalArgumentException("partition cleanup idle must be at least 1 s, got " + idle);
        }
        if (maxPerCall < 1) {
            throw new IllegalArgumentException("partition cleanup max per call must be >= 1, got " + maxPerCall);
        }
        this.dataSource = dataSource;
        this.idle = idle;
        this.maxPerCall = maxPerCall;
    }

    /** One bounded pass: the ids of the partitions deleted (at most maxPerCall). */
    public List<UUID> runOnce() throws SQLException {
        List<UUID> deleted = new ArrayList<>();
        try (Connection c = dataSource.getConnection(); PreparedStatement st = c.prepareStatement(CLEANUP)) {
            st.setLong(1, idle.toMillis());
            st.setInt(2, maxPerCall);
            try (ResultSet rs = st.executeQuery()) {
                while (rs.next()) {
                    deleted.add(rs.getObject("id", UUID.class));
                }
            }
            if (!c.getAutoCommit()) {
                c.commit();
            }
        }
        return deleted;
    }

    public Duration idle() {
        return idle;
    }

    public int maxPerCall() {
        return maxPerCall;
    }
}
