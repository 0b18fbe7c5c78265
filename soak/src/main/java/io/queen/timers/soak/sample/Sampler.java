package io.queen.timers.soak.sample;

import io.queen.timers.soak.report.Percentiles;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.function.LongSupplier;

/**
 * Takes one {@link Sample} of a running variant: PostgreSQL's statistics views and sizes for
 * {@code queen.log_timers}, its visible index and the outbox, WAL position, the sweepers' /metrics,
 * lateness decoded from the log, and CPU of every process from /proc. Interval values (rates, means,
 * CPU %) are differences against the previous sample, so the first sample of a variant has none.
 */
public final class Sampler {

    /** The processes whose CPU is sampled; pids may change if a process is restarted. */
    public record Pids(LongSupplier bridge, List<LongSupplier> sweepers, LongSupplier broker, LongSupplier postmaster) {
    }

    private static final String TABLES = """
            SELECT relname, n_live_tup, n_dead_tup, n_tup_ins, n_tup_upd, n_tup_hot_upd, n_tup_del, vacuum_count, autovacuum_count
              FROM pg_stat_user_tables WHERE schemaname = 'queen' AND relname IN ('log_timers', 'timer_audit_outbox')""";
    private static final String INDEX = """
            SELECT idx_scan, idx_tup_read FROM pg_stat_user_indexes
             WHERE schemaname = 'queen' AND indexrelname = 'idx_log_timers_visible'""";
    private static final String SIZES = """
            SELECT pg_relation_size('queen.log_timers'), pg_relation_size('queen.idx_log_timers_visible'),
                   pg_relation_size('queen.log_timers_pkey'), pg_total_relation_size('queen.timer_audit_outbox'),
                   pg_wal_lsn_diff(pg_current_wal_lsn(), '0/0')::bigint""";

    private final String variant;
    private final Connection db;
    private final List<URI> sweeperMetrics;
    private final Pids pids;
    private final LongSupplier produced;
    private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
    private final Lateness lateness = new Lateness();
    private final long tick;
    private final long startMs;
    private Double walStart;
    private Sample previous;
    private CallHistograms previousCalls;
    private double[] previousRaw;
    private long previousMs;

    public Sampler(String variant, Connection db, List<URI> sweeperMetrics, Pids pids, LongSupplier produced, long clockTicksPerSecond, long startMs) {
        this.variant = variant;
        this.db = db;
        this.sweeperMetrics = sweeperMetrics;
        this.pids = pids;
        this.produced = produced;
        this.tick = clockTicksPerSecond;
        this.startMs = startMs;
    }

    /** Raw cumulative values kept between samples for the interval columns. */
    private enum Raw { CLAIM_COUNT, CLAIM_SUM, FIRE_COUNT, FIRE_SUM, CPU_BRIDGE, CPU_SWEEPER, CPU_BROKER, CPU_POSTGRES, CPU_RIG }

    /**
     * One sample now, the lateness values of the frames it counted and the sweepers' cumulative call
     * histograms (for the variant's pooled percentiles over its steady half).
     */
    public record Taken(Sample sample, long[] lateness, CallHistograms calls) {
    }

    /** The claim and fire duration histograms of all sweepers, summed, cumulative since they started. */
    public record CallHistograms(Histogram claim, Histogram fire) {

        public static final CallHistograms NONE = new CallHistograms(Histogram.empty(), Histogram.empty());

        /** The interval's calls, null when a sweeper restarted in between (its buckets went down). */
        public CallHistograms since(CallHistograms earlier) {
            Histogram c = claim.minus(earlier.claim);
            Histogram f = fire.minus(earlier.fire);
            return c == null || f == null ? null : new CallHistograms(c, f);
        }
    }

    static final String CLAIM = "queen_timers_claim_duration_seconds";
    static final String FIRE = "queen_timers_fire_duration_seconds";

