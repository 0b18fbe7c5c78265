package io.queen.timers.core.config;

import static io.queen.timers.core.config.ConfigDef.Type.DURATION;
import static io.queen.timers.core.config.ConfigDef.durationBetween;

import java.time.Duration;

/**
 * The bounds /health/ready judges every loop by (the health package's LoopProgress), the process's unless a loop has
 * bounds of its own. Included by every service ({@link CommonSettings}).
 *
 * @param stallAfter   {@link #STALL_AFTER}: longest time between two cycle ends (success or failure) before the loop
 *                     counts as stuck; must exceed the loop's longest legitimate cycle including its idle sleep
 * @param failingAfter {@link #FAILING_AFTER}: how long every cycle may fail before the loop counts as not progressing
 */
public record HealthSettings(Duration stallAfter, Duration failingAfter) {

    public static final String STALL_AFTER = "health.stall.after";
    public static final String FAILING_AFTER = "health.failing.after";

    public static ConfigDef definition() {
        return new ConfigDef()
                .define(STALL_AFTER, DURATION, "2m", durationBetween(Duration.ofSeconds(5), Duration.ofHours(1)), "QUEEN_HEALTH_STALL_AFTER",
                        "Not ready when a loop (ingest, sweep worker, audit relay, wake listener) has ended no cycle for this long: it is"
                                + " stuck in a call. Must exceed the longest legitimate cycle, idle sleep included (sweeper.idle.max).")
                .define(FAILING_AFTER, DURATION, "30s", durationBetween(Duration.ofSeconds(1), Duration.ofHours(1)), "QUEEN_HEALTH_FAILING_AFTER",
                        "Not ready when every cycle of a loop has failed for this long (database unreachable, permission denied,"
                                + " disk full); a shorter run of failures is retried without leaving readiness.");
    }

    public static HealthSettings from(Config config) {
        return new HealthSettings(config.duration(STALL_AFTER), config.duration(FAILING_AFTER));
    }

    /**
     * The longest pause of a loop between two attempts while a dependency fails: {@code backoffMax}
     * ({@code db.retry.backoff.max}), but never longer than {@code health.failing.after}, so that a loop tries again
     * within that bound once the dependency is back and /health/ready turns 200 within {@code health.failing.after}
     * plus one probe.
     */
    public Duration retryPauseMax(Duration backoffMax) {
        return backoffMax.compareTo(failingAfter) <= 0 ? backoffMax : failingAfter;
    }
}
