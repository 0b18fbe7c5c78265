package io.queen.timers.bench.sweeper;

import io.micrometer.core.instrument.MeterRegistry;
import io.queen.timers.relay.AuditSettings;
import io.queen.timers.core.config.CommonSettings;
import io.queen.timers.core.ops.Dependencies;
import io.queen.timers.sweeper.SweeperMain;
import io.queen.timers.sweeper.SweeperSettings;
import io.queen.timers.stack.Kafka;
import io.queen.timers.stack.Postgres;
import io.queen.timers.stack.ServiceSettings;
import io.queen.timers.stack.Stack;
import io.queen.timers.testkit.FreshDatabase;
import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.lang.management.MemoryPoolMXBean;
import java.lang.management.MemoryType;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.function.Consumer;
import javax.sql.DataSource;

/**
 * What the sweeper benchmarks share: a stack on the benchmark's database (the owner migrates; no broker runs here, so
 * the sweepers' relays are off and the outbox rows stay, read back for lateness), a sweeper on it as deployed (its
 * login of queen_sweeper, db.role.check on, default settings except where a benchmark says otherwise), SQL helpers and
 * the memory report (heap peak of this JVM, run with -Xmx256m, and its RSS high-water mark).
 */
public final class BenchStack {

    private BenchStack() {}

    /** A stack on {@code db}, migrated by its owner, without a broker. */
    public static Stack stack(FreshDatabase db) {
        return Stack.builder().postgres(Postgres.external(db.jdbcUrl(), db.user(), db.password())).kafka(Kafka.none()).migrated().start();
    }

    /** A sweeper of {@code stack} with a pool of {@code poolSize}, no relay and no cleanup, and what {@code settings} adds. */
    public static SweeperMain startSweeper(Stack stack, int poolSize, MeterRegistry registry, Consumer<ServiceSettings> settings) {
        return stack.start(SweeperMain.SERVICE, (s, st) -> {
            s.set(CommonSettings.JDBC_POOL_SIZE, poolSize).set(AuditSettings.RELAY_ENABLED, false).set(SweeperSettings.CLEANUP_ENABLED, false);
            settings.accept(s);
        }, Dependencies.defaults(registry));
    }

    /** Timers the sweeper fired so far, from its own meter (no query: polling the database would load it). */
    public static double fired(MeterRegistry registry) {
        return registry.get("queen.timers.fired").tag("result", "fired").counter().count();
    }

    /** Claim and fire calls: count, total and mean time, from the sweeper's own timers. */
    public static String callTimes(MeterRegistry registry) {
        var claim = registry.get("queen.timers.claim.duration").timer();
        var fire = registry.get("queen.timers.fire.duration").timer();
        return String.format("CALLS claim: %d calls, %.0f ms total, %.1f ms mean; fire: %d calls, %.0f ms total, %.1f ms mean",
                claim.count(), claim.totalTime(java.util.concurrent.TimeUnit.MILLISECONDS), claim.mean(java.util.concurrent.TimeUnit.MILLISECONDS),
                fire.count(), fire.totalTime(java.util.concurrent.TimeUnit.MILLISECONDS), fire.mean(java.util.concurrent.TimeUnit.MILLISECONDS));
    }

    /** Waits until the sweeper's meter says {@code n} timers were fired. */
    public static void awaitFired(MeterRegistry registry, long n, Duration timeout) throws InterruptedException {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (fired(registry) < n) {
            if (System.nanoTime() > deadline) {
                throw new IllegalStateException("only " + (long) fired(registry) + " of " + n + " timers fired within " + timeout);
            }
            Thread.sleep(10);
        }
    }

    public static void execute(DataSource ds, String sql) throws SQLException {
        try (Connection c = ds.getConnection(); Statement st = c.createStatement()) {
            st.execute(sql);
        }
    }

    public static long longOf(DataSource ds, String sql) throws SQLException {
        try (Connection c = ds.getConnection(); Statement st = c.createStatement(); ResultSet rs = st.executeQuery(sql)) {
            rs.next();
            return rs.getLong(1);
        }
    }

    public static double doubleOf(DataSource ds, String sql) throws SQLException {
        try (Connection c = ds.getConnection(); Statement st = c.createStatement(); ResultSet rs = st.executeQuery(sql)) {
            rs.next();
            return rs.getDouble(1);
        }
    }

