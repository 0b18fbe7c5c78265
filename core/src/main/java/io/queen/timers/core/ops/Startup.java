package io.queen.timers.core.ops;

import io.queen.timers.core.db.ErrorClass;
import io.queen.timers.core.db.SqlStates;
import io.queen.timers.core.health.ReadinessCheck;
import io.queen.timers.core.retry.Backoff;
import java.sql.SQLException;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.Optional;
import java.util.concurrent.Callable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The start-up phase of a service, and the one way a start-up step rides out an outage: a step that
 * fails because PostgreSQL is unreachable, restarting or overloaded (a transient SQLSTATE, see
 * {@link SqlStates}) is retried with the run-time backoff ({@link Backoff}: jittered under a ceiling of 100 ms
 * doubling to {@code db.retry.backoff.max})
 * for as long as {@code startup.timeout} allows (0 = indefinitely). Meanwhile the process is live and not
 * ready ({@link #problem()} says what it waits for), and it logs at most one line every
 * {@value #LOG_EVERY_SECONDS} s. A permanent error (a broken migration, a refused password) is not
 * retried: waiting would not fix it.
 */
public final class Startup implements ReadinessCheck {

    private static final Logger LOG = LoggerFactory.getLogger(Startup.class);
    private static final Duration MIN_BACKOFF = Duration.ofMillis(100);
    static final long LOG_EVERY_SECONDS = 5;

    private final String service;
    private final Duration timeout;
    private final Duration maxBackoff;
    private final Backoff backoff;
    private final Clock clock;
    private final Instant startedAt;
    private volatile String waitingFor = "starting";
    private volatile boolean done;
    private volatile boolean cancelled;

    /**
     * @param timeout    how long start-up may wait for its dependencies in all; zero waits indefinitely
     * @param maxBackoff longest pause between two attempts
     */
    public Startup(String service, Duration timeout, Duration maxBackoff, Clock clock) {
        this.service = service;
        this.timeout = timeout;
        this.maxBackoff = maxBackoff;
        this.backoff = new Backoff(MIN_BACKOFF, maxBackoff);
        this.clock = clock;
        this.startedAt = clock.instant();
    }

    @Override
    public String name() {
        return "startup";
    }

    @Override
    public Optional<String> problem() {
        return done ? Optional.empty() : Optional.of(waitingFor);
    }

    /** Start-up finished: the service's own loops report from now on. */
    public void done() {
        done = true;
    }

    /** Stops waiting (the process is asked to stop during start-up). */
    public void cancel() {
        cancelled = true;
        synchronized (this) {
            notifyAll();
        }
    }

    /**
     * Runs {@code step}, retrying it while it fails transiently.
     *
     * @param what what the step does, for the log and readiness ("apply the schema migrations")
     * @throws IllegalStateException on a permanent error, when {@code startup.timeout} ran out, or when cancelled
     */
    public <T> T retry(String what, Callable<T> step) {
        Backoff.Waits waits = backoff.waits();
        int attempt = 0;
        Instant lastLog = null;
        while (true) {
            if (cancelled) {
                throw new IllegalStateException(service + ": start-up cancelled while trying to " + what);
            }
            attempt++;
            try {
                T result = step.call();
                if (attempt > 1) {
                    LOG.info("{}: {} succeeded at attempt {}", service, what, attempt);
                }
                return result;
            } catch (Exception e) {
                SQLException sql = SqlStates.find(e);
                if (sql == null || SqlStates.classify(sql) != ErrorClass.TRANSIENT) {
                    throw e instanceof RuntimeException r ? r : new IllegalStateException(service + ": cannot " + what + ": " + e.getMessage(), e);
                }
                Instant now = clock.instant();
                String why = firstLine(e.getMessage());
                waitingFor = "cannot " + what + " since " + startedAt + " (attempt " + attempt + "): " + why;
                if (!timeout.isZero() && Duration.between(startedAt, now).compareTo(timeout) >= 0) {
                    throw new IllegalStateException(service + ": gave up trying to " + what + " after " + attempt + " attempts in "
                            + Duration.between(startedAt, now).toSeconds() + " s (setting startup.timeout = " + timeout + "): " + why, e);
                }
                if (lastLog == null || Duration.between(lastLog, now).toSeconds() >= LOG_EVERY_SECONDS) {
                    LOG.warn("{}: cannot {} (attempt {}): {}; retrying (backoff up to {} ms), not ready meanwhile",
                            service, what, attempt, why, maxBackoff.toMillis());
                    lastLog = now;
                }
                pause(waits.next());
            }
        }
    }

    private synchronized void pause(Duration d) {
        if (cancelled) {
            return;
        }
        try {
            wait(Math.max(1, d.toMillis()));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            cancelled = true;
        }
    }

    private static String firstLine(String s) {
        if (s == null) {
            return "no message";
        }
        int nl = s.indexOf('\n');
        return nl < 0 ? s : s.substring(0, nl).trim();
    }
}
