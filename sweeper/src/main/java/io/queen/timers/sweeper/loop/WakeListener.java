package io.queen.timers.sweeper.loop;

import io.queen.timers.core.health.LoopProgress;
import io.queen.timers.core.db.SessionTimeouts;
import io.queen.timers.core.retry.Backoff;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import org.postgresql.PGConnection;
import org.postgresql.PGNotification;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * {@code LISTEN queen_timers_wake} on a dedicated connection (not from the pool: it is held for the
 * process's life and pgjdbc delivers notifications only to the connection that listens). pgjdbc cannot
 * push notifications; {@code PGConnection.getNotifications(timeout)} blocks on the socket for up to the
 * timeout, which is exactly a sleep that a NOTIFY cuts short. Every notification wakes the loops through
 * the {@link WakeSignal}. A lost connection is retried with backoff ({@link Backoff}: jittered under 200 ms
 * doubling to {@code maxBackoff}); after every (re)connect the loops are
 * woken once, since notifications sent while nobody listened are gone.
 */
public final class WakeListener implements AutoCloseable {

    public static final String CHANNEL = "queen_timers_wake";

    /** Opens the dedicated connection. */
    @FunctionalInterface
    public interface Connector {
        Connection connect() throws SQLException;
    }

    /**
     * The listen connection runs nothing but LISTEN and a liveness check, each answered in milliseconds, so
     * its bounds are short: 5 s per statement and lock, and a backend that does not answer for 10 s is given up
     * and reconnected (the loops sweep on their clock meanwhile, so a slow reconnect delays nothing by more
     * than sweeper.sleep.near).
     */
    public static final SessionTimeouts TIMEOUTS = new SessionTimeouts("queen-sweeper-listen", Duration.ofSeconds(5),
            Duration.ofSeconds(5), Duration.ofSeconds(10));

    private static final Logger LOG = LoggerFactory.getLogger(WakeListener.class);
    private static final int POLL_MILLIS = 500;
    /**
     * How often the idle connection is asked whether it still answers. Waiting for notifications reads
     * nothing from a backend that stopped (SIGSTOP, a network black hole): without this check the listener
     * would look up for ever while hearing nothing.
     */
    private static final Duration LIVENESS_EVERY = Duration.ofSeconds(5);
    private static final int LIVENESS_TIMEOUT_SECONDS = 5;

    private final Connector connector;
    private final WakeSignal signal;
    private final LoopProgress progress;
    private final Duration maxBackoff;
    private final Thread thread;
    private volatile boolean closed;
    private volatile boolean listening;

    /**
     * @param maxBackoff longest pause between two reconnects; the sweeper passes the health bound
     *                   ({@code HealthSettings.retryPauseMax}), so a listener that lost PostgreSQL is back (and has
     *                   woken the loops) within {@code health.failing.after} of PostgreSQL coming back
     */
    public WakeListener(Connector connector, WakeSignal signal, LoopProgress progress, Duration maxBackoff) {
        this.connector = connector;
        this.signal = signal;
        this.progress = progress;
        this.maxBackoff = maxBackoff;
        this.thread = new Thread(progress.guard(this::run), "sweeper-listen");
        this.thread.setDaemon(true);
    }

    public WakeListener start() {
        thread.start();
        return this;
    }

    /** True while the LISTEN connection is up (readiness shows it; the loops still poll without it). */
    public boolean listening() {
        return listening;
    }

    private void run() {
        Backoff.Waits waits = new Backoff(Duration.ofMillis(200), maxBackoff).waits();
        while (!closed) {
            progress.begin();
            try (Connection c = connector.connect()) {
                try (Statement st = c.createStatement()) {
                    st.execute("LISTEN " + CHANNEL);
                }
                listening = true;
                waits.reset();
                signal.wake();
                PGConnection pg = c.unwrap(PGConnection.class);
                long checkedAt = System.nanoTime();
                while (!closed) {
                    PGNotification[] got = pg.getNotifications(POLL_MILLIS);
                    if (got != null && got.length > 0) {
                        signal.wake();
                    }
                    if (System.nanoTime() - checkedAt > LIVENESS_EVERY.toNanos()) {
                        if (!c.isValid(LIVENESS_TIMEOUT_SECONDS)) {
                            throw new SQLException("the LISTEN connection did not answer a liveness check within "
                                    + LIVENESS_TIMEOUT_SECONDS + " s");
                        }
                        checkedAt = System.nanoTime();
                    }
                    progress.completed();
                    progress.begin();
                }
            } catch (SQLException e) {
                listening = false;
                if (closed) {
                    return;
                }
                progress.failed("LISTEN " + CHANNEL + ": " + e.getMessage() + " (sweeping on the clock meanwhile)");
                Duration wait = waits.next();
                LOG.warn("LISTEN {} connection lost ({}); retrying in {} ms, sweeping on the clock meanwhile",
                        CHANNEL, e.getMessage(), wait.toMillis());
                sleep(wait);
            }
        }
        listening = false;
    }

    private void sleep(Duration d) {
        try {
            Thread.sleep(d.toMillis());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            closed = true;
        }
    }

    @Override
    public void close() {
        closed = true;
        try {
            thread.join(POLL_MILLIS * 4L);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