    public Taken take() throws SQLException {
        long now = System.currentTimeMillis();
        Sample s = Sample.blank(variant);
        double[] raw = new double[Raw.values().length];
        Arrays.fill(raw, Double.NaN);
        s.set(Column.T_S, (now - startMs) / 1000.0);
        s.set(Column.LOAD1, ProcStat.loadAverage());
        s.set(Column.PRODUCED, produced.getAsLong());
        try (Statement st = db.createStatement()) {
            try (ResultSet rs = st.executeQuery(TABLES)) {
                while (rs.next()) {
                    if (rs.getString(1).equals("log_timers")) {
                        s.set(Column.TIMERS_LIVE, rs.getLong(2));
                        s.set(Column.TIMERS_DEAD, rs.getLong(3));
                        s.set(Column.TIMERS_INS, rs.getLong(4));
                        s.set(Column.TIMERS_UPD, rs.getLong(5));
                        s.set(Column.TIMERS_HOT_UPD, rs.getLong(6));
                        s.set(Column.TIMERS_DEL, rs.getLong(7));
                        s.set(Column.TIMERS_VACUUMS, rs.getLong(8));
                        s.set(Column.TIMERS_AUTOVACUUMS, rs.getLong(9));
                    } else {
                        s.set(Column.OUTBOX_LIVE, rs.getLong(2));
                        s.set(Column.OUTBOX_DEAD, rs.getLong(3));
                        s.set(Column.OUTBOX_AUTOVACUUMS, rs.getLong(9));
                    }
                }
            }
            try (ResultSet rs = st.executeQuery(INDEX)) {
                if (rs.next()) {
                    s.set(Column.VISIBLE_IDX_SCANS, rs.getLong(1));
                    s.set(Column.VISIBLE_IDX_TUP_READ, rs.getLong(2));
                }
            }
            try (ResultSet rs = st.executeQuery(SIZES)) {
                rs.next();
                s.set(Column.TIMERS_HEAP_BYTES, rs.getLong(1));
                s.set(Column.VISIBLE_IDX_BYTES, rs.getLong(2));
                s.set(Column.PKEY_IDX_BYTES, rs.getLong(3));
                s.set(Column.OUTBOX_BYTES, rs.getLong(4));
                double wal = rs.getLong(5);
                if (walStart == null) {
                    walStart = wal;
                }
                s.set(Column.WAL_BYTES, wal - walStart);
            }
        }
        double fired = 0;
        double stale = 0;
        double due = 0;
        double permanent = 0;
        double dead = 0;
        double claimMax = Double.NaN;
        double fireMax = Double.NaN;
        raw[Raw.CLAIM_COUNT.ordinal()] = 0;
        raw[Raw.CLAIM_SUM.ordinal()] = 0;
        raw[Raw.FIRE_COUNT.ordinal()] = 0;
        raw[Raw.FIRE_SUM.ordinal()] = 0;
        Histogram claimBuckets = Histogram.empty();
        Histogram fireBuckets = Histogram.empty();
        for (URI uri : sweeperMetrics) {
            PromText m = scrape(uri);
            claimBuckets = claimBuckets.plus(Histogram.from(m, CLAIM));
            fireBuckets = fireBuckets.plus(Histogram.from(m, FIRE));
            fired += zeroIfNaN(m.value("queen_timers_fired_total", "result=\"fired\""));
            stale += zeroIfNaN(m.value("queen_timers_fired_total", "result=\"stale\""));
            due += zeroIfNaN(m.value("queen_timers_due"));
            permanent += zeroIfNaN(m.value("queen_timers_fire_failures_total", "class=\"permanent\""));
            dead += zeroIfNaN(m.value("queen_timers_dead_lettered_total"));
            raw[Raw.CLAIM_COUNT.ordinal()] += zeroIfNaN(m.value("queen_timers_claim_duration_seconds_count"));
            raw[Raw.CLAIM_SUM.ordinal()] += zeroIfNaN(m.value("queen_timers_claim_duration_seconds_sum"));
            raw[Raw.FIRE_COUNT.ordinal()] += zeroIfNaN(m.value("queen_timers_fire_duration_seconds_count"));
            raw[Raw.FIRE_SUM.ordinal()] += zeroIfNaN(m.value("queen_timers_fire_duration_seconds_sum"));
            claimMax = max(claimMax, m.value("queen_timers_claim_duration_seconds_max") * 1000);
            fireMax = max(fireMax, m.value("queen_timers_fire_duration_seconds_max") * 1000);
        }
        s.set(Column.FIRED_TOTAL, fired);
        s.set(Column.STALE_TOTAL, stale);
        s.set(Column.DUE, due);
        s.set(Column.PERMANENT_FAILURES, permanent);
        s.set(Column.DEAD_LETTERED, dead);
        s.set(Column.CLAIM_MAX_MS, claimMax);
        s.set(Column.FIRE_MAX_MS, fireMax);
        CallHistograms calls = new CallHistograms(claimBuckets, fireBuckets);

        long[] late = lateness.sinceLastCall(db);
        long[] sorted = late.clone();
        Arrays.sort(sorted);
        s.set(Column.LATE_COUNT, sorted.length);
        s.set(Column.LATE_P50_MS, Percentiles.ofSorted(sorted, 50));
        s.set(Column.LATE_P90_MS, Percentiles.ofSorted(sorted, 90));
        s.set(Column.LATE_P99_MS, Percentiles.ofSorted(sorted, 99));
        s.set(Column.LATE_MAX_MS, sorted.length == 0 ? Double.NaN : sorted[sorted.length - 1]);

        raw[Raw.CPU_BRIDGE.ordinal()] = ProcStat.ticks(pids.bridge().getAsLong());
        double sweeperTicks = 0;
        for (LongSupplier p : pids.sweepers()) {
            long t = ProcStat.ticks(p.getAsLong());
            sweeperTicks = t < 0 || sweeperTicks < 0 ? -1 : sweeperTicks + t;
        }
        raw[Raw.CPU_SWEEPER.ordinal()] = sweeperTicks;
        raw[Raw.CPU_BROKER.ordinal()] = ProcStat.ticks(pids.broker().getAsLong());
        raw[Raw.CPU_POSTGRES.ordinal()] = ProcStat.treeTicks(pids.postmaster().getAsLong());
        raw[Raw.CPU_RIG.ordinal()] = ProcStat.ticks(ProcessHandle.current().pid());

        if (previous != null) {
            double dt = (now - previousMs) / 1000.0;
            s.set(Column.WAL_BYTES_PER_S, (s.get(Column.WAL_BYTES) - previous.get(Column.WAL_BYTES)) / dt);
            s.set(Column.FIRED_PER_S, (fired - previous.get(Column.FIRED_TOTAL)) / dt);
            double claims = raw[Raw.CLAIM_COUNT.ordinal()] - previousRaw[Raw.CLAIM_COUNT.ordinal()];
            double fires = raw[Raw.FIRE_COUNT.ordinal()] - previousRaw[Raw.FIRE_COUNT.ordinal()];
            s.set(Column.CLAIMS, claims);
            s.set(Column.FIRES, fires);
            s.set(Column.CLAIM_MEAN_MS, claims > 0 ? (raw[Raw.CLAIM_SUM.ordinal()] - previousRaw[Raw.CLAIM_SUM.ordinal()]) / claims * 1000 : Double.NaN);
            s.set(Column.FIRE_MEAN_MS, fires > 0 ? (raw[Raw.FIRE_SUM.ordinal()] - previousRaw[Raw.FIRE_SUM.ordinal()]) / fires * 1000 : Double.NaN);
            CallHistograms interval = calls.since(previousCalls);
            if (interval != null) {
                s.set(Column.CLAIM_P50_MS, interval.claim().quantileMs(50));
                s.set(Column.CLAIM_P99_MS, interval.claim().quantileMs(99));
                s.set(Column.FIRE_P50_MS, interval.fire().quantileMs(50));
                s.set(Column.FIRE_P99_MS, interval.fire().quantileMs(99));
            }
            s.set(Column.CPU_BRIDGE, cpu(raw, Raw.CPU_BRIDGE, dt));
            s.set(Column.CPU_SWEEPER, cpu(raw, Raw.CPU_SWEEPER, dt));
            s.set(Column.CPU_BROKER, cpu(raw, Raw.CPU_BROKER, dt));
            s.set(Column.CPU_POSTGRES, cpu(raw, Raw.CPU_POSTGRES, dt));
            s.set(Column.CPU_RIG, cpu(raw, Raw.CPU_RIG, dt));
        }
        previous = s;
        previousRaw = raw;
        previousMs = now;
        previousCalls = calls;
        return new Taken(s, late, calls);
    }

    /** Percent of one core; NaN when the process was gone or restarted (its ticks went down). */
    private double cpu(double[] raw, Raw r, double dt) {
        double now = raw[r.ordinal()];
        double before = previousRaw[r.ordinal()];
        if (now < 0 || before < 0 || now < before) {
            return Double.NaN;
        }
        return (now - before) / tick / dt * 100;
    }

    private PromText scrape(URI uri) {
        try {
            HttpResponse<String> r = http.send(HttpRequest.newBuilder(uri).timeout(Duration.ofSeconds(5)).build(), HttpResponse.BodyHandlers.ofString());
            return r.statusCode() == 200 ? PromText.parse(r.body()) : PromText.empty();
        } catch (IOException e) {
            return PromText.empty();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return PromText.empty();
        }
    }

    private static double zeroIfNaN(double v) {
        return Double.isNaN(v) ? 0 : v;
    }

    private static double max(double a, double b) {
        return Double.isNaN(a) ? b : Double.isNaN(b) ? a : Math.max(a, b);
    }
}
