package io.queen.timers.faults.check;

import io.queen.timers.faults.stack.Stack;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * The declared lateness bound (docs/fault-harness.md "Lateness"), judged on times the harness observed itself: a fire
 * counts from the producer's intended instant, or from when the harness first read the verdict that staged it if that
 * came later (the product cannot fire what it was not yet given), to when the harness's own consumer first read its
 * {@code fired} event ({@link AuditWatch}). Never the {@code created_at} the database stamped, nor the event's
 * {@code lateMs}.
 *
 * <ul>
 *   <li>Under faults, every fire (one-shot or occurrence): within the lease, plus the longest backoff for each failed
 *       attempt the harness saw ({@code retrying} events), plus {@link #UNDER_FAULTS_SLACK_MS}.</li>
 *   <li>In the fault-free window (counted from {@link #FAULT_FREE_GRACE_MS} after the last fault ended): p99 within
 *       {@link #FAULT_FREE_P99_MS}, each within {@link #FAULT_FREE_MAX_MS}.</li>
 * </ul>
 *
 * PRICE: the observation includes the relay's and the harness consumer's own delay (tens of ms when quiet), so the
 * bound judges the product as a consumer of the audit topic sees it, not the fire's commit.
 */
final class Lateness {

    /** A fire claimed by a sweeper that died or stopped is claimed again after its lease. */
    static final long LEASE_MS = Stack.LEASE_MS;
    /** The longest backoff after a failed attempt (the harness's sweeper.backoff.max). */
    static final long BACKOFF_MAX_MS = Stack.SWEEPER_BACKOFF_MAX_MS;
    /**
     * What faults may add beyond lease and backoff: PostgreSQL down 1-2 s and the services' retry backoff (2 s), a broker
     * unanswering 3.5-5 s and the relay's delivery timeout (8 s) and its round again, a sweeper or the relay's process
     * killed or paused and restarted (seconds; tens of seconds on a loaded machine), faults following each other ~1 s
     * apart. A minute is what a fire may cost under the CI run's dense faults; a timer minutes late fails.
     */
    static final long UNDER_FAULTS_SLACK_MS = 60_000;
    /** After the last fault, how long the services get to drain what the faults left before the window counts as fault-free. */
    static final long FAULT_FREE_GRACE_MS = 30_000;
    /**
     * Fault-free: a sweeper idles at most sweeper.idle.max (2 s in the harness) when no wake-up reaches it, then claims
     * and fires in milliseconds; the relay is woken by the outbox's commit; the harness's consumer polls every 200 ms.
     */
    static final long FAULT_FREE_P99_MS = 3_000;
    static final long FAULT_FREE_MAX_MS = 6_000;

    static final String LATE = "fired late (beyond the declared bound)";
    static final String FAULT_FREE_P99 = "fault-free lateness p99 over the declared bound";
    static final String UNOBSERVED = "fires the harness did not observe live";

    private final Findings f;
    private Map<String, Long> readAt;
    private long faultFreeFromMs = Long.MAX_VALUE;
    private final List<Long> all = new ArrayList<>();
    private final List<Long> faultFree = new ArrayList<>();

    Lateness(Findings f) {
        this.f = f;
        f.declare(LATE);
        f.declare(FAULT_FREE_P99);
        f.declare(UNOBSERVED);
    }

    /**
     * @param readAt       when the harness's consumer first read each event, by eventId (harness clock, epoch ms)
     * @param faultsEndedMs when the last fault ended (harness clock); {@code Long.MIN_VALUE}: a run without faults
     */
    void observed(Map<String, Long> readAt, long faultsEndedMs) {
        this.readAt = readAt;
        this.faultFreeFromMs = faultsEndedMs == Long.MIN_VALUE ? Long.MIN_VALUE : faultsEndedMs + FAULT_FREE_GRACE_MS;
    }

    boolean judged() {
        return readAt != null;
    }

    /**
     * One fire: {@code intendedMs} the producer's instant (the command's own time, or the occurrence), {@code stagedBy} the
     * eventId of the verdict that staged it, {@code firedEvent} the eventId of its fired event, {@code failures} the failed
     * attempts the harness saw.
     */
    void fire(String kind, String at, long intendedMs, String stagedBy, String firedEvent, int failures) {
        if (readAt == null) {
            return;
        }
        Long staged = stagedBy == null ? null : readAt.get(stagedBy);
        Long fired = firedEvent == null ? null : readAt.get(firedEvent);
        if (staged == null || fired == null) {
            f.violation(UNOBSERVED, at + ": " + (staged == null ? "its verdict " + stagedBy : "its fired event " + firedEvent)
                    + " was not read by the harness's consumer during the run");
            return;
        }
        long from = Math.max(intendedMs, staged);
        long late = fired - from;
        all.add(late);
        long bound = LEASE_MS + failures * BACKOFF_MAX_MS + UNDER_FAULTS_SLACK_MS;
        String how = at + ": fired event read " + late + " ms after " + (from == intendedMs ? "its time" : "its verdict was read");
        if (from >= faultFreeFromMs) {
            faultFree.add(late);
            if (late > FAULT_FREE_MAX_MS) {
                f.violation(kind, how + ", in the fault-free window (bound " + FAULT_FREE_MAX_MS + " ms)");
            }
        } else if (late > bound) {
            f.violation(kind, how + " (bound: lease " + LEASE_MS + " + " + failures + " failed attempt(s) x " + BACKOFF_MAX_MS + " + "
                    + UNDER_FAULTS_SLACK_MS + " = " + bound + " ms)");
        }
    }

    void summarize() {
        if (readAt == null) {
            f.fact("observed lateness", "not judged (no live observation)");
            return;
        }
        all.sort(null);
        faultFree.sort(null);
        f.fact("observed lateness: fires judged", all.size());
        f.fact("observed lateness p50 / p99 / max ms", p(all, 0.5) + " / " + p(all, 0.99) + " / " + p(all, 1));
        f.fact("observed lateness fault-free: fires judged", faultFree.size());
        f.fact("observed lateness fault-free p50 / p99 / max ms", p(faultFree, 0.5) + " / " + p(faultFree, 0.99) + " / " + p(faultFree, 1));
        if (!faultFree.isEmpty() && p(faultFree, 0.99) > FAULT_FREE_P99_MS) {
            f.violation(FAULT_FREE_P99, "p99 " + p(faultFree, 0.99) + " ms over " + faultFree.size() + " fires, bound " + FAULT_FREE_P99_MS + " ms");
        }
    }

    private static long p(List<Long> sorted, double q) {
        if (sorted.isEmpty()) {
            return 0;
        }
        return sorted.get((int) Math.min(sorted.size() - 1, Math.max(0, Math.ceil(sorted.size() * q) - 1)));
    }
}
