package io.queen.timers.sweeper.loop;

import io.queen.timers.sweeper.probe.CappedCount;
import java.time.Duration;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Counts the dead letters ({@link CappedCount#deadLetters}) on a slow clock of its own, for the
 * {@code queen_timers_dead_letters} gauge: the dead-lettered counter says what this process moved since it
 * started, this says what waits in the table now, whoever moved it and whatever was replayed since. A
 * failed count leaves the gauge unknown (NaN) rather than stale; it is not a readiness matter (the sweep
 * loops report the database's trouble).
 */
public final class DeadLetterClock implements AutoCloseable {

    private static final Logger LOG = LoggerFactory.getLogger(DeadLetterClock.class);

    private final SlowClock clock;

    public DeadLetterClock(CappedCount count, SweeperMetrics metrics, Duration interval) {
        this.clock = new SlowClock("sweeper-dead-letters", Duration.ZERO, interval, () -> {
            try {
                metrics.deadLetters(count.count());
            } catch (Exception e) {
                metrics.deadLettersUnknown();
                LOG.warn("counting the dead letters in queen.log_dlq failed ({}); next count in {}", e.toString(), interval);
            }
        });
    }

    @Override
    public void close() {
        clock.close();
    }
}