    /** Inserts {@code n} timers over {@code queues} queues, 200-byte JSON payloads, due at {@code deliverAtSql}. */
    public static void insertTimers(DataSource ds, String keyPrefix, int n, int queues, String deliverAtSql) throws SQLException {
        insertTimers(ds, "bench.q", keyPrefix, n, queues, deliverAtSql);
    }

    /** As {@link #insertTimers(DataSource, String, int, int, String)}, into queues named {@code queuePrefix + i}. */
    public static void insertTimers(DataSource ds, String queuePrefix, String keyPrefix, int n, int queues, String deliverAtSql)
            throws SQLException {
        execute(ds, "INSERT INTO queen.log_timers (queue, timer_key, deliver_at, txn, message_id, payload)"
                + " SELECT '" + queuePrefix + "' || (g % " + queues + "), '" + keyPrefix + "' || g, " + deliverAtSql + ", 'txn-" + keyPrefix + "' || g,"
                + " gen_random_uuid(), convert_to(rpad('{\"n\":' || g || ',\"pad\":\"', 198, 'x') || '\"}', 'UTF8')"
                + " FROM generate_series(1, " + n + ") g");
    }

    /** p50 / p99 / max of the fired timers' lateness (segment created_at - deliver_at), from the fired audit rows. */
    public static String latenessOfFired(DataSource ds, String where) throws SQLException {
        try (Connection c = ds.getConnection(); Statement st = c.createStatement();
                ResultSet rs = st.executeQuery("SELECT count(*), percentile_cont(0.5) WITHIN GROUP (ORDER BY (event->>'lateMs')::bigint),"
                        + " percentile_cont(0.99) WITHIN GROUP (ORDER BY (event->>'lateMs')::bigint), max((event->>'lateMs')::bigint)"
                        + " FROM queen.timer_audit_events WHERE type = 'fired' AND " + where)) {
            rs.next();
            return String.format("n=%d p50=%.0f ms p99=%.0f ms max=%d ms", rs.getLong(1), rs.getDouble(2), rs.getDouble(3), rs.getLong(4));
        }
    }

    public static double percentile(List<Double> values, double p) {
        List<Double> sorted = new ArrayList<>(values);
        Collections.sort(sorted);
        return sorted.get((int) Math.min(sorted.size() - 1, Math.round(p * (sorted.size() - 1))));
    }

    /**
     * This JVM's memory: the largest heap still in use right after a collection (live data, the number that
     * has to fit in -Xmx), the sum of the heap pools' peaks (includes garbage not collected yet), -Xmx, and the
     * RSS high-water mark from /proc/self/status.
     */
    public static String memory() {
        long peak = 0;
        long afterGc = 0;
        for (MemoryPoolMXBean pool : ManagementFactory.getMemoryPoolMXBeans()) {
            if (pool.getType() == MemoryType.HEAP) {
                peak += pool.getPeakUsage().getUsed();
                if (pool.getCollectionUsage() != null) {
                    afterGc = Math.max(afterGc, pool.getCollectionUsage().getUsed());
                }
            }
        }
        long max = Runtime.getRuntime().maxMemory();
        String rss = "?";
        try {
            for (String line : Files.readAllLines(Path.of("/proc/self/status"))) {
                if (line.startsWith("VmHWM:")) {
                    rss = Long.parseLong(line.replaceAll("[^0-9]", "")) / 1024 + " MiB";
                }
            }
        } catch (IOException | RuntimeException e) {
            rss = "unknown (" + e.getMessage() + ")";
        }
        return String.format("MEMORY -Xmx %d MiB; heap in use after the last GC of the largest pool %d MiB; sum of heap pool"
                + " peaks %d MiB (includes uncollected garbage); JVM RSS high-water %s (PostgreSQL runs as its own processes)",
                max >> 20, afterGc >> 20, peak >> 20, rss);
    }

    public static int intArg(String[] args, String name, int dflt) {
        for (String a : args) {
            if (a.startsWith(name + "=")) {
                return Integer.parseInt(a.substring(name.length() + 1));
            }
        }
        return dflt;
    }
}
