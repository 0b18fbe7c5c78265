package io.queen.timers.core.health;

import io.queen.timers.core.config.HealthSettings;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.Optional;

/**
 * What one loop (bridge ingest, a sweep worker, the audit relay, the wake listener, …) last did, written
 * by the loop's own thread and read by {@code /health/ready}. A loop calls {@link #completed()} or
 * {@link #failed(String)} at the end of every cycle, {@link #impaired(String)} for a standing condition
 * its cycles work around (an audit topic held), and runs under {@link #guard(Runnable)} so a thread that
 * ends on any {@code Throwable} (an {@code Error} included) is reported dead.
 *
 * <p>Not ready when the loop is dead, when no cycle ended within {@link HealthSettings#stallAfter()} (stuck in a
 * call), or when every cycle failed for longer than {@link HealthSettings#failingAfter()} (e.g. 42501 permission
 * denied, 53100 disk full: the loop runs but nothing progresses). A single failed cycle is not a problem:
 * loops retry. Reading is a handful of volatile reads: the HTTP handler never touches the database or
 * Kafka. Thread-safe: one writer (the loop), any readers. Its times are this host's ({@code clock}), never compared
 * with the database's: a step of the host's wall clock stretches or shrinks the ages read until the loop's next cycle ends.
 */
public final class LoopProgress implements ReadinessCheck {

    /**
     * One consistent view of the loop, for the readiness text and tests: its cycles so far, a standing condition it works
     * around ({@code impaired}, null when none), and how its thread ended ({@link End#RUNNING} while it runs).
     */
    public record Snapshot(String loop, Instant startedAt, Cycles cycles, String impaired, End end) {
        Snapshot with(Cycles c) {
            return new Snapshot(loop, startedAt, c, impaired, end);
        }
    }

    /**
     * The loop's cycles: when the last one ended and the last one that did its work, and the run of failed ones (since
     * when, how many, the last error; null and 0 when the last cycle did not fail).
     */
    public record Cycles(Instant lastCycleAt, Instant lastSuccessAt, Instant failingSince, long consecutiveFailures, String lastError) {
        static final Cycles NONE = new Cycles(null, null, null, 0, null);
    }

    /** How the loop's thread ended: died of an error ({@code diedAt}, {@code death}), or {@code stopped} when asked. */
    public record End(Instant diedAt, String death, boolean stopped) {
        static final End RUNNING = new End(null, null, false);
    }

    private final String name;
    private final HealthSettings bounds;
    private final Clock clock;
    private volatile Snapshot state;
    /** When the cycle in progress began; null between cycles. Written by the loop, read by readiness. */
    private volatile Instant cycleBegan;
    /** When the last cycle failed; only {@link #idle} reads it (the loop's thread, under the lock). */
    private Instant lastFailedAt;
    /**
     * Set by an {@link #idle} cycle that kept a failing run: the run counts only until then (or while a cycle runs), so
     * a loop that failed once and then sleeps long with nothing to do is not reported failing for its whole sleep.
     */
    private volatile Instant failingHeldUntil;

    public LoopProgress(String name, HealthSettings bounds, Clock clock) {
        this.name = name;
        this.bounds = bounds;
        this.clock = clock;
        Instant now = clock.instant();
        this.state = new Snapshot(name, now, Cycles.NONE, null, End.RUNNING);
    }

    @Override
    public String name() {
        return name;
    }

    public HealthSettings bounds() {
        return bounds;
    }

    /**
     * A cycle begins (optional; call it where the loop's own sleep has ended). A cycle that runs longer than
     * {@link HealthSettings#failingAfter()} counts as failing: one of its calls is not answering (a stopped backend
     * the driver has not given up yet), and the loop says so before its socket timeout ends the call.
     */
    public void begin() {
        cycleBegan = clock.instant();
    }

    /** A cycle ended and did its work (or found none to do). */
    public synchronized void completed() {
        cycleBegan = null;
        failingHeldUntil = null;
        Snapshot s = state;
        Instant now = clock.instant();
        state = s.with(new Cycles(now, now, null, 0, null));
    }

