package io.queen.timers.soak.report;

import io.queen.timers.soak.sample.Column;
import io.queen.timers.soak.sample.Sample;
import io.queen.timers.soak.sample.Sampler;
import java.util.Arrays;
import java.util.List;
import java.util.function.ToDoubleFunction;

/**
 * What one variant cost, from its samples: rates, means and maxima over the steady half (the samples
 * from the middle of the run on, when the pending set has built up), sizes and counters at the end,
 * lateness percentiles pooled over every frame of the steady half, and claim and fire percentiles from
 * the sweepers' histogram buckets counted over the steady half.
 */
public record VariantSummary(String variant, int samples, double producedPerS, double firedPerS, double lateP50Ms, double lateP99Ms,
                             double lateMaxMs, double claimMeanMs, double claimP50Ms, double claimP99Ms, double fireMeanMs,
                             double fireP50Ms, double fireP99Ms, double claimsPerS, double deadTuplesMean,
                             double deadTuplesMax, double liveTuplesEnd, double visibleIdxMbEnd, double visibleIdxMbMax, double heapMbEnd,
                             double hotPercent, double autovacuums, double outboxAutovacuums, double walMbPerS, double walBytesPerFired,
                             double idxTupReadPerScan, double cpuBridge, double cpuSweeper, double cpuBroker, double cpuPostgres,
                             double cpuRig, double loadMean, double deadLettered, double staleSegments) {

    /**
     * @param samples the variant's samples in time order
     * @param lateness per sample, the lateness values it counted (same order)
     * @param calls per sample, the sweepers' cumulative call histograms (same order)
     */
    public static VariantSummary of(String variant, List<Sample> samples, List<long[]> lateness, List<Sampler.CallHistograms> calls) {
        if (samples.isEmpty()) {
            throw new IllegalArgumentException("variant " + variant + " has no samples");
        }
        Sample first = samples.get(0);
        Sample last = samples.get(samples.size() - 1);
        double end = last.get(Column.T_S);
        int from = 0;
        while (from < samples.size() - 1 && samples.get(from).get(Column.T_S) < end / 2) {
            from++;
        }
        List<Sample> steady = samples.subList(Math.max(1, Math.min(from, samples.size() - 1)), samples.size());
        Sample steadyStart = samples.get(Math.max(0, samples.indexOf(steady.get(0)) - 1));
        double steadySeconds = last.get(Column.T_S) - steadyStart.get(Column.T_S);
        Sampler.CallHistograms steadyCalls = calls.get(calls.size() - 1).since(calls.get(samples.indexOf(steadyStart)));
        long[] late = pooled(lateness.subList(samples.indexOf(steady.get(0)), lateness.size()));
        Arrays.sort(late);
        double upd = last.get(Column.TIMERS_UPD) - first.get(Column.TIMERS_UPD);
        double fired = last.get(Column.FIRED_TOTAL) - steadyStart.get(Column.FIRED_TOTAL);
        double wal = last.get(Column.WAL_BYTES) - steadyStart.get(Column.WAL_BYTES);
        double scans = last.get(Column.VISIBLE_IDX_SCANS) - steadyStart.get(Column.VISIBLE_IDX_SCANS);
        double claims = steady.stream().mapToDouble(s -> s.get(Column.CLAIMS)).filter(v -> !Double.isNaN(v)).sum();
        return new VariantSummary(variant, samples.size(),
                (last.get(Column.PRODUCED) - steadyStart.get(Column.PRODUCED)) / steadySeconds,
                fired / steadySeconds,
                Percentiles.ofSorted(late, 50), Percentiles.ofSorted(late, 99), late.length == 0 ? Double.NaN : late[late.length - 1],
                weighted(steady, Column.CLAIM_MEAN_MS, Column.CLAIMS),
                steadyCalls == null ? Double.NaN : steadyCalls.claim().quantileMs(50),
                steadyCalls == null ? Double.NaN : steadyCalls.claim().quantileMs(99),
                weighted(steady, Column.FIRE_MEAN_MS, Column.FIRES),
                steadyCalls == null ? Double.NaN : steadyCalls.fire().quantileMs(50),
                steadyCalls == null ? Double.NaN : steadyCalls.fire().quantileMs(99),
                claims / steadySeconds,
                mean(steady, s -> s.get(Column.TIMERS_DEAD)),
                max(samples, Column.TIMERS_DEAD),
                last.get(Column.TIMERS_LIVE),
                last.get(Column.VISIBLE_IDX_BYTES) / 1e6,
                max(samples, Column.VISIBLE_IDX_BYTES) / 1e6,
                last.get(Column.TIMERS_HEAP_BYTES) / 1e6,
                upd > 0 ? (last.get(Column.TIMERS_HOT_UPD) - first.get(Column.TIMERS_HOT_UPD)) / upd * 100 : Double.NaN,
                last.get(Column.TIMERS_AUTOVACUUMS),
                last.get(Column.OUTBOX_AUTOVACUUMS),
                wal / steadySeconds / 1e6,
                fired > 0 ? wal / fired : Double.NaN,
                scans > 0 ? (last.get(Column.VISIBLE_IDX_TUP_READ) - steadyStart.get(Column.VISIBLE_IDX_TUP_READ)) / scans : Double.NaN,
                mean(steady, s -> s.get(Column.CPU_BRIDGE)),
                mean(steady, s -> s.get(Column.CPU_SWEEPER)),
                mean(steady, s -> s.get(Column.CPU_BROKER)),
                mean(steady, s -> s.get(Column.CPU_POSTGRES)),
                mean(steady, s -> s.get(Column.CPU_RIG)),
                mean(samples, s -> s.get(Column.LOAD1)),
                last.get(Column.DEAD_LETTERED),
                last.get(Column.STALE_TOTAL));
    }

    private static long[] pooled(List<long[]> parts) {
        int n = parts.stream().mapToInt(a -> a.length).sum();
        long[] all = new long[n];
        int at = 0;
        for (long[] a : parts) {
            System.arraycopy(a, 0, all, at, a.length);
            at += a.length;
        }
        return all;
    }

    /** The mean of a per-interval mean column, weighted by the interval's call count. */
    static double weighted(List<Sample> samples, Column mean, Column count) {
        double sum = 0;
        double n = 0;
        for (Sample s : samples) {
            double m = s.get(mean);
            double c = s.get(count);
            if (!Double.isNaN(m) && !Double.isNaN(c) && c > 0) {
                sum += m * c;
                n += c;
            }
        }
        return n == 0 ? Double.NaN : sum / n;
    }

    static double mean(List<Sample> samples, ToDoubleFunction<Sample> f) {
        return samples.stream().mapToDouble(f).filter(v -> !Double.isNaN(v)).average().orElse(Double.NaN);
    }

    static double max(List<Sample> samples, Column c) {
        return samples.stream().mapToDouble(s -> s.get(c)).filter(v -> !Double.isNaN(v)).max().orElse(Double.NaN);
    }
}
