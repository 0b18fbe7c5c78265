package io.queen.timers.http.api;

import java.time.Duration;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import org.eclipse.jetty.io.Connection;
import org.eclipse.jetty.server.ConnectionMetaData;
import org.eclipse.jetty.util.thread.Scheduler;

/**
 * The header timeout (api.header.timeout), which Jetty has no setting for: a request's line and headers must arrive whole
 * within it, counted from the connection's opening (a TLS handshake included) or, on a kept-alive connection, from the
 * first byte of its next request; past it the connection is closed. Jetty parses headers as their bytes arrive, on its
 * I/O threads, and holds no thread while it waits for more, so a connection that never finishes its headers costs a
 * socket and a buffer until this closes it, never a worker. Between requests a kept-alive connection is governed by the
 * idle timeout instead, as Go's ReadHeaderTimeout and IdleTimeout divide the same times.
 *
 * <p>Read only through Jetty's public {@link Connection} counters: {@code getMessagesIn} counts the requests whose headers
 * were parsed whole, {@code getBytesIn} the bytes read. PRICE: one sweep of the open connections per
 * {@link #period}, so a connection is cut up to one period after its deadline; and a request whose headers came but whose
 * work is not done is never cut by this (the request and idle timeouts and the tenant's share govern it).
 */
final class HeaderDeadlines implements Connection.Listener, AutoCloseable {

    private final long timeoutNanos;
    private final Duration period;
    private final Scheduler scheduler;
    private final Map<Connection, Watch> open = new ConcurrentHashMap<>();
    private volatile Scheduler.Task next;
    private volatile boolean running;

    HeaderDeadlines(Duration timeout, Scheduler scheduler) {
        this.timeoutNanos = timeout.toNanos();
        this.scheduler = scheduler;
        // a tenth of the timeout, within 50 to 250 ms: a deadline is kept to within that
        this.period = Duration.ofMillis(Math.max(50, Math.min(250, timeout.toMillis() / 10)));
    }

    /** Starts the sweeps (on the server's scheduler, which must be started). */
    void start() {
        running = true;
        schedule();
    }

    @Override
    public void close() {
        running = false;
        Scheduler.Task t = next;
        if (t != null) {
            t.cancel();
        }
        open.clear();
    }

    @Override
    public void onOpened(Connection c) {
        // the HTTP connection (over TLS, the one on the decrypted end), not the TLS one beneath it
        if (c instanceof ConnectionMetaData) {
            open.put(c, new Watch(System.nanoTime(), c.getMessagesIn()));
        }
    }

    @Override
    public void onClosed(Connection c) {
        open.remove(c);
    }

    /** A request of {@code c} is done: its next request's headers are timed from their first byte. */
    void requestEnded(Connection c) {
        Watch w = open.get(c);
        if (w != null) {
            w.between(c.getMessagesIn(), c.getBytesIn());
        }
    }

    private void schedule() {
        if (running) {
            next = scheduler.schedule(this::sweep, period.toMillis(), TimeUnit.MILLISECONDS);
        }
    }

    private void sweep() {
        try {
            long now = System.nanoTime();
            open.forEach((c, w) -> {
                if (w.expired(now, c.getMessagesIn(), c.getBytesIn(), timeoutNanos)) {
                    open.remove(c);
                    c.getEndPoint().close();
                }
            });
        } finally {
            schedule();
        }
    }

    /** One connection's wait for a request's headers. */
    private static final class Watch {
        private enum State { WAITING, HANDLING, IDLE }

        private State state = State.WAITING;
        private long since;
        private long requests;
        private long bytes;

        Watch(long since, long requests) {
            this.since = since;
            this.requests = requests;
        }

        synchronized void between(long requests, long bytes) {
            this.state = State.IDLE;
            this.requests = requests;
            this.bytes = bytes;
        }

        synchronized boolean expired(long now, long requestsIn, long bytesIn, long timeout) {
            if (requestsIn > requests) {
                state = State.HANDLING; // its headers came whole; requestEnded starts the next wait
                requests = requestsIn;
            }
            switch (state) {
                case HANDLING -> {
                    return false;
                }
                case IDLE -> {
                    if (bytesIn > bytes) {
                        state = State.WAITING; // the next request's first byte came (within one period)
                        since = now;
                    }
                    return false;
                }
                default -> {
                    return now - since > timeout;
                }
            }
        }
    }
}