    /**
     * A cycle ended and found nothing to do. Within {@code retryWithin} of a failed cycle that is no evidence of
     * progress: the failed work may only be waiting out its backoff (a sweeper's fire that waited on a destination's
     * held lock is retried after sweeper.transient.backoff), and an idle cycle in between would end the failing run
     * and keep readiness green while nothing fires. So the run stands until work is done ({@link #completed()}) or an
     * idle cycle comes after the failed work had its chance to return (it was cancelled, or fired elsewhere).
     */
    public synchronized void idle(Duration retryWithin) {
        Snapshot s = state;
        Instant now = clock.instant();
        Cycles c = s.cycles();
        if (c.failingSince() == null || lastFailedAt == null || Duration.between(lastFailedAt, now).compareTo(retryWithin) > 0) {
            completed();
            return;
        }
        cycleBegan = null;
        failingHeldUntil = lastFailedAt.plus(retryWithin);
        state = s.with(new Cycles(now, c.lastSuccessAt(), c.failingSince(), c.consecutiveFailures(), c.lastError()));
    }

    /** A cycle ended in an error the loop will retry; {@code why} is one line a person can act on. */
    public synchronized void failed(String why) {
        cycleBegan = null;
        failingHeldUntil = null;
        Snapshot s = state;
        Instant now = clock.instant();
        Cycles c = s.cycles();
        Instant since = c.failingSince() != null ? c.failingSince() : now;
        lastFailedAt = now;
        state = s.with(new Cycles(now, c.lastSuccessAt(), since, c.consecutiveFailures() + 1, why));
    }

    /** A standing condition the loop works around while its cycles go on (null clears it): not ready while set. */
    public synchronized void impaired(String why) {
        Snapshot s = state;
        state = new Snapshot(name, s.startedAt(), s.cycles(), why, s.end());
    }

    /** The loop's thread ended on an error: not ready until the process restarts. */
    public synchronized void died(Throwable error) {
        Snapshot s = state;
        state = new Snapshot(name, s.startedAt(), s.cycles(), s.impaired(),
                new End(clock.instant(), String.valueOf(error), s.end().stopped()));
    }

    /** The loop ended because it was asked to (process stopping). */
    public synchronized void stopped() {
        Snapshot s = state;
        state = new Snapshot(name, s.startedAt(), s.cycles(), s.impaired(), new End(s.end().diedAt(), s.end().death(), true));
    }

    /**
     * Runs {@code body} as this loop's thread body: a normal return is {@link #stopped()}, any
     * {@code Throwable} is {@link #died} and rethrown (the thread's uncaught handler still sees it).
     */
    public Runnable guard(Runnable body) {
        return () -> {
            try {
                body.run();
                stopped();
            } catch (Throwable t) {
                died(t);
                throw t;
            }
        };
    }

    public Snapshot snapshot() {
        return state;
    }

    /** Why this loop is not progressing, judged now; empty when it is. Reads memory only. */
    @Override
    public Optional<String> problem() {
        Snapshot s = state;
        Cycles c = s.cycles();
        Instant now = clock.instant();
        if (s.end().diedAt() != null) {
            return Optional.of("dead since " + s.end().diedAt() + ": " + s.end().death());
        }
        if (s.end().stopped()) {
            return Optional.of("stopped");
        }
        Instant began = cycleBegan;
        if (began != null && Duration.between(began, now).compareTo(bounds.failingAfter()) > 0) {
            return Optional.of("one cycle has been running since " + began + " (" + Duration.between(began, now).toSeconds() + " s, bound "
                    + bounds.failingAfter().toSeconds() + " s): a call is not answering" + (c.lastError() == null ? "" : "; last error: " + c.lastError()));
        }
        Instant lastEnd = c.lastCycleAt() != null ? c.lastCycleAt() : s.startedAt();
        Duration quiet = Duration.between(lastEnd, now);
        if (quiet.compareTo(bounds.stallAfter()) > 0) {
            return Optional.of((c.lastCycleAt() == null ? "no cycle completed since the start at " + s.startedAt()
                    : "no cycle completed since " + c.lastCycleAt()) + " (" + quiet.toSeconds() + " s, bound " + bounds.stallAfter().toSeconds()
                    + " s)" + (c.lastError() == null ? "" : "; last error: " + c.lastError()));
        }
        Instant heldUntil = failingHeldUntil;
        boolean heldRunOver = heldUntil != null && began == null && now.isAfter(heldUntil);   // idle since, and no retry came
        if (c.failingSince() != null && !heldRunOver && Duration.between(c.failingSince(), now).compareTo(bounds.failingAfter()) > 0) {
            return Optional.of("every cycle failed since " + c.failingSince() + " (" + c.consecutiveFailures() + " cycles): " + c.lastError());
        }
        if (s.impaired() != null) {
            return Optional.of(s.impaired());
        }
        return Optional.empty();
    }
}
