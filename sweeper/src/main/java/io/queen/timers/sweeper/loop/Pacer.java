package io.queen.timers.sweeper.loop;

import io.queen.timers.core.retry.Backoff;
import io.queen.timers.sweeper.probe.ProbeResult;
import java.time.Duration;

/**
 * How long a loop sleeps between cycles (docs/sweeper.md#the-cycle), always on PostgreSQL's clock (the probe's
 * {@code db_now} and {@code next_visible_at}):
 * <ul>
 *   <li>after a cycle that found work: no sleep, the next probe decides;</li>
 *   <li>after a cycle that found nothing because the fire budget holds a tenant: until its bucket has a few rows'
 *       worth again, clamped to [{@code min}, {@code near}];</li>
 *   <li>work near (the next timer is due within {@code near}, or the last cycle found work): until the next
 *       due time, clamped to [{@code min}, {@code near}];</li>
 *   <li>idle: the sleep doubles from {@code near} up to {@code idleMax}, but never past the next due time;</li>
 *   <li>after a failed cycle: a {@link Backoff} wait, jittered under a ceiling doubling from {@code near} to
 *       {@code idleMax}, so that sweepers failing together (a failover) do not retry together.</li>
 * </ul>
 * A {@code NOTIFY queen_timers_wake} cuts any sleep short, so the idle backoff costs no latency for a timer
 * scheduled through the bridge; the clamps are what bound it when a notification is lost.
 */
public final class Pacer {

    private final Duration min;
    private final Duration near;
    private final Duration idleMax;
    private Duration idle;
    private final Backoff.Waits errors;

    public Pacer(Duration min, Duration near, Duration idleMax) {
        this.min = min;
        this.near = near;
        this.idleMax = idleMax;
        this.idle = near;
        this.errors = new Backoff(near, idleMax).waits();
    }

    /** sweeper.sleep.near: also how old the last probe may be while the loop works ({@link SweepLoop}). */
    public Duration near() {
        return near;
    }

    /** After a cycle that claimed something. */
    public Duration afterWork() {
        idle = near;
        errors.reset();
        return Duration.ZERO;
    }

    /**
     * After a cycle that claimed nothing because the fire budget holds a tenant (FireBudget): until it has a few rows'
     * worth again, clamped to [{@code min}, {@code near}], instead of claiming nothing again at once.
     */
    public Duration afterHeld(Duration untilRefilled) {
        idle = near;
        errors.reset();
        return clamp(untilRefilled, min, near);
    }

    /** After a probe that found nothing due. */
    public Duration afterProbe(ProbeResult probe) {
        errors.reset();
        Duration untilNext = probe.untilNext().orElse(null);
        if (untilNext != null && untilNext.compareTo(near) <= 0) {
            idle = near;
            return clamp(untilNext, min, near);
        }
        Duration sleep = idle;
        idle = idle.multipliedBy(2).compareTo(idleMax) > 0 ? idleMax : idle.multipliedBy(2);
        if (untilNext != null && untilNext.compareTo(sleep) < 0) {
            sleep = untilNext;
        }
        return clamp(sleep, min, idleMax);
    }

    /** After a cycle that failed (database unreachable). The idle sleep is left as it was: it paces polling, not retries. */
    public Duration afterError() {
        return errors.next();
    }

    private static Duration clamp(Duration d, Duration lo, Duration hi) {
        return d.compareTo(lo) < 0 ? lo : d.compareTo(hi) > 0 ? hi : d;
    }
}
