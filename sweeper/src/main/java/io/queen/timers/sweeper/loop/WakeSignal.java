package io.queen.timers.sweeper.loop;

import java.time.Duration;

/**
 * Wakes sleeping sweep loops early (a {@code NOTIFY queen_timers_wake}, or shutdown). A loop reads the
 * {@link #generation()} before its cycle and then {@link #awaitChange waits for a change}: a wake-up that
 * arrives while the loop is busy is not lost, it makes the next sleep return at once.
 */
public final class WakeSignal {

    private long generation;

    public synchronized long generation() {
        return generation;
    }

    public synchronized void wake() {
        generation++;
        notifyAll();
    }

    /** Waits until the generation differs from {@code seen} or {@code timeout} passed; true when woken. */
    public synchronized boolean awaitChange(long seen, Duration timeout) throws InterruptedException {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (generation == seen) {
            long left = deadline - System.nanoTime();
            if (left <= 0) {
                return false;
            }
            wait(Math.max(1, left / 1_000_000), 0);
        }
        return true;
    }
}
