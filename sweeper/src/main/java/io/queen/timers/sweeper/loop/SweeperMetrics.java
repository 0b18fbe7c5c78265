package io.queen.timers.sweeper.loop;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import io.queen.timers.core.db.ErrorClass;
import io.queen.timers.sweeper.fire.FireResult;
import io.queen.timers.sweeper.probe.ProbeResult;
import java.time.Duration;
import java.util.EnumMap;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The sweeper's meters (docs/operations.md#health-and-metrics), names as Prometheus shows them:
 * <ul>
 *   <li>{@code queen_timers_fired_total{result="fired|stale"}}: timers per fire verdict;</li>
 *   <li>{@code queen_timers_fire_lateness_seconds}: histogram of (segment created_at - deliver_at) per fired timer;</li>
 *   <li>{@code queen_timers_due}: visible timers nobody holds, as of the last probe (saturates at sweeper.due.cap);</li>
 *   <li>{@code queen_timers_oldest_late_seconds}: how long the oldest visible timer has waited, as of the last probe;</li>
 *   <li>{@code queen_timers_fire_failures_total{class="transient|permanent"}}: timers whose fire failed;</li>
 *   <li>{@code queen_timers_dead_lettered_total}: timers this process moved to queen.log_dlq;</li>
 *   <li>{@code queen_timers_dead_letters}: timers waiting in queen.log_dlq now (last count, {@link DeadLetterClock});</li>
 *   <li>{@code queen_timers_recurring_series}: recurring series with a pending occurrence (last count, {@link RecurringSeriesClock});</li>
 *   <li>{@code queen_timers_claim_duration_seconds}, {@code queen_timers_fire_duration_seconds}: histograms per call;</li>
 *   <li>{@code queen_timers_probes_total}: due probes (one per idle cycle; while working, one per sweeper.sleep.near).</li>
 * </ul>
 * The two call timers publish buckets so that percentiles over any interval can be computed from bucket
 * deltas (the soak rig does, docs/soak.md): a mean hides the slow claims that dead index entries make.
 * Their bounds keep the bucket set small: below 1 ms is noise, a call over {@link #CALL_MAX} is a stall.
 */
public final class SweeperMetrics {

    private final Map<FireResult, Counter> fired = new EnumMap<>(FireResult.class);
    private final Map<ErrorClass, Counter> failures = new EnumMap<>(ErrorClass.class);
    private final Timer lateness;
    private final Counter deadLettered;
    private final Counter probes;
    private final Counter heldByBudget;
    private final Timer claimDuration;
    private final Timer fireDuration;
    private final AtomicLong due = new AtomicLong();
    private final AtomicLong oldestLateMillis = new AtomicLong();
    private final AtomicLong deadLetters = new AtomicLong(UNKNOWN);
    private final AtomicLong recurringSeries = new AtomicLong(UNKNOWN);

    /** The call histograms' bounds (Micrometer's percentile buckets between them, about 60 per timer). */
    static final Duration CALL_MIN = Duration.ofMillis(1);
    static final Duration CALL_MAX = Duration.ofSeconds(30);

    /** A count (dead letters, recurring series) not taken yet, or failed: the gauge shows NaN, not a number that may be wrong. */
    private static final long UNKNOWN = -1;

    public SweeperMetrics(MeterRegistry registry) {
        for (FireResult r : FireResult.values()) {
            fired.put(r, Counter.builder("queen.timers.fired").tag("result", r.name().toLowerCase(Locale.ROOT))
                    .description("Timers per fire verdict").register(registry));
        }
        for (ErrorClass c : ErrorClass.values()) {
            failures.put(c, Counter.builder("queen.timers.fire.failures").tag("class", c.name().toLowerCase(Locale.ROOT))
                    .description("Timers whose fire failed, by error class").register(registry));
        }
        lateness = Timer.builder("queen.timers.fire.lateness").description("Segment created_at minus deliver_at, per fired timer")
                .publishPercentileHistogram().minimumExpectedValue(Duration.ofMillis(1)).maximumExpectedValue(Duration.ofMinutes(10))
                .register(registry);
        probes = Counter.builder("queen.timers.probes").description("Due probes (queen.timer_probe_v1 calls)").register(registry);
        heldByBudget = Counter.builder("queen.timers.budget.waits")
                .description("Cycles that claimed nothing because the fire budget held a tenant, and waited for it").register(registry);
        deadLettered = Counter.builder("queen.timers.dead.lettered").description("Timers moved to queen.log_dlq").register(registry);
        claimDuration = Timer.builder("queen.timers.claim.duration").description("One claim call")
                .publishPercentileHistogram().minimumExpectedValue(CALL_MIN).maximumExpectedValue(CALL_MAX).register(registry);
        fireDuration = Timer.builder("queen.timers.fire.duration").description("One fire transaction")
                .publishPercentileHistogram().minimumExpectedValue(CALL_MIN).maximumExpectedValue(CALL_MAX).register(registry);
        Gauge.builder("queen.timers.due", due, AtomicLong::get).description("Visible timers nobody holds (last probe)").register(registry);
        Gauge.builder("queen.timers.oldest.late.seconds", oldestLateMillis, v -> v.get() / 1000.0)
                .description("How long the oldest visible timer has waited for a sweeper (last probe)").register(registry);
        Gauge.builder("queen.timers.dead.letters", deadLetters, v -> v.get() == UNKNOWN ? Double.NaN : v.get())
                .description("Timers waiting in queen.log_dlq (last count; saturates at its cap)").register(registry);
        Gauge.builder("queen.timers.recurring.series", recurringSeries, v -> v.get() == UNKNOWN ? Double.NaN : v.get())
                .description("Recurring series with a pending occurrence (last count; saturates at its cap)").register(registry);
    }

    public void recurringSeries(long series) {
        recurringSeries.set(series);
    }

    public void recurringSeriesUnknown() {
        recurringSeries.set(UNKNOWN);
    }

    public void deadLetters(long timers) {
        deadLetters.set(timers);
    }

    public void deadLettersUnknown() {
        deadLetters.set(UNKNOWN);
    }

    public void probed(ProbeResult p) {
        probes.increment();
        due.set(p.due());
        oldestLateMillis.set(p.oldestLateness().toMillis());
    }

    public void fired(FireResult result, int timers) {
        fired.get(result).increment(timers);
    }

    public void lateness(Duration late) {
        lateness.record(late.isNegative() ? Duration.ZERO : late);
    }

    public void failed(ErrorClass errorClass, int timers) {
        failures.get(errorClass).increment(timers);
    }

    /** A cycle claimed nothing while the fire budget held a tenant (sweeper.tenant.fires.per.second). */
    public void heldByBudget() {
        heldByBudget.increment();
    }

    public void deadLettered(int timers) {
        deadLettered.increment(timers);
    }

    public Timer claimTimer() {
        return claimDuration;
    }

    public Timer fireTimer() {
        return fireDuration;
    }
}
