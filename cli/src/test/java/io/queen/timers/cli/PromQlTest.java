package io.queen.timers.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.queen.timers.cli.PromQl.Matcher;
import io.queen.timers.cli.PromQl.Selector;
import java.util.List;
import org.junit.jupiter.api.Test;

/** Pure code: the selectors read out of the shapes of PromQL the dashboard and the alert rules use. */
class PromQlTest {

    @Test
    void aHistogramQuantileNamesTheBucketSeriesNotItsFunctionsOrGroupingLabels() {
        assertThat(PromQl.selectors("histogram_quantile(0.99, sum by (le) (rate(queen_timers_fire_lateness_seconds_bucket[$__rate_interval])))"))
                .containsExactly(new Selector("queen_timers_fire_lateness_seconds_bucket", List.of()));
    }

    @Test
    void labelMatchersBelongToTheirMetricAndStringsAreNotSelectors() {
        assertThat(PromQl.selectors("sum by (reason) (rate(queen_timers_commands_total{verdict=\"rejected\", reason!~'none|x'}[5m]))"
                + " / ignoring(reason) group_left sum(rate(queen_timers_commands_total[5m])) > bool 0.5"))
                .containsExactly(
                        new Selector("queen_timers_commands_total", List.of(new Matcher("verdict", "=", "rejected"), new Matcher("reason", "!~", "none|x"))),
                        new Selector("queen_timers_commands_total", List.of()));
    }

    @Test
    void aggregationsWithTheGroupingAfterTheArgumentsKeywordsAndOffsetsAreNotSelectors() {
        assertThat(PromQl.selectors("max(queen_timers_due) without (instance) - max(queen_timers_due offset 15m) and on() up{job=~\"q.*\"} == 0"))
                .extracting(Selector::metric).containsExactly("queen_timers_due", "queen_timers_due", "up");
        assertThat(PromQl.selectors("sum(rate(a_sum[1m])) / sum(rate(a_count[1m]))")).extracting(Selector::metric)
                .containsExactly("a_sum", "a_count");
        assertThat(PromQl.selectors("queen_timers_check_ready == 0")).extracting(Selector::metric).containsExactly("queen_timers_check_ready");
    }

    @Test
    void whatItCannotReadFailsLoudly() {
        assertThatThrownBy(() -> PromQl.selectors("sum(rate(x[5m])")).hasMessageContaining("unbalanced (");
        assertThatThrownBy(() -> PromQl.selectors("{__name__=~\"queen_.*\"}")).hasMessageContaining("without a metric name");
        assertThatThrownBy(() -> PromQl.selectors("x{job=\"a}")).hasMessageContaining("unclosed");
    }
}
