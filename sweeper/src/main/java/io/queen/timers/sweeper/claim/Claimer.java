package io.queen.timers.sweeper.claim;

import io.queen.timers.sql.SqlFile;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import javax.sql.DataSource;

/**
 * Claims due timers with {@code queen.timer_claim_v6} (db/current/R__timer_claim.sql, statement claim.sql): per shard, SKIP LOCKED,
 * round-robin over tenants, a new token per row, rows in pre-claim visible_at order, and at most a given
 * number of held bytes (payload + txn + fixed columns, counted in SQL from the stored lengths) so a burst of
 * large payloads cannot take more memory than a cycle is allowed; each tenant within its {@link FireBudget} while
 * another tenant has work near. One statement, its own transaction; its rows carry the database's clock
 * ({@link DatabaseTime}), by which a recurring timer of the claim is planned.
 */
public final class Claimer {

    private static final String CLAIM = SqlFile.load(Claimer.class, "claim.sql");

    /** Shards of idx_log_timers_visible: (hashtextextended(timer_key, 0) & 63), a stored generated column. */
    private static final int SHARDS = 64;

    private final DataSource dataSource;
    private final int batchSize;
    private final Duration lease;
    private final int perTenantPerShard;
    private final long maxHeldBytes;
    private final FireBudget budget;

    /** What one claim call returned: the timers and the bytes they hold (their held_bytes, summed). */
    public record Claim(List<ClaimedTimer> timers, long heldBytes) {}

    public Claimer(DataSource dataSource, int batchSize, Duration lease, int perTenantPerShard, long maxHeldBytes) {
        this(dataSource, batchSize, lease, perTenantPerShard, maxHeldBytes, FireBudget.off());
    }

    /** {@code budget}: the process's one {@link FireBudget}, shared by its loops' claimers. */
    public Claimer(DataSource dataSource, int batchSize, Duration lease, int perTenantPerShard, long maxHeldBytes, FireBudget budget) {
        this.budget = budget;
        this.dataSource = dataSource;
        this.batchSize = batchSize;
        this.lease = lease;
        this.perTenantPerShard = perTenantPerShard;
        this.maxHeldBytes = maxHeldBytes;
    }

    /** Bounded by rows only (tests and benchmarks that stage small payloads). */
    public Claimer(DataSource dataSource, int batchSize, Duration lease, int perTenantPerShard) {
        this(dataSource, batchSize, lease, perTenantPerShard, Long.MAX_VALUE);
    }

    /** One row of claim.sql, read by column name (pgjdbc keeps the name-to-index map per result set). */
    private static ClaimedTimer timer(ResultSet rs, DatabaseTime claimedAt) throws SQLException {
        return new ClaimedTimer(
                new ClaimedTimer.Key(rs.getObject("tenant_id", UUID.class), rs.getString("queue"), rs.getString("timer_key")),
                new ClaimedTimer.Schedule(rs.getTimestamp("deliver_at").toInstant(), rs.getTimestamp("visible_at").toInstant(),
                        rs.getString("recurrence")),
                new ClaimedTimer.Message(rs.getString("partition"), rs.getString("txn"), rs.getObject("message_id", UUID.class),
                        rs.getString("producer_sub"), rs.getBytes("trace_context")),
                new ClaimedTimer.Payload(rs.getBytes("payload"), rs.getBoolean("payload_zstd"), rs.getBoolean("encrypted")),
                new ClaimedTimer.Lease(rs.getObject("claim_token", UUID.class), rs.getTimestamp("claimed_until").toInstant(), claimedAt),
                new ClaimedTimer.History(rs.getInt("attempts"), rs.getString("last_error"), rs.getInt("deaths")));
    }

    public long maxHeldBytes() {
        return maxHeldBytes;
    }

    public int batchSize() {
        return batchSize;
    }

    /**
     * The size of a claim that means "more is waiting": the batch, unless one tenant cannot fill it. A tenant
     * gets at most {@code perTenantPerShard} rows per shard per claim, so with one tenant a claim returns at
     * most 64 x that however large the batch (FireBench: batch 1024 with one tenant never looked
     * full, so every cycle fired one small claim, at half the throughput of batch 512).
     */
    public int fullClaim() {
        return Math.min(batchSize, SHARDS * perTenantPerShard);
    }

    public Duration lease() {
        return lease;
    }

    /** After a claim that took nothing: how long until a tenant the fire budget holds may claim again (empty: none is held). */
    public Optional<Duration> heldFor() {
        return budget.untilRefilled();
    }

    /**
     * Claims up to the batch size and {@link #maxHeldBytes()}, a single larger timer alone; an empty list when
     * nothing is due (or everything due is held by others).
     */
    public List<ClaimedTimer> claim() throws SQLException {
        return claim(maxHeldBytes, true).timers();
    }

    /**
     * Claims up to the batch size and {@code maxBytes} held bytes. {@code loneOversize}: a first timer larger
     * than {@code maxBytes} comes back alone (asked by the first claim of a cycle, so such a timer fires on
     * its own); otherwise it is left for the next cycle.
     */
    public Claim claim(long maxBytes, boolean loneOversize) throws SQLException {
        FireBudget.Allowances allowances = budget.reserve();
        Map<UUID, Integer> taken = new HashMap<>();
        try (Connection c = dataSource.getConnection()) {
            c.setAutoCommit(true);
            try (PreparedStatement st = c.prepareStatement(CLAIM)) {
                st.setInt(1, batchSize);
                st.setDouble(2, lease.toMillis() / 1000.0);
                st.setInt(3, perTenantPerShard);
                st.setLong(4, maxBytes);
                st.setBoolean(5, loneOversize);
                st.setString(6, allowances == null ? null : allowances.json());
                List<ClaimedTimer> out = new ArrayList<>();
                long held = 0;
                try (ResultSet rs = st.executeQuery()) {
                    // the driver has read every row by now: the clock is carried on from this moment, so it runs behind the
                    // database's by the rows' transfer, never ahead (DatabaseTime)
                    long readAtNanos = System.nanoTime();
                    DatabaseTime claimedAt = null;
                    while (rs.next()) {
                        if (claimedAt == null) {
                            claimedAt = new DatabaseTime(rs.getTimestamp("claimed_at").toInstant(), readAtNanos);
                        }
                        held += rs.getLong("held_bytes");
                        ClaimedTimer t = timer(rs, claimedAt);
                        out.add(t);
                        taken.merge(t.key().tenantId(), 1, Integer::sum);
                    }
                }
                return new Claim(out, held);
            }
        } finally {
            budget.settle(allowances, taken);   // what was reserved and not taken goes back, also when the claim failed
        }
    }
}
