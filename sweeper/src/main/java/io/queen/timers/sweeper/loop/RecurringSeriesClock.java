package io.queen.timers.sweeper.loop;

import io.queen.timers.sweeper.probe.CappedCount;
import java.time.Duration;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Counts the recurring series with a pending occurrence ({@link CappedCount#recurringSeries}) on a slow clock of its
 * own, for the {@code queen_timers_recurring_series} gauge, as {@link DeadLetterClock} counts the dead letters:
 * what the database holds now, whoever scheduled or cancelled. A failed count leaves the gauge unknown (NaN)
 * rather than stale; it is not a readiness matter.
 */
public final class RecurringSeriesClock implements AutoCloseable {

    private static final Logger LOG = LoggerFactory.getLogger(RecurringSeriesClock.class);

    private final SlowClock clock;

    public RecurringSeriesClock(CappedCount count, SweeperMetrics metrics, Duration interval) {
        this.clock = new SlowClock("sweeper-recurring-series", Duration.ZERO, interval, () -> {
            try {
                metrics.recurringSeries(count.count());
            } catch (Exception e) {
                metrics.recurringSeriesUnknown();
                LOG.warn("counting the recurring series failed ({}); next count in {}", e.toString(), interval);
            }
        });
    }

    @Override
    public void close() {
        clock.close();
    }
}
