package io.queen.timers.core.health;

import static org.assertj.core.api.Assertions.assertThat;

import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import io.queen.timers.core.config.HealthSettings;
import java.time.Duration;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/** Pure code: readiness as gauges says what /health/ready says, for checks added before and after the export. */
class HealthMetricsTest {

    private final LoopProgressTest.MovableClock clock = new LoopProgressTest.MovableClock();
    private final Health health = new Health(new HealthSettings(Duration.ofSeconds(60), Duration.ofSeconds(10)), clock);
    private final PrometheusMeterRegistry registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);

    @Test
    void theReadyGaugesFollowEveryLineOfTheReadinessBody() {
        Switch database = new Switch("database");
        health.add(database);
        health.exportTo(registry);
        LoopProgress sweep = health.loop("sweep-0");
        sweep.completed();

        assertThat(registry.scrape()).contains("queen_timers_ready 1.0", "queen_timers_check_ready{check=\"database\"} 1.0",
                "queen_timers_check_ready{check=\"sweep-0\"} 1.0");

        for (int i = 0; i < 12; i++) {
            sweep.failed("42501 permission denied");
            clock.advance(Duration.ofSeconds(1));
        }
        assertThat(health.report().ready()).isFalse();
        assertThat(registry.scrape()).contains("queen_timers_ready 0.0", "queen_timers_check_ready{check=\"database\"} 1.0",
                "queen_timers_check_ready{check=\"sweep-0\"} 0.0");

        sweep.completed();
        database.problem = Optional.of("connection refused");
        assertThat(registry.scrape()).contains("queen_timers_ready 0.0", "queen_timers_check_ready{check=\"database\"} 0.0",
                "queen_timers_check_ready{check=\"sweep-0\"} 1.0");

        health.remove(database);
        assertThat(registry.scrape()).contains("queen_timers_ready 1.0").doesNotContain("check=\"database\"");
    }

    private static final class Switch implements ReadinessCheck {
        private final String name;
        volatile Optional<String> problem = Optional.empty();

        Switch(String name) {
            this.name = name;
        }

        @Override
        public String name() {
            return name;
        }

        @Override
        public Optional<String> problem() {
            return problem;
        }
    }
}
