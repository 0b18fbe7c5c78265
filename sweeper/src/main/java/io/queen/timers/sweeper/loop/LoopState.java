package io.queen.timers.sweeper.loop;

import io.queen.timers.core.db.ErrorClass;
import java.time.Duration;
import java.util.Optional;

/**
 * What one sweep loop is doing, written by the loop and read by /health/ready (never the other way: a
 * readiness request touches no database). Not ready when the loop:
 * <ul>
 *   <li>died (an {@link Error} such as OutOfMemoryError ended its thread; the process then stops so a
 *       supervisor restarts it);</li>
 *   <li>is paused because the deployment is broken (a missing function, table or column, a revoked grant):
 *       said at once, since nothing fires until an operator acts;</li>
 *   <li>has been inside one cycle for longer than {@code stallAfter} (a backend that stopped answering, a lock
 *       wait): the driver's socket timeout ends it, this says so meanwhile;</li>
 *   <li>has failed every cycle for longer than {@code stallAfter}.</li>
 * </ul>
 * Thread-safe: one writer (the loop), any readers.
 */
public final class LoopState {

    private final String name;
    private final Duration stallAfter;
    private volatile long cycleStartNanos;
    private volatile boolean inCycle;
    private volatile long failingSinceNanos;
    private volatile String failure;
    private volatile ErrorClass failureClass;
    private volatile Throwable death;

    public LoopState(String name, Duration stallAfter) {
        this.name = name;
        this.stallAfter = stallAfter;
    }

    public String name() {
        return name;
    }

    void cycleStarted() {
        cycleStartNanos = System.nanoTime();
        inCycle = true;
    }

    void cycleCompleted() {
        inCycle = false;
        failure = null;
        failureClass = null;
    }

    void cycleFailed(ErrorClass errorClass, String reason) {
        inCycle = false;
        if (failure == null) {
            failingSinceNanos = System.nanoTime();
        }
        failureClass = errorClass;
        failure = reason;
    }

    /** The loop's thread ended with an Error. */
    public void died(Throwable error) {
        inCycle = false;
        death = error;
    }

    public boolean dead() {
        return death != null;
    }

    /** Empty when the loop is progressing; otherwise one line that says what is wrong. */
    public Optional<String> problem() {
        Throwable d = death;
        if (d != null) {
            return Optional.of(name + " died of " + d + "; the sweeper stops so that it can be restarted");
        }
        long now = System.nanoTime();
        if (inCycle && now - cycleStartNanos > stallAfter.toNanos()) {
            return Optional.of(name + ": one cycle has been running for " + seconds(now - cycleStartNanos)
                    + " s (a database call is not answering; the driver's socket timeout will end it)");
        }
        String f = failure;
        ErrorClass c = failureClass;
        if (f != null && c == ErrorClass.DEPLOYMENT) {
            return Optional.of(name + " paused: the deployment is broken, not the timers (no attempt spent, nothing dead-lettered;"
                    + " fix the schema or the grants): " + f);
        }
        if (f != null && now - failingSinceNanos > stallAfter.toNanos()) {
            return Optional.of(name + ": every cycle has failed for " + seconds(now - failingSinceNanos) + " s: " + f);
        }
        return Optional.empty();
    }

    private static long seconds(long nanos) {
        return Duration.ofNanos(nanos).toSeconds();
    }
}
