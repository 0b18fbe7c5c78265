package io.queen.timers.embedded;

import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.Locale;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The one PostgreSQL server of this JVM's tests, where every test class (every test stack) makes a database of its own:
 * the server {@code QUEEN_TEST_JDBC_URL} names (with {@code QUEEN_TEST_JDBC_USER}, {@code QUEEN_TEST_JDBC_PASSWORD}; its
 * user may {@code CREATE DATABASE} and {@code CREATEROLE}), else an embedded PostgreSQL 17 started at the first call (fsync
 * off) and stopped when the JVM exits. A benchmark hands it its own durable server first ({@link #use}).
 *
 * <p>PRICE: one server for every class of the JVM, so a class that stops or restarts PostgreSQL needs a server of its own
 * ({@link EmbeddedPostgresServer}); in exchange a class pays a {@code CREATE DATABASE}, not a server's start.
 */
public final class SharedPostgres {

    /** An administrative handle on the server: connect to {@code adminDatabase} to create and drop the others. */
    public record Server(String origin, String baseUrl, String adminDatabase, String user, String password, String params) {
        public String jdbcUrl(String database) {
            return baseUrl + database + params;
        }
    }

    /** A database of its own on the server; {@link #drop()} removes it (its connections are ended first). */
    public record Database(Server server, String name) {
        public String jdbcUrl() {
            return server.jdbcUrl(name);
        }

        public void drop() {
            execute("DROP DATABASE IF EXISTS " + name + " WITH (FORCE)");
        }
    }

    private static final AtomicInteger COUNTER = new AtomicInteger();
    private static Server server;

    private SharedPostgres() {}

    public static synchronized Server server() {
        if (server == null) {
            server = resolve();
            System.out.println("[queen-testkit] PostgreSQL: " + server.origin() + " " + server.jdbcUrl(server.adminDatabase()));
        }
        return server;
    }

    /**
     * Makes a server somebody else started the one of this JVM (a benchmark's own durable PostgreSQL); only before the
     * first {@link #server()}.
     */
    public static synchronized void use(String jdbcUrl, String user, String password, String label) {
        if (server != null) {
            throw new IllegalStateException("this JVM already uses the PostgreSQL of " + server.origin());
        }
        server = fromUrl(label, jdbcUrl, user, password);
        System.out.println("[queen-testkit] PostgreSQL: " + label + " " + server.jdbcUrl(server.adminDatabase()));
    }

    /** Creates an empty database named after {@code owner} (a test class, a benchmark): unique in the server. */
    public static Database createDatabase(String owner) {
        Server s = server();
        String name = ("qt_" + owner.replaceAll("[^A-Za-z0-9]", "_") + "_" + ProcessHandle.current().pid() + "_"
                + COUNTER.incrementAndGet()).toLowerCase(Locale.ROOT);
        if (name.length() > 60) {
            name = name.substring(name.length() - 60);
            name = "qt" + name.substring(2);
        }
        execute("CREATE DATABASE " + name);
        return new Database(s, name);
    }

    /** Runs {@code sql} on the admin database as the server's user (an identifier this JVM made, never a value). */
    public static void execute(String sql) {
        Server s = server();
        try (Connection c = DriverManager.getConnection(s.jdbcUrl(s.adminDatabase()), s.user(), s.password());
                Statement st = c.createStatement()) {
            st.execute(sql);
        } catch (SQLException e) {
            throw new IllegalStateException(sql + ": " + e.getMessage(), e);
        }
    }

    private static Server resolve() {
        String url = System.getenv("QUEEN_TEST_JDBC_URL");
        if (url != null && !url.isBlank()) {
            return fromUrl("ENV", url, env("QUEEN_TEST_JDBC_USER", "postgres"), env("QUEEN_TEST_JDBC_PASSWORD", ""));
        }
        EmbeddedPostgresServer pg = EmbeddedPostgresServer.start(null, 0, EmbeddedPostgresServer.Durability.RELAXED);
        Runtime.getRuntime().addShutdownHook(new Thread(pg::close, "shared-postgres-stop"));
        return new Server("EMBEDDED", "jdbc:postgresql://127.0.0.1:" + pg.port() + "/", "postgres", EmbeddedPostgresServer.USER, "", "");
    }

    /** Splits jdbc:postgresql://host:port/db?params so the database name can be swapped. */
    private static Server fromUrl(String origin, String url, String user, String password) {
        int q = url.indexOf('?');
        String params = q < 0 ? "" : url.substring(q);
        String noParams = q < 0 ? url : url.substring(0, q);
        int slash = noParams.lastIndexOf('/');
        if (!noParams.startsWith("jdbc:postgresql://") || slash < "jdbc:postgresql://".length()) {
            throw new IllegalArgumentException("QUEEN_TEST_JDBC_URL must look like jdbc:postgresql://host:port/database, got " + url);
        }
        String db = noParams.substring(slash + 1);
        return new Server(origin, noParams.substring(0, slash + 1), db.isEmpty() ? "postgres" : db, user, password, params);
    }

    private static String env(String name, String dflt) {
        String v = System.getenv(name);
        return v == null ? dflt : v;
    }
}
