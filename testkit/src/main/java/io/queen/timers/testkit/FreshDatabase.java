package io.queen.timers.testkit;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import io.queen.timers.embedded.SharedPostgres;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;

/** A database of its own for one test class (or one benchmark run). Closing drops it. */
public final class FreshDatabase implements AutoCloseable {

    private final SharedPostgres.Database database;
    private final List<HikariDataSource> pools = new ArrayList<>();
    private final List<Login> logins = new ArrayList<>();

    /** A login role of the test server (roles are cluster-wide: the name is unique), dropped with this database. */
    public record Login(String name, String password) {}

    FreshDatabase(SharedPostgres.Database database) {
        this.database = database;
    }

    public String name() {
        return database.name();
    }

    public String jdbcUrl() {
        return database.jdbcUrl();
    }

    public String user() {
        return database.server().user();
    }

    public String password() {
        return database.server().password();
    }

    /** A new pool on this database, closed with it. */
    public synchronized HikariDataSource newDataSource(int maxPoolSize) {
        HikariConfig c = new HikariConfig();
        c.setJdbcUrl(jdbcUrl());
        c.setUsername(user());
        c.setPassword(password());
        c.setMaximumPoolSize(maxPoolSize);
        c.setMinimumIdle(0);
        c.setPoolName("test-" + name() + "-" + pools.size());
        HikariDataSource ds = new HikariDataSource(c);
        pools.add(ds);
        return ds;
    }

    /**
     * A new login that is a member of {@code groupRole} and nothing more, as a DBA makes a service's login
     * (docs/schema-and-roles.md#database-roles): {@code prefix} starts its name.
     */
    public synchronized Login login(String prefix, String groupRole) {
        Login l = new Login(prefix + "_" + UUID.randomUUID().toString().replace("-", "").substring(0, 12), "pw-" + UUID.randomUUID());
        SharedPostgres.execute("CREATE ROLE " + l.name() + " LOGIN PASSWORD '" + l.password() + "' IN ROLE " + groupRole);
        SharedPostgres.execute("GRANT CONNECT ON DATABASE " + name() + " TO " + l.name());
        logins.add(l);
        return l;
    }

    /** A connection of its own as {@code login}, autocommit. */
    public Connection connect(Login login) throws SQLException {
        Connection c = DriverManager.getConnection(jdbcUrl(), login.name(), login.password());
        c.setAutoCommit(true);
        return c;
    }

    @Override
    public synchronized void close() {
        pools.forEach(HikariDataSource::close);
        pools.clear();
        database.drop();
        logins.forEach(l -> SharedPostgres.execute("DROP ROLE IF EXISTS " + l.name()));
        logins.clear();
    }
}
