package io.queen.timers.core.db;

import com.zaxxer.hikari.HikariConfig;
import io.queen.timers.core.config.CommonSettings;
import io.queen.timers.core.config.ConfigException;
import java.time.Duration;
import java.util.Properties;

/**
 * How long one connection's waits may last, fitted to its role; applied when the connection opens, so no
 * statement pays a round trip for it. docs/operations.md#timeouts lists every
 * role with its values and why.
 * <ul>
 *   <li>{@code statement}: PostgreSQL's {@code statement_timeout}. Cancels a statement that runs too long;
 *       the error is 57014, transient, and the caller retries it.</li>
 *   <li>{@code lock}: {@code lock_timeout}. Bounds a wait for a row or table lock another session holds;
 *       55P03, transient.</li>
 *   <li>{@code socket}: pgjdbc's {@code socketTimeout}, the client's own bound. The two above are enforced by
 *       the backend and cannot help when the backend itself stops answering (a stopped process, a black-holed
 *       network); this one does: the driver gives up on the socket and the pool replaces the connection.
 *       Also {@code idle_in_transaction_session_timeout}, so a client that vanished mid-transaction does not
 *       hold row locks for longer. It must exceed {@code statement}, or a slow but healthy statement would be
 *       cut off as a lost connection instead of cancelled cleanly.</li>
 * </ul>
 * Zero means "no bound" and is used only where docs/operations.md#timeouts says why.
 */
public record SessionTimeouts(String role, Duration statement, Duration lock, Duration socket) {

    /** A connection attempt (TCP and login) that takes longer than this fails and is retried by its caller. */
    public static final Duration CONNECT = Duration.ofSeconds(10);

    /**
     * Operator tools (peek, list, find, tail): one short statement each. A person waits on the other side; 30 s
     * is long enough for a list page on a large table and short enough to report a stuck database.
     */
    public static final SessionTimeouts OPERATOR = new SessionTimeouts("queen-cli", Duration.ofSeconds(30), Duration.ofSeconds(10),
            Duration.ofSeconds(60));

    /**
     * Migrations: a migration's duration belongs to the data it rewrites, and a second process waits on the
     * migration advisory lock for the first to finish, so the bounds are generous (15 min) rather than tight;
     * a migration that takes longer fails the start, which the next start retries.
     */
    public static final SessionTimeouts MIGRATION = new SessionTimeouts("queen-migrate", Duration.ofMinutes(15), Duration.ofMinutes(15),
            Duration.ofMinutes(16));

    public SessionTimeouts {
        if (!socket.isZero() && (statement.isZero() || statement.compareTo(socket) >= 0)) {
            throw new ConfigException("connection role " + role + ": the socket timeout (" + socket + ") must exceed the statement timeout ("
                    + statement + ")");
        }
    }

    /**
     * A service role: the statement and lock timeouts from the role's own settings ({@code statementKey} names the
     * first in the error), the socket timeout from {@code db.socket.timeout}; a bad combination is one line naming the settings.
     */
    public static SessionTimeouts of(String role, Duration statement, String statementKey, Duration lock, Duration socket) {
        if (statement.compareTo(socket) >= 0) {
            throw new ConfigException("setting " + CommonSettings.DB_SOCKET_TIMEOUT + " = " + socket + " must exceed " + statementKey + " = "
                    + statement + " (the driver would drop a healthy slow statement as a lost connection)");
        }
        return new SessionTimeouts(role, statement, lock, socket);
    }

    /** The same bounds under another application_name (a connection outside the pool, e.g. LISTEN). */
    public SessionTimeouts named(String otherRole) {
        return new SessionTimeouts(otherRole, statement, lock, socket);
    }

    /** pgjdbc connection properties: application_name, session defaults in the startup packet, socket bounds. */
    public Properties driverProperties() {
        Properties p = new Properties();
        p.setProperty("ApplicationName", role);
        p.setProperty("options", "-c statement_timeout=" + statement.toMillis() + " -c lock_timeout=" + lock.toMillis()
                + " -c idle_in_transaction_session_timeout=" + socket.toMillis());
        p.setProperty("socketTimeout", Long.toString(ceilSeconds(socket)));
        p.setProperty("connectTimeout", Long.toString(CONNECT.toSeconds()));
        p.setProperty("loginTimeout", Long.toString(CONNECT.toSeconds()));
        p.setProperty("tcpKeepAlive", "true");
        return p;
    }

    /** Puts {@link #driverProperties()} on a pool's configuration. */
    public void applyTo(HikariConfig c) {
        driverProperties().forEach((k, v) -> c.addDataSourceProperty((String) k, v));
    }

    private static long ceilSeconds(Duration d) {
        return d.isZero() ? 0 : Math.max(1, (d.toMillis() + 999) / 1000);
    }
}
