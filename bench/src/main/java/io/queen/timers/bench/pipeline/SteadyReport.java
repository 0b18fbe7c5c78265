package io.queen.timers.bench.pipeline;

import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.function.DoubleSupplier;

/**
 * What the steady comparison of issue 48 reports for each system it runs (ours, db-scheduler's no-op tasks, the same job
 * built on db-scheduler), computed one way for all three so that their ratios compare like with like.
 *
 * <p>Each system starts cold and is fed at its rate from the moment it reports ready. Two windows:
 * <ul>
 * <li><b>first minute</b> ({@code first} seconds after ready): the lateness of what fired in it: JIT, connection pools,
 *     the queues' provisioning;</li>
 * <li><b>warm</b>: lateness of everything fired after it; CPU and WAL from its start to the end of the feed, per unit of
 *     work done in it: (items scheduled + items fired in the window) / 2, so a system that falls behind is charged for
 *     what it did, not for what it was sent.</li>
 * </ul>
 * The whole run (feed start → last fired) is printed beside, per item. CPU from /proc (or the JVM's own counter), one
 * source per process, PostgreSQL its whole process tree (autovacuum and checkpointer included); WAL from
 * {@code pg_current_wal_lsn()} and {@code pg_stat_wal}; commits from {@code pg_stat_database} (the whole server: the
 * bench's own few queries are in them).
 */
public final class SteadyReport {

    /** PostgreSQL's cumulative counters at one instant. */
    public record Counters(long walLsn, long walRecords, long walFpi, long walBytes, long commits) {
        public static Counters read(Connection c) throws SQLException {
            try (Statement st = c.createStatement(); ResultSet rs = st.executeQuery(
                    "SELECT pg_current_wal_lsn() - '0/0', w.wal_records, w.wal_fpi, w.wal_bytes,"
                            + " (SELECT sum(xact_commit) FROM pg_stat_database)::bigint FROM pg_stat_wal w")) {
                rs.next();
                return new Counters(rs.getLong(1), rs.getLong(2), rs.getLong(3), rs.getLong(4), rs.getLong(5));
            }
        }
    }

    /** CPU seconds of every measured process, and PostgreSQL's counters, at {@code atMs}. */
    public record Snapshot(long atMs, Map<String, Double> cpu, Counters pg) {}

    /** Takes snapshots: the CPU sources by name (the name {@value #POSTGRES} is PostgreSQL's tree, {@value #BROKER} the broker). */
    public static final class Meter {
        private final Map<String, DoubleSupplier> sources;
        private final SqlConnect pg;

        public Meter(Map<String, DoubleSupplier> sources, SqlConnect pg) {
            this.sources = new LinkedHashMap<>(sources);
            this.pg = pg;
        }

        public Snapshot snap() {
            long at = System.currentTimeMillis();
            Map<String, Double> cpu = new LinkedHashMap<>();
            sources.forEach((k, v) -> cpu.put(k, v.getAsDouble()));
            try (Connection c = pg.connect()) {
                return new Snapshot(at, cpu, Counters.read(c));
            } catch (SQLException e) {
                throw new IllegalStateException("reading PostgreSQL's counters failed: " + e.getMessage(), e);
            }
        }
    }

    @FunctionalInterface
    public interface SqlConnect {
        Connection connect() throws SQLException;
    }

    public static final String POSTGRES = "PostgreSQL";
    public static final String BROKER = "broker";

    /**
     * One system's run. {@code scheduledAt}: when each item's scheduling was done (its {@code scheduled} event, or the
     * feeder's batch); {@code firedAt} and {@code lateMs}: each fired item, aligned. {@code feedStart} is taken at ready,
     * {@code windowStart} {@code first} seconds later, {@code feedEnd} when the last item was handed over, {@code end}
     * when the last fired (or the wait for it gave up: {@code keptUp} false).
     */
    public record Run(String label, String what, String unit, int items, Snapshot feedStart, Snapshot windowStart, Snapshot feedEnd,
            Snapshot end, long[] scheduledAt, long[] firedAt, long[] lateMs, boolean keptUp) {}

