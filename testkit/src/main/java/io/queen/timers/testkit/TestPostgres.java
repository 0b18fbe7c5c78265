package io.queen.timers.testkit;

import io.queen.timers.embedded.SharedPostgres;

/**
 * The one PostgreSQL server of this test JVM ({@link SharedPostgres}: {@code QUEEN_TEST_JDBC_URL}, else an embedded
 * PostgreSQL 17, fsync off). Every test class gets a database of its own from {@link #createDatabase(String)}; a test
 * stack ({@code io.queen.timers.stack.Postgres.freshDatabase}) makes its own on the same server.
 */
public final class TestPostgres {

    private TestPostgres() {}

    public static SharedPostgres.Server server() {
        return SharedPostgres.server();
    }

    /**
     * Makes a server somebody else started the one of this JVM (a benchmark's own durable PostgreSQL);
     * only before the first {@link #server()}.
     */
    public static void use(String jdbcUrl, String user, String password, String label) {
        SharedPostgres.use(jdbcUrl, user, password, label);
    }

    /** Creates an empty database named after {@code owner} (a test class, a benchmark) and returns it. */
    public static FreshDatabase createDatabase(String owner) {
        return new FreshDatabase(SharedPostgres.createDatabase(owner));
    }
}
