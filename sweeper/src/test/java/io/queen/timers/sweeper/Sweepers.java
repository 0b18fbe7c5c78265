package io.queen.timers.sweeper;

import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.queen.timers.core.ops.Dependencies;
import io.queen.timers.core.config.CommonSettings;
import io.queen.timers.core.config.Config;
import io.queen.timers.relay.AuditSettings;
import io.queen.timers.testkit.PostgresDatabase;
import java.util.HashMap;
import java.util.Map;

/** In-process sweepers on a test database: the real {@link SweeperMain}, with test-sized settings. */
public final class Sweepers {

    private Sweepers() {}

    /**
     * Settings for a sweeper on {@code db}: no HTTP, no cleanup, no relay (unless {@code overrides} turn it on
     * with a real broker), short backoffs so a test of five failures takes well under a second.
     */
    public static Config config(PostgresDatabase db, Map<String, String> overrides) {
        Map<String, String> raw = new HashMap<>();
        raw.put(CommonSettings.JDBC_URL, db.jdbcUrl());
        raw.put(CommonSettings.JDBC_USER, db.user());
        raw.put(CommonSettings.DB_ROLE_CHECK, "false"); // the testkit connects as the server's superuser: the single-role opt-out (docs/schema-and-roles.md#database-roles)
        raw.put(CommonSettings.JDBC_PASSWORD, db.password());
        raw.put(CommonSettings.JDBC_POOL_SIZE, "4");
        raw.put(CommonSettings.KAFKA_BOOTSTRAP, "127.0.0.1:1");   // not contacted while the relay is off
        raw.put(CommonSettings.HTTP_PORT, "0");
        raw.put(AuditSettings.RELAY_ENABLED, "false");
        raw.put(SweeperSettings.CLEANUP_ENABLED, "false");
        raw.put(SweeperSettings.BACKOFF_BASE, "50ms");
        raw.put(SweeperSettings.TRANSIENT_BACKOFF, "200ms");
        raw.put(SweeperSettings.SLEEP_NEAR, "200ms");
        raw.put(SweeperSettings.IDLE_MAX, "500ms");
        raw.putAll(overrides);
        return SweeperSettings.definition().parse(raw);
    }

    public static SweeperMain start(PostgresDatabase db, Map<String, String> overrides) {
        return SweeperMain.start(SweeperSettings.from(config(db, overrides)), Dependencies.defaults(new SimpleMeterRegistry()));
    }

    public static SweeperMain start(PostgresDatabase db, Map<String, String> overrides, MeterRegistry registry) {
        return SweeperMain.start(SweeperSettings.from(config(db, overrides)), Dependencies.defaults(registry));
    }
}