    /** The numbers a ratio is made of, per item of the warm window; {@code jvm} is the system's own processes. */
    public record Measured(double all, double jvmPg, double jvm, double postgres, double broker, double p99, double firstMinuteP99,
            double walBytes, double walRecords, double commits) {}

    private SteadyReport() {}

    /** Prints the run (lines through {@code log}, figures on stdout) and returns its warm numbers. */
    public static Measured report(Run r, java.util.function.Consumer<String> log) {
        long first = r.windowStart().atMs();
        long[] firstLate = lateBetween(r, r.feedStart().atMs(), first);
        long[] warmLate = lateBetween(r, first, Long.MAX_VALUE);
        double units = (count(r.scheduledAt(), first, r.feedEnd().atMs()) + count(r.firedAt(), first, r.feedEnd().atMs())) / 2.0;
        int fired = r.firedAt().length;
        log.accept(String.format("%s: %,d %ss fed from ready; %,d fired; kept up (all fired, the last within 15 s of the latest due"
                + " time): %s", r.what(), r.items(), r.unit(), fired, r.keptUp() ? "yes" : "NO: its CPU per " + r.unit()
                + " below is of a system running behind (larger batches), not of one that keeps the pace"));
        log.accept(String.format("  lateness, first %.0f s after ready (%,d fired): %s", (first - r.feedStart().atMs()) / 1000.0,
                firstLate.length, percentiles(firstLate)));
        log.accept(String.format("  lateness, warm: after it (%,d fired): %s", warmLate.length, percentiles(warmLate)));
        Map<String, Double> warm = perItem(r.windowStart(), r.feedEnd(), units);
        Map<String, Double> whole = perItem(r.feedStart(), r.end(), Math.max(1, fired));
        Set<String> jvm = jvmNames(warm.keySet());
        log.accept(String.format("  CPU µs per %s, warm window %.0f-%.0f s (%,.0f %ss of work: scheduled + fired in it, / 2): %s",
                r.unit(), (first - r.feedStart().atMs()) / 1000.0, (r.feedEnd().atMs() - r.feedStart().atMs()) / 1000.0, units, r.unit(),
                cpuLine(warm, jvm)));
        log.accept(String.format("  CPU µs per %s, whole run (ready → last fired, %,d fired): %s", r.unit(), fired, cpuLine(whole, jvm)));
        Counters dw = minus(r.feedEnd().pg(), r.windowStart().pg());
        Counters da = minus(r.end().pg(), r.feedStart().pg());
        log.accept(String.format("  WAL per %s, warm: %,.0f bytes (LSN), %.1f records, %.2f full-page images, %.2f commits;"
                        + " whole run: %,.0f bytes, %.1f records", r.unit(), dw.walLsn() / units, dw.walRecords() / units,
                dw.walFpi() / units, dw.commits() / units, da.walLsn() / (double) Math.max(1, fired), da.walRecords() / (double) Math.max(1, fired)));

        double pg = warm.getOrDefault(POSTGRES, 0.0);
        double broker = warm.getOrDefault(BROKER, 0.0);
        double j = jvm.stream().mapToDouble(warm::get).sum();
        String u = r.unit();
        figure(r.label(), "cpu_us_per_" + u, j + pg + broker, "us");
        if (broker > 0) {
            figure(r.label(), "cpu_us_per_" + u + "_without_broker", j + pg, "us");
            figure(r.label(), "cpu_us_per_" + u + "_broker", broker, "us");
        }
        figure(r.label(), "cpu_us_per_" + u + "_postgres", pg, "us");
        for (String name : jvm) {
            figure(r.label(), "cpu_us_per_" + u + "_" + name.replaceAll("[^A-Za-z0-9]+", "_").toLowerCase(Locale.ROOT), warm.get(name), "us");
        }
        figure(r.label(), "cpu_us_per_" + u + "_whole_run", whole.values().stream().mapToDouble(Double::doubleValue).sum(), "us");
        figure(r.label(), "p50_ms", pct(warmLate, 0.50), "ms");
        figure(r.label(), "p99_ms", pct(warmLate, 0.99), "ms");
        figure(r.label(), "p999_ms", pct(warmLate, 0.999), "ms");
        figure(r.label(), "max_ms", pct(warmLate, 1.0), "ms");
        figure(r.label(), "first_minute_p50_ms", pct(firstLate, 0.50), "ms");
        figure(r.label(), "first_minute_p99_ms", pct(firstLate, 0.99), "ms");
        figure(r.label(), "first_minute_p999_ms", pct(firstLate, 0.999), "ms");
        figure(r.label(), "first_minute_max_ms", pct(firstLate, 1.0), "ms");
        figure(r.label(), "wal_bytes_per_" + u, dw.walLsn() / units, "bytes");
        figure(r.label(), "wal_records_per_" + u, dw.walRecords() / units, "records");
        figure(r.label(), "commits_per_" + u, dw.commits() / units, "commits");
        figure(r.label(), "kept_up", r.keptUp() ? 1 : 0, "bool");
        return new Measured(j + pg + broker, j + pg, j, pg, broker, pct(warmLate, 0.99), pct(firstLate, 0.99), dw.walLsn() / units,
                dw.walRecords() / units, dw.commits() / units);
    }

