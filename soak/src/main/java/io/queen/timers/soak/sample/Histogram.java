package io.queen.timers.soak.sample;

import java.util.Map;
import java.util.NavigableMap;
import java.util.TreeMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * A Prometheus histogram as scraped: cumulative counts by upper bound ({@code le}, seconds; +Inf last).
 * Scrapes are cumulative since the process started, so the histogram of an interval is the later
 * scrape {@link #minus} the earlier one, and the histogram of several sweepers is their {@link #plus}.
 * {@link #quantileMs} interpolates inside the bucket the rank falls in, as PromQL's histogram_quantile does.
 */
public final class Histogram {

    private static final Pattern LE = Pattern.compile("le=\"([^\"]+)\"");
    private static final Histogram EMPTY = new Histogram(new TreeMap<>());

    private final NavigableMap<Double, Double> cumulative;

    private Histogram(NavigableMap<Double, Double> cumulative) {
        this.cumulative = cumulative;
    }

    public static Histogram empty() {
        return EMPTY;
    }

    /** Cumulative counts by upper bound in seconds ({@link Double#POSITIVE_INFINITY} for +Inf). */
    public static Histogram of(Map<Double, Double> cumulativeByUpperBound) {
        return new Histogram(new TreeMap<>(cumulativeByUpperBound));
    }

    /** The {@code name_bucket{le="..."}} series of a scrape; empty when the scrape has none. */
    public static Histogram from(PromText scrape, String name) {
        TreeMap<Double, Double> m = new TreeMap<>();
        String prefix = name + "_bucket{";
        scrape.series().forEach((series, value) -> {
            if (series.startsWith(prefix)) {
                Matcher le = LE.matcher(series);
                if (le.find()) {
                    m.put(le.group(1).equals("+Inf") ? Double.POSITIVE_INFINITY : Double.parseDouble(le.group(1)), value);
                }
            }
        });
        return new Histogram(m);
    }

    public boolean isEmpty() {
        return cumulative.isEmpty();
    }

    /** Observations counted (the +Inf bucket, or the largest bound present). */
    public double count() {
        return cumulative.isEmpty() ? 0 : cumulative.lastEntry().getValue();
    }

    /** Both histograms' observations together (sweepers with the same buckets; a bound one lacks counts what it has below). */
    public Histogram plus(Histogram other) {
        return combine(other, 1);
    }

    /**
     * The observations of this scrape that {@code earlier} had not counted. Null when a bucket went down:
     * the process restarted between the scrapes, so the interval's observations are unknown.
     */
    public Histogram minus(Histogram earlier) {
        Histogram d = combine(earlier, -1);
        return d.cumulative.values().stream().anyMatch(v -> v < 0) ? null : d;
    }

    private Histogram combine(Histogram other, int sign) {
        TreeMap<Double, Double> m = new TreeMap<>();
        for (Double le : union(other)) {
            m.put(le, at(le) + sign * other.at(le));
        }
        return new Histogram(m);
    }

    private java.util.Set<Double> union(Histogram other) {
        java.util.TreeSet<Double> s = new java.util.TreeSet<>(cumulative.keySet());
        s.addAll(other.cumulative.keySet());
        return s;
    }

    /** Cumulative count at {@code le}: a bound this histogram lacks counts what its next lower bound counts. */
    private double at(double le) {
        Map.Entry<Double, Double> e = cumulative.floorEntry(le);
        return e == null ? 0 : e.getValue();
    }

    /**
     * The q-th percentile (0 < q <= 100) in milliseconds, interpolated linearly inside its bucket (the
     * first bucket from 0); NaN when nothing was observed. A rank in the +Inf bucket answers the largest
     * finite bound: the value is above it, how far the buckets cannot say.
     */
    public double quantileMs(double q) {
        double total = count();
        if (total <= 0) {
            return Double.NaN;
        }
        double rank = q / 100.0 * total;
        double lowerBound = 0;
        double lowerCount = 0;
        for (Map.Entry<Double, Double> e : cumulative.entrySet()) {
            double upper = e.getKey();
            double c = e.getValue();
            if (c >= rank && c > lowerCount) {
                if (Double.isInfinite(upper)) {
                    return lowerBound * 1000;
                }
                return (lowerBound + (upper - lowerBound) * (rank - lowerCount) / (c - lowerCount)) * 1000;
            }
            lowerBound = Double.isInfinite(upper) ? lowerBound : upper;
            lowerCount = c;
        }
        return lowerBound * 1000;
    }
}
