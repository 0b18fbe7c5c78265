package io.queen.timers.testkit;

import io.queen.timers.embedded.EmbeddedPostgresServer;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.Locale;
import java.util.concurrent.atomic.AtomicInteger;
import org.testcontainers.postgresql.PostgreSQLContainer;

/**
 * The one PostgreSQL server of this test JVM, found in this order:
 * <ol>
 *   <li>{@code QUEEN_TEST_JDBC_URL} (with {@code QUEEN_TEST_JDBC_USER}, {@code QUEEN_TEST_JDBC_PASSWORD}):
 *       an existing server whose user may {@code CREATE DATABASE};</li>
 *   <li>Testcontainers {@code postgres:17} when a Docker engine answers;</li>
 *   <li>an embedded real PostgreSQL 17 (zonky binaries), fsync off.</li>
 * </ol>
 * Every test class gets a database of its own from {@link #createDatabase(String)}.
 */
public final class TestPostgres {

    /** Where the server came from, printed once so a test log says what it ran against. */
    public enum Origin { ENV, TESTCONTAINERS, EMBEDDED }

    /** An administrative handle on the server: connect to {@code adminDatabase} to create others. */
    public record Server(Origin origin, String baseUrl, String adminDatabase, String user, String password, String params) {
        public String jdbcUrl(String database) {
            return baseUrl + database + params;
        }
    }

    private static final AtomicInteger COUNTER = new AtomicInteger();
    private static Server server;

    private TestPostgres() {}

    public static synchronized Server server() {
        if (server == null) {
            server = resolve();
            System.out.println("[queen-testkit] PostgreSQL: " + server.origin() + " " + server.jdbcUrl(server.adminDatabase()));
        }
        return server;
    }

    /**
     * Makes a server somebody else started the one of this JVM (a benchmark's own durable PostgreSQL);
     * only before the first {@link #server()}.
     */
    public static synchronized void use(String jdbcUrl, String user, String password, String label) {
        if (server != null) {
            throw new IllegalStateException("this JVM already uses the PostgreSQL of " + server.origin());
        }
        server = fromUrl(jdbcUrl, user, password);
        System.out.println("[queen-testkit] PostgreSQL: " + label + " " + server.jdbcUrl(server.adminDatabase()));
    }

    /** Creates an empty database named after {@code owner} (a test class, a benchmark) and returns it. */
    public static FreshDatabase createDatabase(String owner) {
        Server s = server();
        String name = ("qt_" + owner.replaceAll("[^A-Za-z0-9]", "_") + "_" + ProcessHandle.current().pid() + "_"
                + COUNTER.incrementAndGet()).toLowerCase(Locale.ROOT);
        if (name.length() > 60) {
            name = name.substring(name.length() - 60);
            name = "qt" + name.substring(2);
        }
        execute(s, "CREATE DATABASE " + name);
        return new FreshDatabase(s, name);
    }

    static void execute(Server s, String sql) {
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
            return fromUrl(url, env("QUEEN_TEST_JDBC_USER", "postgres"), env("QUEEN_TEST_JDBC_PASSWORD", ""));
        }
        if (Docker.available()) {
            PostgreSQLContainer pg = new PostgreSQLContainer("postgres:17")
                    .withCommand("postgres", "-c", "max_connections=400", "-c", "fsync=off");
            pg.start();
            Runtime.getRuntime().addShutdownHook(new Thread(pg::stop, "testkit-postgres-stop"));
            Server s = fromUrl(pg.getJdbcUrl(), pg.getUsername(), pg.getPassword());
            return new Server(Origin.TESTCONTAINERS, s.baseUrl(), s.adminDatabase(), s.user(), s.password(), s.params());
        }
        EmbeddedPostgresServer pg = EmbeddedPostgresServer.start(null, 0, EmbeddedPostgresServer.Durability.RELAXED);
        Runtime.getRuntime().addShutdownHook(new Thread(pg::close, "testkit-postgres-stop"));
        return new Server(Origin.EMBEDDED, "jdbc:postgresql://127.0.0.1:" + pg.port() + "/", "postgres",
                EmbeddedPostgresServer.USER, "", "");
    }

    /** Splits jdbc:postgresql://host:port/db?params so the database name can be swapped. */
    private static Server fromUrl(String url, String user, String password) {
        int q = url.indexOf('?');
        String params = q < 0 ? "" : url.substring(q);
        String noParams = q < 0 ? url : url.substring(0, q);
        int slash = noParams.lastIndexOf('/');
        if (!noParams.startsWith("jdbc:postgresql://") || slash < "jdbc:postgresql://".length()) {
            throw new IllegalArgumentException("QUEEN_TEST_JDBC_URL must look like jdbc:postgresql://host:port/database, got " + url);
        }
        String db = noParams.substring(slash + 1);
        return new Server(Origin.ENV, noParams.substring(0, slash + 1), db.isEmpty() ? "postgres" : db, user, password, params);
    }

    private static String env(String name, String dflt) {
        String v = System.getenv(name);
        return v == null ? dflt : v;
    }
}
