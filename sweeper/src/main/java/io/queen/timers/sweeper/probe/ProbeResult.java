package io.queen.timers.sweeper.probe;

import java.time.Duration;
import java.time.Instant;
import java.util.Optional;

/**
 * What the due probe saw, on PostgreSQL's clock: {@code dbNow}, the earliest visible_at (empty when no
 * timer waits at all) and the number of visible, unclaimed timers (saturating at the cap).
 */
public record ProbeResult(Instant dbNow, Optional<Instant> nextVisibleAt, int due) {

    /** How long the oldest visible timer has waited for a sweeper; zero when nothing is due. */
    public Duration oldestLateness() {
        if (due == 0 || nextVisibleAt.isEmpty() || nextVisibleAt.get().isAfter(dbNow)) {
            return Duration.ZERO;
        }
        return Duration.between(nextVisibleAt.get(), dbNow);
    }

    /** Time until the next timer becomes visible; empty when no timer waits. Zero or negative when due. */
    public Optional<Duration> untilNext() {
        return nextVisibleAt.map(next -> Duration.between(dbNow, next));
    }
}
