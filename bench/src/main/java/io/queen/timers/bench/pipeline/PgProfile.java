package io.queen.timers.bench.pipeline;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.function.Consumer;

/**
 * The PostgreSQL half of {@code PipelineBench --profile} (issue 48, point 1), every result written into the run's output
 * directory and its summary printed:
 * <ul>
 * <li><b>statements</b> ({@code pg_stat_statements}, {@code track = all}, {@code track_planning = on}): every statement
 *     by execution + planning time, with calls, mean execution and planning ms, rows, WAL and µs per timer. With
 *     {@code track = all} a function's call counts the statements inside it too, which appear again on their own rows
 *     ({@code top} = false): read a nested row as a part of its caller, never add it to it;</li>
 * <li><b>wait events</b>: {@code pg_stat_activity} sampled every 100 ms, counted by login (or background process),
 *     wait_event_type and wait_event; an active backend with no wait event is on the CPU ({@code CPU}); a client backend
 *     idle inside a transaction is waiting for its client's next statement ({@code IdleInTx}: a round trip the service
 *     pays with its locks held); each count divided by the samples is the average number of backends in that state;</li>
 * <li><b>stalls</b>: per second, the same counts by class, the autovacuum workers' relations
 *     ({@code pg_stat_progress_vacuum}), whether the checkpointer was writing or syncing, and the WAL written: joined by
 *     PipelineBench with the lateness of what fired in that second ({@code timeline.tsv});</li>
 * <li><b>checkpoints, autovacuum, table activity</b> between two marks: {@code pg_stat_bgwriter} (and
 *     {@code pg_stat_checkpointer} on 17+), {@code pg_stat_user_tables} (inserts, HOT and non-HOT updates, deletes,
 *     dead tuples, (auto)vacuum and (auto)analyze counts) of every table written.</li>
 * </ul>
 * The sampler's own queries (10 per second) are in PostgreSQL's CPU of a profile run: a profile's CPU is not a figure.
 */
final class PgProfile implements AutoCloseable {

    /** Wait events of a background process at rest in its main loop: not activity. */
    private static final Set<String> AT_REST = Set.of("CheckpointerMain", "WalWriterMain", "BgWriterMain", "BgWriterHibernate",
            "AutoVacuumMain", "LogicalLauncherMain", "ArchiverMain", "SysLoggerMain", "WalSummarizerWal");

    private final SteadyReport.SqlConnect connect;
    private final Path out;
    private final Consumer<String> log;
    private final Map<String, Long> counts = new TreeMap<>();
    /** Per second since {@link #start}: counts by class, autovacuum relations, checkpointer samples, WAL LSN. */
    private final Map<Long, Second> seconds = new TreeMap<>();
    private volatile boolean running;
    private Thread thread;
    private long t0;
    private long samples;

    /** One second of samples. */
    static final class Second {
        long samples;
        final Map<String, Long> byClass = new TreeMap<>();
        final Set<String> vacuuming = new TreeSet<>();
        long checkpointing;
        long walLsn = -1;
        /** Once a second: commands applied (the bridges' stored offsets), timers due and not fired, outbox rows not published. */
        long applied = -1;
        long dueBacklog = -1;
        long outboxRows = -1;
    }

    PgProfile(SteadyReport.SqlConnect connect, Path out, Consumer<String> log) {
        this.connect = connect;
        this.out = out;
        this.log = log;
    }

    /** Samples every 100 ms from {@code t0Ms} (the second numbers of the timeline count from it). */
    void start(long t0Ms) {
        this.t0 = t0Ms;
        running = true;
        thread = new Thread(this::sample, "pg-wait-sampler");
        thread.setDaemon(true);
        thread.start();
    }

