package io.queen.timers.sweeper;

import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.queen.timers.core.config.CommonSettings;
import io.queen.timers.core.config.Config;
import io.queen.timers.core.ops.Dependencies;
import io.queen.timers.relay.AuditSettings;
import io.queen.timers.stack.Kafka;
import io.queen.timers.stack.Postgres;
import io.queen.timers.stack.ServiceSettings;
import io.queen.timers.stack.Stack;
import io.queen.timers.testkit.PostgresDatabase;
import java.time.Duration;
import java.util.Map;
import java.util.function.Consumer;

/**
 * In-process sweepers of a test stack: the real {@link SweeperMain}, as a login of queen_sweeper with db.role.check on,
 * with test-sized settings.
 */
public final class Sweepers {

    private Sweepers() {}

    /**
     * A stack for a sweeper's tests ({@code PerClass.of(Sweepers::stack)}): a fresh database on the JVM's server named
     * after {@code owner}, migrated, and no broker (the relay is off in {@link #testSized}; a test that turns it on
     * starts from {@link Stack#shared}).
     */
    public static Stack stack(String owner) {
        return Stack.builder().postgres(Postgres.freshDatabase(owner)).kafka(Kafka.none()).migrated().start();
    }

    /**
     * What a test's sweeper runs with beyond its stack's settings: a small pool, no cleanup, no relay, short backoffs so a
     * test of five failures takes well under a second.
     */
    public static ServiceSettings testSized(ServiceSettings s) {
        return s.set(CommonSettings.JDBC_POOL_SIZE, 4)
                .set(AuditSettings.RELAY_ENABLED, false)
                .set(SweeperSettings.CLEANUP_ENABLED, false)
                .set(SweeperSettings.BACKOFF_BASE, Duration.ofMillis(50))
                .set(SweeperSettings.TRANSIENT_BACKOFF, Duration.ofMillis(200))
                .set(SweeperSettings.SLEEP_NEAR, Duration.ofMillis(200))
                .set(SweeperSettings.IDLE_MAX, Duration.ofMillis(500));
    }

    /** The settings a test's sweeper of {@code stack} starts from ({@link #testSized}). */
    public static ServiceSettings settings(Stack stack) {
        return testSized(stack.settings(SweeperMain.SERVICE));
    }

    /** A sweeper of {@code stack}, test-sized, and what {@code settings} adds; the caller stops it. */
    public static SweeperMain start(Stack stack, Consumer<ServiceSettings> settings) {
        return start(stack, settings, new SimpleMeterRegistry());
    }

    public static SweeperMain start(Stack stack, Consumer<ServiceSettings> settings, MeterRegistry registry) {
        return stack.start(SweeperMain.SERVICE, (s, st) -> settings.accept(testSized(s)), Dependencies.defaults(registry));
    }

    /**
     * A sweeper's settings on a test class's database ({@link PostgresDatabase}, the server's superuser: db.role.check
     * off, the single-role opt-out of docs/schema-and-roles.md#database-roles), test-sized, with {@code overrides} as a
     * file spells them. For the tests that do not run on a stack yet (e2e's).
     */
    public static Config config(PostgresDatabase db, Map<String, String> overrides) {
        ServiceSettings s = testSized(ServiceSettings.of(SweeperSettings.definition())
                .set(CommonSettings.JDBC_URL, db.jdbcUrl())
                .set(CommonSettings.JDBC_USER, db.user())
                .set(CommonSettings.JDBC_PASSWORD, db.password())
                .set(CommonSettings.DB_ROLE_CHECK, false)
                .set(CommonSettings.KAFKA_BOOTSTRAP, "127.0.0.1:1") // not contacted while the relay is off
                .set(CommonSettings.HTTP_PORT, 0));
        overrides.forEach(s::setText);
        return s.config();
    }

    public static SweeperMain start(PostgresDatabase db, Map<String, String> overrides) {
        return SweeperMain.start(SweeperSettings.from(config(db, overrides)), Dependencies.defaults(new SimpleMeterRegistry()));
    }

    public static SweeperMain start(PostgresDatabase db, Map<String, String> overrides, MeterRegistry registry) {
        return SweeperMain.start(SweeperSettings.from(config(db, overrides)), Dependencies.defaults(registry));
    }
}
