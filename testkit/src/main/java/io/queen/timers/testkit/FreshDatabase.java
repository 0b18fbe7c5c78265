package io.queen.timers.testkit;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import java.util.ArrayList;
import java.util.List;

/** A database of its own for one test class (or one benchmark run). Closing drops it. */
public final class FreshDatabase implements AutoCloseable {

    private final TestPostgres.Server server;
    private final String name;
    private final List<HikariDataSource> pools = new ArrayList<>();

    FreshDatabase(TestPostgres.Server server, String name) {
        this.server = server;
        this.name = name;
    }

    public String name() {
        return name;
    }

    public String jdbcUrl() {
        return server.jdbcUrl(name);
    }

    public String user() {
        return server.user();
    }

    public String password() {
        return server.password();
    }

    /** A new pool on this database, closed with it. */
    public synchronized HikariDataSource newDataSource(int maxPoolSize) {
        HikariConfig c = new HikariConfig();
        c.setJdbcUrl(jdbcUrl());
        c.setUsername(user());
        c.setPassword(password());
        c.setMaximumPoolSize(maxPoolSize);
        c.setMinimumIdle(0);
        c.setPoolName("test-" + name + "-" + pools.size());
        HikariDataSource ds = new HikariDataSource(c);
        pools.add(ds);
        return ds;
    }

    @Override
    public synchronized void close() {
        pools.forEach(HikariDataSource::close);
        pools.clear();
        TestPostgres.execute(server, "DROP DATABASE IF EXISTS " + name + " WITH (FORCE)");
    }
}
