package io.queen.timers.soak.sample;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.data.Offset.offset;

import java.util.Map;
import org.junit.jupiter.api.Test;

/** Interval percentiles from the deltas of cumulative Prometheus buckets. */
class HistogramTest {

    private static final double INF = Double.POSITIVE_INFINITY;

    @Test
    void readsTheBucketsOfOneHistogramFromAScrape() {
        PromText scrape = PromText.parse("""
                # HELP queen_timers_claim_duration_seconds One claim call
                # TYPE queen_timers_claim_duration_seconds histogram
                queen_timers_claim_duration_seconds_bucket{le="0.001"} 1
                queen_timers_claim_duration_seconds_bucket{le="0.01"} 5
                queen_timers_claim_duration_seconds_bucket{le="+Inf"} 6
                queen_timers_claim_duration_seconds_count 6
                queen_timers_claim_duration_seconds_sum 0.4
                queen_timers_fire_duration_seconds_bucket{le="0.01"} 99
                """);
        Histogram h = Histogram.from(scrape, "queen_timers_claim_duration_seconds");
        assertThat(h.count()).isEqualTo(6);
        // rank 3 of 6 falls in (1 ms, 10 ms] holding ranks 2..5: 1 + 9 * (3 - 1) / 4 ms
        assertThat(h.quantileMs(50)).isEqualTo(5.5, offset(1e-9));
        assertThat(Histogram.from(scrape, "queen_timers_nothing").isEmpty()).isTrue();
        assertThat(Histogram.from(scrape, "queen_timers_nothing").quantileMs(99)).isNaN();
    }

    /** The cumulative counts of the earlier scrape say nothing about the interval: only the delta does. */
    @Test
    void intervalPercentilesComeFromTheDeltaNotFromTheCumulativeCounts() {
        // 1,000 fast calls (<= 1 ms) before; in the interval 100 calls, all between 50 and 100 ms
        Histogram before = Histogram.of(Map.of(0.001, 1000.0, 0.05, 1000.0, 0.1, 1000.0, INF, 1000.0));
        Histogram after = Histogram.of(Map.of(0.001, 1000.0, 0.05, 1000.0, 0.1, 1100.0, INF, 1100.0));
        assertThat(after.quantileMs(99)).as("cumulative").isLessThan(100);
        Histogram interval = after.minus(before);
        assertThat(interval.count()).isEqualTo(100);
        assertThat(interval.quantileMs(50)).isEqualTo(75, offset(1e-9));
        assertThat(interval.quantileMs(99)).isEqualTo(99.5, offset(1e-9));
    }

    @Test
    void sweepersAddUpAndARestartMakesTheIntervalUnknown() {
        Histogram a = Histogram.of(Map.of(0.01, 10.0, INF, 10.0));
        Histogram b = Histogram.of(Map.of(0.01, 0.0, 1.0, 10.0, INF, 10.0));
        Histogram both = a.plus(b);
        assertThat(both.count()).isEqualTo(20);
        // a lacks the 1 s bound: it counts there what it counts at 10 ms
        assertThat(both.quantileMs(50)).isEqualTo(10, offset(1e-9));
        assertThat(both.quantileMs(100)).isEqualTo(1000, offset(1e-9));
        assertThat(Histogram.empty().plus(a).count()).isEqualTo(10);
        assertThat(a.minus(both)).as("buckets went down").isNull();
    }

    @Test
    void aRankInTheInfBucketAnswersTheLargestFiniteBoundAndNothingObservedAnswersNaN() {
        Histogram h = Histogram.of(Map.of(0.001, 0.0, 30.0, 1.0, INF, 100.0));
        assertThat(h.quantileMs(50)).isEqualTo(30_000, offset(1e-9));
        assertThat(h.quantileMs(1)).as("rank 1 is the top of (1 ms, 30 s]").isEqualTo(30_000, offset(1e-6));
        Histogram none = Histogram.of(Map.of(0.001, 5.0, INF, 5.0)).minus(Histogram.of(Map.of(0.001, 5.0, INF, 5.0)));
        assertThat(none.count()).isZero();
        assertThat(none.quantileMs(50)).isNaN();
    }
}
