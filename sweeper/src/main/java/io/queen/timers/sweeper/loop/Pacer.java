package io.queen.timers.sweeper.loop;

import io.queen.timers.sweeper.probe.ProbeResult;
import java.time.Duration;

/**
 * How long a loop sleeps between cycles (README "The cycle"), always on PostgreSQL's clock (the probe's
 * {@code db_now} and {@code next_visible_at}):
 * <ul>
 *   <li>after a cycle that found work under a backlog (its last claim came back full): no sleep;</li>
 *   <li>after a cycle that found work and emptied what was due: the rest of {@code cycleMin} since that cycle
 *       began, so a steady stream is claimed and fired in rounds of {@code cycleMin}, not one round per bridge
 *       commit (see {@link #afterWork});</li>
 *   <li>work near (the next timer is due within {@code near}, or the last cycle found work): until the next
 *       due time, clamped to [{@code min}, {@code near}];</li>
 *   <li>idle: the sleep doubles from {@code near} up to {@code idleMax}, but never past the next due time.</li>
 * </ul>
 * A {@code NOTIFY queen_timers_wake} cuts any sleep short, so the idle backoff costs no latency for a timer
 * scheduled through the bridge; the clamps are what bound it when a notification is lost.
 */
public final class Pacer {

    private final Duration min;
    private final Duration near;
    private final Duration idleMax;
    private final Duration cycleMin;
    private Duration idle;

    public Pacer(Duration min, Duration near, Duration idleMax, Duration cycleMin) {
        this.cycleMin = cycleMin;
        this.min = min;
        this.near = near;
        this.idleMax = idleMax;
        this.idle = near;
    }

    /** sweeper.sleep.near: also how old the last probe may be while the loop works ({@link SweepLoop}). */
    public Duration near() {
        return near;
    }

    /**
     * After a cycle that claimed something and took {@code took}. Under a backlog the next cycle starts at once.
     * Otherwise the loop waits out the rest of {@code cycleMin}, and a NOTIFY does not cut that wait short: at a
     * steady rate the bridge notifies at every commit, and a cycle per commit pays a claim and a fire transaction
     * (an fsync) for a handful of timers. PRICE: up to {@code cycleMin} of lateness.
     */
    public Duration afterWork(Duration took, boolean backlog) {
        idle = near;
        if (backlog || took.compareTo(cycleMin) >= 0) {
            return Duration.ZERO;
        }
        return cycleMin.minus(took);
    }

    /** After a probe that found nothing due. */
    public Duration afterProbe(ProbeResult probe) {
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

    /** After a cycle that failed (database unreachable): back off like the idle sleep. */
    public Duration afterError() {
        Duration sleep = idle;
        idle = idle.multipliedBy(2).compareTo(idleMax) > 0 ? idleMax : idle.multipliedBy(2);
        return sleep;
    }

    private static Duration clamp(Duration d, Duration lo, Duration hi) {
        return d.compareTo(lo) < 0 ? lo : d.compareTo(hi) > 0 ? hi : d;
    }
}
