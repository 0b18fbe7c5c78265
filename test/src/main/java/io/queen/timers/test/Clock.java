package io.queen.timers.test;

import java.sql.Array;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import javax.sql.DataSource;

/**
 * The tests' clock: makes a queue's staged timers due now, so a test of "remind me in 3 days" runs in
 * milliseconds. It moves due times, never the fire: {@code queen.timer_advance_v1} (R__timer_advance.sql, the
 * schema owner's alone) rewrites {@code deliver_at} of the queue's staged rows and wakes the sweepers
 * ({@code NOTIFY queen_timers_wake}); the sweeper then claims, fires, audits and deletes them as it would have at
 * their time, and a call returns once every timer it made due has fired.
 *
 * <p>Limits, and their price:
 * <ul>
 *   <li>It rewrites the due time of staged rows: the {@code fired} event's {@code deliverAt} is the moved
 *       time and its {@code lateMs} counts from it. Nothing else of the row changes (txn, message id, payload).</li>
 *   <li>One-shot timers only. A recurring series is left alone: its next occurrence is planned from the
 *       occurrence's time, so moving it would shift an {@code every} series, and make a cron series deliver the
 *       same occurrence again. Test a series with a short {@code every} rule instead.</li>
 *   <li>A timer in a sweeper's hands (claimed) is left as it is: it fires or fails at once anyway. A timer backing
 *       off after a failed fire keeps its backoff: it is moved but not made due, and is not waited for.</li>
 *   <li>It moves the timers staged when it runs: a command still on its way through the bridge is not moved
 *       (await the command's verdict first, e.g. {@code sender().sendAndAwait}).</li>
 *   <li>The default tenant unless one is given; the moved rows' queue only.</li>
 * </ul>
 */
public final class Clock {

    /** How long {@link #fireDue(String)} and {@link #advance(String, Duration)} wait for the fires. */
    public static final Duration DEFAULT_TIMEOUT = Duration.ofSeconds(30);

    /** One timer the clock moved: its key and txn, its new due time, and whether it is due now. */
    public record Moved(String timerKey, String txn, Instant deliverAt, boolean due) {}

    private final DataSource owner;

    Clock(DataSource owner) {
        this.owner = owner;
    }

    /**
     * Makes every staged one-shot timer of {@code queue} (default tenant) due now and returns once each has fired
     * (left the staging table: fired, or dead-lettered, or cancelled meanwhile), or throws an {@link AssertionError}
     * after {@link #DEFAULT_TIMEOUT}.
     */
    public List<Moved> fireDue(String queue) {
        return move(QueenTimersStack.DEFAULT_TENANT, queue, null, DEFAULT_TIMEOUT);
    }

    /** As {@link #fireDue(String)} for {@code tenant}'s queue, waiting up to {@code timeout}. */
    public List<Moved> fireDue(UUID tenant, String queue, Duration timeout) {
        return move(tenant, queue, null, timeout);
    }

    /**
     * Moves {@code queue}'s clock by {@code by}: each staged one-shot timer is due {@code by} earlier, and now at
     * the earliest; returns once those that became due have fired. A timer still in the future stays staged.
     */
    public List<Moved> advance(String queue, Duration by) {
        return advance(QueenTimersStack.DEFAULT_TENANT, queue, by, DEFAULT_TIMEOUT);
    }

    /** As {@link #advance(String, Duration)} for {@code tenant}'s queue, waiting up to {@code timeout}. */
    public List<Moved> advance(UUID tenant, String queue, Duration by, Duration timeout) {
        if (by.isNegative()) {
            throw new IllegalArgumentException("a clock moves forward only: " + by);
        }
        return move(tenant, queue, by, timeout);
    }

    private List<Moved> move(UUID tenant, String queue, Duration by, Duration timeout) {
        List<Moved> moved = new ArrayList<>();
        try (Connection c = owner.getConnection();
                PreparedStatement st = c.prepareStatement("SELECT timer_key, txn, deliver_at, due FROM queen.timer_advance_v1(?, ?, ?::interval)")) {
            st.setObject(1, tenant);
            st.setString(2, queue);
            st.setString(3, by == null ? null : by.toNanos() / 1000 + " microseconds");
            try (ResultSet rs = st.executeQuery()) {
                while (rs.next()) {
                    moved.add(new Moved(rs.getString("timer_key"), rs.getString("txn"),
                            rs.getObject("deliver_at", OffsetDateTime.class).toInstant(), rs.getBoolean("due")));
                }
            }
        } catch (SQLException e) {
            throw new IllegalStateException("cannot move the due times of " + queue + ": " + e.getMessage(), e);
        }
        awaitFired(tenant, queue, moved.stream().filter(Moved::due).toList(), timeout);
        return moved;
    }

    /** Until no row of {@code due} is staged any more with its txn: the fire deleted it (or replaced a recurring one). */
    private void awaitFired(UUID tenant, String queue, List<Moved> due, Duration timeout) {
        if (due.isEmpty()) {
            return;
        }
        long deadline = System.nanoTime() + timeout.toNanos();
        List<String> left = List.of();
        while (System.nanoTime() < deadline) {
            left = staged(tenant, queue, due);
            if (left.isEmpty()) {
                return;
            }
            try {
                Thread.sleep(20);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException("interrupted while waiting for the fires of " + queue, e);
            }
        }
        throw new AssertionError(left.size() + " of " + due.size() + " timers of " + queue + " made due did not fire within "
                + timeout + ": " + left + " (is the sweeper running? see its log)");
    }

    private List<String> staged(UUID tenant, String queue, List<Moved> due) {
        String sql = "SELECT t.timer_key FROM queen.log_timers t JOIN unnest(?::text[], ?::text[]) AS m(k, x)"
                + " ON t.timer_key = m.k COLLATE \"C\" AND t.txn = m.x WHERE t.tenant_id = ? AND t.queue = ? COLLATE \"C\" ORDER BY t.timer_key";
        try (Connection c = owner.getConnection(); PreparedStatement st = c.prepareStatement(sql)) {
            Array keys = c.createArrayOf("text", due.stream().map(Moved::timerKey).toArray());
            Array txns = c.createArrayOf("text", due.stream().map(Moved::txn).toArray());
            st.setArray(1, keys);
            st.setArray(2, txns);
            st.setObject(3, tenant);
            st.setString(4, queue);
            List<String> out = new ArrayList<>();
            try (ResultSet rs = st.executeQuery()) {
                while (rs.next()) {
                    out.add(rs.getString("timer_key"));
                }
            }
            return out;
        } catch (SQLException e) {
            throw new IllegalStateException("cannot read the staged timers of " + queue + ": " + e.getMessage(), e);
        }
    }
}
