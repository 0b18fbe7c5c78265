package io.queen.timers.sweeper.loop;

import static org.assertj.core.api.Assertions.assertThat;

import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The claim and fire timers publish a bounded set of histogram buckets (the soak rig's interval percentiles read them). */
class SweeperMetricsTest {

    @Test
    void claimAndFireDurationsPublishBoundedHistogramBuckets() {
        PrometheusMeterRegistry registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
        SweeperMetrics metrics = new SweeperMetrics(registry);
        metrics.claimTimer().record(Duration.ofMillis(7));
        metrics.fireTimer().record(Duration.ofMillis(40));
        String scrape = registry.scrape();

        for (String name : List.of("queen_timers_claim_duration_seconds", "queen_timers_fire_duration_seconds")) {
            List<String> buckets = scrape.lines().filter(l -> l.startsWith(name + "_bucket{")).toList();
            assertThat(buckets).as(name + " buckets").hasSizeBetween(20, 80);
            assertThat(buckets).as("the last bucket is +Inf").last().asString().contains("le=\"+Inf\"");
            // nothing finer than the lower bound, nothing between the upper bound and +Inf but that bound's own bucket
            double smallest = Double.parseDouble(buckets.get(0).replaceAll(".*le=\"([^\"]+)\".*", "$1"));
            double largestFinite = Double.parseDouble(buckets.get(buckets.size() - 2).replaceAll(".*le=\"([^\"]+)\".*", "$1"));
            assertThat(smallest).isGreaterThanOrEqualTo(SweeperMetrics.CALL_MIN.toNanos() / 1e9);
            assertThat(largestFinite).isBetween(SweeperMetrics.CALL_MAX.toSeconds() * 1.0, SweeperMetrics.CALL_MAX.toSeconds() * 1.5);
            assertThat(scrape).contains(name + "_count 1");
        }
        assertThat(scrape).contains("queen_timers_claim_duration_seconds_bucket{le=\"0.008388607\"} 1");
    }
}
