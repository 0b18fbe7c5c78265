package io.queen.timers.testkit;

import java.util.function.Consumer;
import javax.sql.DataSource;
import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * JUnit 5 extension: a fresh database per test class on the JVM's one server ({@link TestPostgres}).
 *
 * <pre>{@code
 * @RegisterExtension
 * static final PostgresDatabase db = PostgresDatabase.initializedWith(Migrations::migrate);
 * }</pre>
 *
 * The initializer (usually the migrations) runs once, before the first test of the class. The
 * testkit does not depend on the schema module, so the schema module can test itself with it.
 */
public final class PostgresDatabase implements BeforeAllCallback, AfterAllCallback {

    private final Consumer<DataSource> initializer;
    private FreshDatabase database;
    private DataSource dataSource;

    private PostgresDatabase(Consumer<DataSource> initializer) {
        this.initializer = initializer;
    }

    public static PostgresDatabase initializedWith(Consumer<DataSource> initializer) {
        return new PostgresDatabase(initializer);
    }

    public static PostgresDatabase empty() {
        return new PostgresDatabase(ds -> {});
    }

    @Override
    public void beforeAll(ExtensionContext context) {
        database = TestPostgres.createDatabase(context.getRequiredTestClass().getSimpleName());
        dataSource = database.newDataSource(16);
        initializer.accept(dataSource);
    }

    @Override
    public void afterAll(ExtensionContext context) {
        if (database != null) {
            database.close();
        }
    }

    /** The class's shared pool (16 connections). */
    public DataSource dataSource() {
        return dataSource;
    }

    /** Another pool on the same database, for tests that need their own connection budget. */
    public DataSource newDataSource(int maxPoolSize) {
        return database.newDataSource(maxPoolSize);
    }

    /** A login of {@code groupRole} and nothing more, dropped with the database ({@link FreshDatabase#login}). */
    public FreshDatabase.Login login(String prefix, String groupRole) {
        return database.login(prefix, groupRole);
    }

    /** A connection of its own as {@code login}, autocommit. */
    public java.sql.Connection connect(FreshDatabase.Login login) throws java.sql.SQLException {
        return database.connect(login);
    }

    public FreshDatabase database() {
        return database;
    }

    public String jdbcUrl() {
        return database.jdbcUrl();
    }

    public String user() {
        return database.user();
    }

    public String password() {
        return database.password();
    }
}
