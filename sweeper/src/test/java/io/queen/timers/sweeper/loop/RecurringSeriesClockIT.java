package io.queen.timers.sweeper.loop;

import static io.queen.timers.sweeper.Staging.DEFAULT_TENANT;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.queen.timers.sql.Migrations;
import io.queen.timers.sweeper.Staging;
import io.queen.timers.sweeper.probe.CappedCount;
import io.queen.timers.testkit.PostgresDatabase;
import java.lang.reflect.Proxy;
import java.sql.SQLException;
import java.time.Duration;
import java.util.UUID;
import javax.sql.DataSource;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** queen_timers_recurring_series: the series with a pending occurrence, counted on a slow clock; NaN when unknown. */
class RecurringSeriesClockIT {

    @RegisterExtension
    static final PostgresDatabase db = PostgresDatabase.initializedWith(Migrations::migrate);

    @Test
    void theGaugeCountsTheRecurringRowsOfEveryTenantAndNotTheOneShots() throws Exception {
        Staging staging = new Staging(db.dataSource());
        staging.clear();
        UUID otherTenant = UUID.randomUUID();
        for (int i = 0; i < 5; i++) {
            staging.schedule(DEFAULT_TENANT, "q", "one-shot-" + i, 60);
        }
        staging.schedule(DEFAULT_TENANT, "q", "hourly", 60);
        staging.schedule(DEFAULT_TENANT, "other.q", "daily", 60);
        staging.schedule(otherTenant, "q", "hourly", 60);
        staging.execute("UPDATE queen.log_timers SET recurrence = jsonb_build_object('every', 'PT1H', 'startAt', '2026-01-01T00:00:00Z',"
                + " 'catchUp', 'one', 'txn', timer_key, 'seq', 1) WHERE timer_key IN ('hourly', 'daily')");

        assertThat(CappedCount.recurringSeries(db.dataSource(), 100).count()).isEqualTo(3);
        assertThat(CappedCount.recurringSeries(db.dataSource(), 2).count()).as("saturates at the cap").isEqualTo(2);

        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        SweeperMetrics metrics = new SweeperMetrics(registry);
        assertThat(gauge(registry)).as("unknown before the first count").isNaN();
        try (RecurringSeriesClock clock = new RecurringSeriesClock(CappedCount.recurringSeries(db.dataSource(), 100), metrics,
                Duration.ofMillis(50))) {
            await().atMost(Duration.ofSeconds(10)).until(() -> gauge(registry) == 3.0);
            staging.execute("DELETE FROM queen.log_timers WHERE timer_key = 'daily'");   // a series cancelled
            await().atMost(Duration.ofSeconds(10)).until(() -> gauge(registry) == 2.0);
        }
    }

    @Test
    void aFailedCountMakesTheGaugeUnknownNotStale() {
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        SweeperMetrics metrics = new SweeperMetrics(registry);
        metrics.recurringSeries(7);
        DataSource down = (DataSource) Proxy.newProxyInstance(getClass().getClassLoader(), new Class<?>[] {DataSource.class},
                (proxy, method, args) -> {
                    throw new SQLException("connection refused", "08001");
                });
        try (RecurringSeriesClock clock = new RecurringSeriesClock(CappedCount.recurringSeries(down, 100), metrics, Duration.ofMillis(50))) {
            await().atMost(Duration.ofSeconds(10)).until(() -> Double.isNaN(gauge(registry)));
        }
    }

    private static double gauge(SimpleMeterRegistry registry) {
        return registry.get("queen.timers.recurring.series").gauge().value();
    }
}