    private void sample() {
        try (Connection c = connect.connect(); Statement st = c.createStatement()) {
            long next = System.currentTimeMillis();
            while (running) {
                long now = System.currentTimeMillis();
                synchronized (this) {
                    Second s = seconds.computeIfAbsent((now - t0) / 1000, k -> new Second());
                    samples++;
                    s.samples++;
                    try (ResultSet rs = st.executeQuery("SELECT coalesce(usename, backend_type), backend_type, state, wait_event_type, wait_event"
                            + " FROM pg_stat_activity WHERE pid <> pg_backend_pid()")) {
                        while (rs.next()) {
                            String who = rs.getString(1);
                            String type = rs.getString(2);
                            String state = rs.getString(3);
                            String wtype = rs.getString(4);
                            String wevent = rs.getString(5);
                            String cls;
                            String event;
                            if ("client backend".equals(type)) {
                                if ("active".equals(state)) {
                                    cls = wtype == null ? "CPU" : wtype;
                                    event = wevent == null ? "-" : wevent;
                                } else if (state != null && state.startsWith("idle in transaction")) {
                                    cls = "IdleInTx";
                                    event = "client's turn";
                                } else {
                                    continue;
                                }
                            } else {
                                if (wevent != null && AT_REST.contains(wevent)) {
                                    continue;
                                }
                                cls = wtype == null ? "CPU" : wtype;
                                event = wevent == null ? "-" : wevent;
                                if ("checkpointer".equals(type)) {
                                    s.checkpointing++;
                                }
                            }
                            counts.merge(who + "\t" + cls + "\t" + event, 1L, Long::sum);
                            s.byClass.merge(("client backend".equals(type) ? "" : type + ":") + cls, 1L, Long::sum);
                        }
                    }
                    try (ResultSet rs = st.executeQuery("SELECT coalesce(c.relname, p.relid::text) || ' (' || p.phase || ')'"
                            + " FROM pg_stat_progress_vacuum p LEFT JOIN pg_class c ON c.oid = p.relid")) {
                        while (rs.next()) {
                            s.vacuuming.add(rs.getString(1));
                        }
                    }
                    if (s.walLsn < 0) {
                        // where the work waits, once a second: in Kafka (produced - applied), in the staging table (due,
                        // not fired), in the outbox (not published)
                        try (ResultSet rs = st.executeQuery("SELECT pg_current_wal_lsn() - '0/0',"
                                + " (SELECT coalesce(sum(next_offset), 0) FROM queen.bridge_offsets),"
                                + " (SELECT count(*) FROM queen.log_timers WHERE visible_at <= now()),"
                                + " (SELECT count(*) FROM queen.timer_audit_outbox)")) {
                            rs.next();
                            s.walLsn = rs.getLong(1);
                            s.applied = rs.getLong(2);
                            s.dueBacklog = rs.getLong(3);
                            s.outboxRows = rs.getLong(4);
                        }
                    }
                }
                next += 100;
                long sleep = next - System.currentTimeMillis();
                if (sleep > 0) {
                    Thread.sleep(sleep);
                } else {
                    next = System.currentTimeMillis();
                }
            }
        } catch (SQLException e) {
            log.accept("  wait-event sampler stopped: " + e.getMessage());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /** The timeline's rows, second by second (for PipelineBench to join with lateness). */
    synchronized Map<Long, Second> seconds() {
        return new TreeMap<>(seconds);
    }

    synchronized long samples() {
        return samples;
    }

    @Override
    public void close() throws InterruptedException {
        running = false;
        if (thread != null) {
            thread.join(5_000);
        }
    }

    /** The wait-event counts since {@link #start}: printed (the top rows) and written whole to wait-events.tsv. */
    synchronized void writeWaitEvents() {
        List<String> lines = new ArrayList<>();
        lines.add("who\tclass\tevent\tsamples\tavg_backends");
        List<Map.Entry<String, Long>> sorted = new ArrayList<>(counts.entrySet());
        sorted.sort(Map.Entry.<String, Long>comparingByValue().reversed());
        log.accept(String.format("  wait events, %,d samples of pg_stat_activity every 100 ms (average backends in each state; CPU = active,"
                + " no wait event; IdleInTx = inside a transaction, waiting for the client):", samples));
        int shown = 0;
        for (Map.Entry<String, Long> e : sorted) {
            double avg = e.getValue() / (double) Math.max(1, samples);
            lines.add(e.getKey() + "\t" + e.getValue() + "\t" + String.format(Locale.ROOT, "%.4f", avg));
            if (shown++ < 30) {
                String[] k = e.getKey().split("\t");
                log.accept(String.format("    %6.3f  %-22s %-10s %s", avg, k[0], k[1], k[2]));
            }
        }
        write("wait-events.tsv", lines);
    }

    /** Empties pg_stat_statements: what the next {@link #dumpStatements} prints began here. */
    void resetStatements() throws SQLException {
        try (Connection c = connect.connect(); Statement st = c.createStatement()) {
            st.execute("SELECT pg_stat_statements_reset()");
        }
    }

    /** One row of pg_stat_statements. */
    record StatementRow(double totalMs, double planMs, long calls, double meanExecMs, double meanPlanMs, long plans, long rows,
            double walBytes, long walRecords, long blksHit, long blksRead, long blksDirtied, boolean toplevel, String query) {}

    /** Every statement since the last reset (kept to be printed once the window's work is counted). */
    List<StatementRow> captureStatements() throws SQLException {
        List<StatementRow> rows = new ArrayList<>();
        try (Connection c = connect.connect(); Statement st = c.createStatement();
                ResultSet rs = st.executeQuery("SELECT total_exec_time + total_plan_time, total_plan_time, calls, mean_exec_time,"
                        + " CASE WHEN plans > 0 THEN total_plan_time / plans ELSE 0 END, plans, rows, wal_bytes, wal_records,"
                        + " shared_blks_hit, shared_blks_read, shared_blks_dirtied, toplevel, regexp_replace(query, '\\s+', ' ', 'g')"
                        + " FROM pg_stat_statements ORDER BY 1 DESC")) {
            while (rs.next()) {
                rows.add(new StatementRow(rs.getDouble(1), rs.getDouble(2), rs.getLong(3), rs.getDouble(4), rs.getDouble(5), rs.getLong(6),
                        rs.getLong(7), rs.getDouble(8), rs.getLong(9), rs.getLong(10), rs.getLong(11), rs.getLong(12), rs.getBoolean(13),
                        rs.getString(14)));
            }
        }
        return rows;
    }

    /**
     * Captured statements by execution + planning time: the top {@code top} printed with their µs per {@code unit} over
     * {@code units}, all of them written to {@code <name>-statements.tsv}.
     */
    void printStatements(String name, List<StatementRow> rows, double units, String unit, int top) {
        List<String> lines = new ArrayList<>();
        lines.add("us_per_" + unit + "\texec_plus_plan_ms\tplan_ms\tcalls\tcalls_per_" + unit + "\tmean_exec_ms\tmean_plan_ms\tplans\trows"
                + "\twal_bytes_per_" + unit + "\twal_records_per_" + unit + "\tshared_blks_hit\tshared_blks_read\tshared_blks_dirtied\ttoplevel\tquery");
        log.accept(String.format("  statements (%s; pg_stat_statements, track = all: a nested statement [n] is part of its caller's time;"
                + " µs per %s over %,.0f %ss of work):", name, unit, units, unit));
        log.accept(String.format("    %8s %8s %9s %8s %8s %9s %8s %8s  %s", "µs/" + unit, "plan µs", "calls", "calls/" + unit, "exec ms",
                "plan ms", "rows/call", "WAL B/" + unit, "statement"));
        int n = 0;
        for (StatementRow r : rows) {
            lines.add(String.format(Locale.ROOT, "%.2f\t%.1f\t%.1f\t%d\t%.4f\t%.4f\t%.4f\t%d\t%d\t%.1f\t%.2f\t%d\t%d\t%d\t%s\t%s",
                    r.totalMs() * 1000 / units, r.totalMs(), r.planMs(), r.calls(), r.calls() / units, r.meanExecMs(), r.meanPlanMs(), r.plans(),
                    r.rows(), r.walBytes() / units, r.walRecords() / units, r.blksHit(), r.blksRead(), r.blksDirtied(), r.toplevel(), r.query()));
            if (n++ < top) {
                String q = r.query();
                log.accept(String.format("    %8.1f %8.1f %9d %8.3f %8.3f %9.3f %8.1f %8.0f  %s%s", r.totalMs() * 1000 / units,
                        r.planMs() * 1000 / units, r.calls(), r.calls() / units, r.meanExecMs(), r.meanPlanMs(),
                        r.calls() == 0 ? 0 : r.rows() / (double) r.calls(), r.walBytes() / units, r.toplevel() ? "" : "[n] ",
                        q.length() > 120 ? q.substring(0, 120) : q));
            }
        }
        write(name + "-statements.tsv", lines);
    }

    /** Cumulative counters of the checkpointer and of every user table, to diff two marks. */
    record Stats(Map<String, Long> server, Map<String, long[]> tables) {}

    private static final String[] TABLE_COLUMNS = {"n_tup_ins", "n_tup_upd", "n_tup_hot_upd", "n_tup_del", "n_dead_tup", "vacuum_count",
            "autovacuum_count", "analyze_count", "autoanalyze_count"};

    Stats stats() throws SQLException {
        Map<String, Long> server = new LinkedHashMap<>();
        Map<String, long[]> tables = new TreeMap<>();
        try (Connection c = connect.connect(); Statement st = c.createStatement()) {
            boolean v17 = c.getMetaData().getDatabaseMajorVersion() >= 17;
            String sql = v17
                    ? "SELECT c.num_timed, c.num_requested, c.write_time, c.sync_time, c.buffers_written, b.buffers_clean, b.buffers_alloc, 0"
                            + " FROM pg_stat_checkpointer c, pg_stat_bgwriter b"
                    : "SELECT checkpoints_timed, checkpoints_req, checkpoint_write_time, checkpoint_sync_time, buffers_checkpoint,"
                            + " buffers_clean, buffers_alloc, buffers_backend FROM pg_stat_bgwriter";
            try (ResultSet rs = st.executeQuery(sql)) {
                rs.next();
                String[] names = {"checkpoints timed", "checkpoints requested", "checkpoint write ms", "checkpoint sync ms",
                        "buffers written by checkpoints", "buffers written by the bgwriter", "buffers allocated", "buffers written by backends"};
                for (int i = 0; i < names.length; i++) {
                    server.put(names[i], (long) rs.getDouble(i + 1));
                }
            }
            try (ResultSet rs = st.executeQuery("SELECT schemaname || '.' || relname, " + String.join(", ", TABLE_COLUMNS)
                    + " FROM pg_stat_user_tables")) {
                while (rs.next()) {
                    long[] v = new long[TABLE_COLUMNS.length];
                    for (int i = 0; i < v.length; i++) {
                        v[i] = rs.getLong(i + 2);
                    }
                    tables.put(rs.getString(1), v);
                }
            }
        }
        return new Stats(server, tables);
    }

    /** What changed between two marks: printed, and written to {@code <name>-tables.tsv}. */
    void printStats(String name, Stats from, Stats to, double units, String unit) {
        StringBuilder b = new StringBuilder();
        to.server().forEach((k, v) -> b.append(k).append(' ').append(v - from.server().getOrDefault(k, 0L)).append(", "));
        log.accept("  checkpoints and buffers (" + name + "): " + b.substring(0, Math.max(0, b.length() - 2)));
        List<String> lines = new ArrayList<>();
        lines.add("table\t" + String.join("\t", TABLE_COLUMNS) + "\t(n_dead_tup: at the end)");
        log.accept(String.format("  tables written (%s; per %s: inserts, updates (HOT), deletes; dead tuples at the end; (auto)vacuums, (auto)analyzes):",
                name, unit));
        for (Map.Entry<String, long[]> e : to.tables().entrySet()) {
            long[] a = from.tables().getOrDefault(e.getKey(), new long[TABLE_COLUMNS.length]);
            long[] z = e.getValue();
            long[] d = new long[z.length];
            for (int i = 0; i < z.length; i++) {
                d[i] = i == 4 ? z[i] : z[i] - a[i];
            }
            if (d[0] + d[1] + d[3] + d[5] + d[6] == 0) {
                continue;
            }
            StringBuilder row = new StringBuilder(e.getKey());
            for (long v : d) {
                row.append('\t').append(v);
            }
            lines.add(row.toString());
            log.accept(String.format("    %-34s ins %.2f, upd %.2f (HOT %.2f), del %.2f; dead %,d; vacuum %d (auto %d), analyze %d (auto %d)",
                    e.getKey(), d[0] / units, d[1] / units, d[2] / units, d[3] / units, d[4], d[5], d[6], d[7], d[8]));
        }
        write(name + "-tables.tsv", lines);
    }

    void write(String file, List<String> lines) {
        try {
            Files.createDirectories(out);
            Files.write(out.resolve(file), lines);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot write " + out.resolve(file), e);
        }
    }
}
