package io.queen.timers.sql;

import java.io.PrintWriter;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.SQLFeatureNotSupportedException;
import java.util.ArrayList;
import java.util.List;
import java.util.logging.Logger;
import javax.sql.DataSource;

/**
 * A data source for one call of a library that may not give back every connection it takes (Flyway, on some
 * error paths): {@link #close()} closes each connection taken through it, so a pooled connection always
 * returns to its pool. Closing a connection twice is allowed by JDBC and is a no-op for a pooled one.
 */
final class BorrowedConnections implements DataSource, AutoCloseable {

    private final DataSource pool;
    private final List<Connection> taken = new ArrayList<>();

    BorrowedConnections(DataSource pool) {
        this.pool = pool;
    }

    @Override
    public synchronized Connection getConnection() throws SQLException {
        Connection c = pool.getConnection();
        taken.add(c);
        return c;
    }

    @Override
    public synchronized Connection getConnection(String username, String password) throws SQLException {
        Connection c = pool.getConnection(username, password);
        taken.add(c);
        return c;
    }

    @Override
    public synchronized void close() {
        for (Connection c : taken) {
            try {
                c.close();
            } catch (SQLException | RuntimeException e) {
                // a pool evicts a connection whose close failed; there is nothing more to give back
            }
        }
        taken.clear();
    }

    @Override
    public PrintWriter getLogWriter() throws SQLException {
        return pool.getLogWriter();
    }

    @Override
    public void setLogWriter(PrintWriter out) throws SQLException {
        pool.setLogWriter(out);
    }

    @Override
    public void setLoginTimeout(int seconds) throws SQLException {
        pool.setLoginTimeout(seconds);
    }

    @Override
    public int getLoginTimeout() throws SQLException {
        return pool.getLoginTimeout();
    }

    @Override
    public Logger getParentLogger() throws SQLFeatureNotSupportedException {
        return pool.getParentLogger();
    }

    @Override
    public <T> T unwrap(Class<T> iface) throws SQLException {
        return iface.isInstance(this) ? iface.cast(this) : pool.unwrap(iface);
    }

    @Override
    public boolean isWrapperFor(Class<?> iface) throws SQLException {
        return iface.isInstance(this) || pool.isWrapperFor(iface);
    }
}