    /** The system's own processes: every source but PostgreSQL and the broker. */
    private static Set<String> jvmNames(Set<String> names) {
        Set<String> s = new java.util.LinkedHashSet<>(names);
        s.remove(POSTGRES);
        s.remove(BROKER);
        return s;
    }

    private static String cpuLine(Map<String, Double> per, Set<String> jvm) {
        StringBuilder b = new StringBuilder();
        per.forEach((k, v) -> b.append(String.format("%s %.0f, ", k, v)));
        double j = jvm.stream().mapToDouble(per::get).sum();
        double pg = per.getOrDefault(POSTGRES, 0.0);
        double broker = per.getOrDefault(BROKER, 0.0);
        b.append(String.format("JVMs + PostgreSQL %.0f", j + pg));
        if (per.containsKey(BROKER)) {
            b.append(String.format(", with the broker %.0f", j + pg + broker));
        }
        return b.toString();
    }

    private static Map<String, Double> perItem(Snapshot from, Snapshot to, double items) {
        Map<String, Double> m = new LinkedHashMap<>();
        to.cpu().forEach((k, v) -> m.put(k, (v - from.cpu().getOrDefault(k, 0.0)) * 1e6 / items));
        return m;
    }

    private static Counters minus(Counters a, Counters b) {
        return new Counters(a.walLsn() - b.walLsn(), a.walRecords() - b.walRecords(), a.walFpi() - b.walFpi(), a.walBytes() - b.walBytes(),
                a.commits() - b.commits());
    }

    private static long count(long[] at, long from, long to) {
        return Arrays.stream(at).filter(t -> t >= from && t < to).count();
    }

    /** Sorted lateness of the items fired within [from, to). */
    public static long[] lateBetween(Run r, long from, long to) {
        long[] out = new long[r.firedAt().length];
        int n = 0;
        for (int i = 0; i < r.firedAt().length; i++) {
            if (r.firedAt()[i] >= from && r.firedAt()[i] < to) {
                out[n++] = r.lateMs()[i];
            }
        }
        long[] s = Arrays.copyOf(out, n);
        Arrays.sort(s);
        return s;
    }

    public static String percentiles(long[] sorted) {
        return String.format("p50 %d ms, p99 %d ms, p99.9 %d ms, max %d ms", pct(sorted, 0.5), pct(sorted, 0.99), pct(sorted, 0.999),
                pct(sorted, 1.0));
    }

    public static long pct(long[] sorted, double p) {
        return sorted.length == 0 ? 0 : sorted[(int) Math.min(sorted.length - 1, Math.round(p * (sorted.length - 1)))];
    }

    /** One number as bench/run collects it: {@code figure <label>.<name> <value> <unit>}. */
    public static void figure(String label, String name, double value, String unit) {
        System.out.printf(Locale.ROOT, "figure %s.%s %.1f %s%n", label, name, value, unit);
        System.out.flush();
    }

    /** Arrays from the lists an {@link AuditWatch} keeps. */
    static long[] longs(List<Long> l) {
        synchronized (l) {
            return l.stream().mapToLong(Long::longValue).toArray();
        }
    }
}
