package io.queen.timers.soak.report;

import java.util.Arrays;

/** Nearest-rank percentiles of exact values (no histogram buckets: the rig keeps every lateness). */
public final class Percentiles {

    private Percentiles() {
    }

    /** The q-th percentile (0 < q <= 100) of {@code values} by nearest rank; NaN when empty. Sorts a copy. */
    public static double of(long[] values, double q) {
        if (values.length == 0) {
            return Double.NaN;
        }
        long[] s = values.clone();
        Arrays.sort(s);
        return ofSorted(s, q);
    }

    public static double ofSorted(long[] sorted, double q) {
        if (sorted.length == 0) {
            return Double.NaN;
        }
        int rank = (int) Math.ceil(q / 100.0 * sorted.length);
        return sorted[Math.max(0, Math.min(sorted.length, rank) - 1)];
    }
}
