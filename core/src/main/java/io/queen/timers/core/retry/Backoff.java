package io.queen.timers.core.retry;

import java.time.Duration;
import java.util.Objects;
import java.util.Random;
import java.util.random.RandomGenerator;

/**
 * The one retry policy of every loop that waits after a failure: exponential backoff with <b>full jitter</b>
 * (AWS Architecture Blog, "Exponential Backoff And Jitter", 2015). Wait {@code n} (from 0) is drawn uniformly
 * from {@code [0, ceiling(n)]}, where {@code ceiling(n) = min(cap, base * 2^n)} is the old plain doubling.
 *
 * <p>Why jitter: after a database failover every replica's loops fail at the same instant; with plain doubling
 * they all retry at the same instants again, in lockstep, and hit the new primary together on every round. Why
 * full jitter rather than decorrelated jitter ({@code min(cap, random(base, 3 * previous))}): every wait stays
 * at most {@code cap}, so each bound stated on {@code db.retry.backoff.max} (and {@code health.failing.after})
 * holds as before, and once at the cap each wait is drawn afresh from {@code [0, cap]}, whereas decorrelated
 * jitter clamps to exactly {@code cap} about two times in three there, so replicas at the cap fall back into step.
 *
 * <p>PRICE: the mean wait is half the ceiling, so a loop facing a long outage tries about twice as often as
 * with plain doubling (one attempt per {@code cap / 2} on average instead of per {@code cap}), and a wait can
 * be close to 0 ms (an immediate retry). Logs that say "retrying in N ms" show a different N each time.
 *
 * <p>The policy is immutable; {@link #waits()} makes the mutable part, one sequence per loop (or per held
 * topic). The default random source is a {@link Random} of this instance (seeded from the clock and a
 * per-JVM counter), so two processes, or two loops, never share a random seed; it is thread-safe, so one
 * policy may serve sequences on several threads.
 */
public final class Backoff {

    private final Duration base;
    private final Duration cap;
    private final RandomGenerator random;

    /** A policy with its own random source. */
    public Backoff(Duration base, Duration cap) {
        this(base, cap, new Random());
    }

    /**
     * @param base   the first ceiling (the old first wait); positive
     * @param cap    the longest wait; positive (below {@code base} it is every ceiling: a wait never exceeds the cap)
     * @param random where the jitter comes from (tests pass a seeded one)
     */
    public Backoff(Duration base, Duration cap, RandomGenerator random) {
        if (base.isNegative() || base.isZero() || cap.isNegative() || cap.isZero()) {
            throw new IllegalArgumentException("backoff needs a positive base and cap, got base " + base + ", cap " + cap);
        }
        this.base = base;
        this.cap = cap;
        this.random = Objects.requireNonNull(random, "random");
    }

    public Duration base() {
        return base;
    }

    public Duration cap() {
        return cap;
    }

    /** The upper bound of wait {@code attempt} (from 0): {@code min(cap, base * 2^attempt)}, the old plain doubling. */
    public Duration ceiling(int attempt) {
        if (attempt < 0) {
            throw new IllegalArgumentException("attempt " + attempt);
        }
        long capNanos = cap.toNanos();
        long nanos = base.toNanos();
        for (int i = 0; i < attempt && nanos < capNanos; i++) {
            nanos *= 2; // stops at the cap: cap.toNanos() fits in a long, so twice anything below it does too
        }
        return Duration.ofNanos(Math.min(nanos, capNanos));
    }

    /** Wait {@code attempt} (from 0): uniform in {@code [0, ceiling(attempt)]}. */
    public Duration draw(int attempt) {
        long ceiling = ceiling(attempt).toNanos();
        return Duration.ofNanos(random.nextLong(ceiling + 1));
    }

    /** A fresh sequence of waits, starting at wait 0. */
    public Waits waits() {
        return new Waits();
    }

    @Override
    public String toString() {
        return "Backoff[base=" + base + ", cap=" + cap + ", full jitter]";
    }

    /** The waits of one loop: {@link #next()} after each failure, {@link #reset()} after a success. Not thread-safe. */
    public final class Waits {

        private int attempt;

        private Waits() {
        }

        /** The wait before the next try; each call counts one more failure. */
        public Duration next() {
            Duration d = draw(attempt);
            if (attempt < 64) {
                attempt++; // 2^64 * base is past any cap; stop counting so the counter cannot wrap
            }
            return d;
        }

        /** After a success: the next wait is drawn from {@code [0, base]} again. */
        public void reset() {
            attempt = 0;
        }

        /** Failures counted since the last reset (at most 64). */
        public int attempt() {
            return attempt;
        }
    }
}
