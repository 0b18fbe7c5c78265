package io.queen.timers.bridge;

import io.micrometer.core.instrument.MeterRegistry;
import io.queen.timers.core.config.CommonSettings;
import io.queen.timers.core.config.Config;
import io.queen.timers.core.ops.Dependencies;
import io.queen.timers.core.ops.ServiceHost;
import io.queen.timers.relay.AuditSettings;
import io.queen.timers.stack.ServiceSettings;
import io.queen.timers.stack.Stack;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.SQLException;
import java.time.Duration;
import java.util.function.Consumer;

/**
 * In-process bridges of a test stack ({@code PerClass.of(Stack::shared)}): the real {@link BridgeMain}, as a login of
 * queen_bridge with db.role.check on, bound by the owner to its group and its topics' tenants as `migrate` binds them,
 * with test-sized settings.
 */
final class Bridges {

    private Bridges() {}

    /**
     * What a test's bridge runs with beyond its stack's settings: a small pool, a short Kafka session (a test that stops a
     * bridge hands its partitions on within seconds), fast relay polls, and the earliest start position (most tests fill
     * the topic before the bridge joins).
     */
    static ServiceSettings testSized(ServiceSettings s) {
        return s.set(CommonSettings.JDBC_POOL_SIZE, 4)
                .kafka("session.timeout.ms", 6000)
                .kafka("heartbeat.interval.ms", 500)
                .set(BridgeSettings.START_POSITION, "earliest")
                .set(CommonSettings.DB_RETRY_BACKOFF_MAX, Duration.ofSeconds(1))
                .set(AuditSettings.RELAY_POLL_INTERVAL, Duration.ofMillis(50))
                .set(AuditSettings.RELAY_STANDBY_INTERVAL, Duration.ofMillis(500));
    }

    /** A bridge of {@code stack}, test-sized, and what {@code settings} adds; the caller stops it. */
    static BridgeMain start(Stack stack, Consumer<ServiceSettings> settings, MeterRegistry registry) {
        return stack.start(BridgeMain.SERVICE, (s, st) -> settings.accept(testSized(s)), Dependencies.defaults(registry));
    }

    /**
     * The settings of a bridge of {@code stack} started otherwise than by {@link Stack#start} (under its host, in a JVM of
     * its own), test-sized, and what {@code settings} adds; the owner binds its login to its group and topics first, as
     * {@link Stack#start} does.
     */
    static Config declared(Stack stack, Consumer<ServiceSettings> settings) {
        return declare(stack, settings(stack, settings));
    }

    /** A bridge of {@code stack} under its host (its /health port), as the launcher's `bridge` subcommand runs it. */
    static ServiceHost host(Stack stack, Consumer<ServiceSettings> settings) {
        return BridgeMain.SERVICE.host().apply(declared(stack, settings));
    }

    /** A {@code --config} file for a bridge of {@code stack} in a JVM of its own ({@link #declared}). */
    static Path configFile(Stack stack, Consumer<ServiceSettings> settings) {
        ServiceSettings s = settings(stack, settings);
        declare(stack, s);
        try {
            Path file = Files.createTempFile("bridge", ".properties");
            file.toFile().deleteOnExit();
            return s.writeTo(file);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static ServiceSettings settings(Stack stack, Consumer<ServiceSettings> settings) {
        ServiceSettings s = testSized(stack.settings(BridgeMain.SERVICE));
        settings.accept(s);
        return s;
    }

    private static Config declare(Stack stack, ServiceSettings s) {
        Config config = s.config();
        try {
            BridgeMain.SERVICE.declaration().declare(config, stack.owner(), login(stack));
        } catch (SQLException e) {
            throw new IllegalStateException("the owner cannot bind the bridge's login: " + e.getMessage(), e);
        }
        return config;
    }

    /** The name of {@code stack}'s bridge login (what the audit trail records as who moved an offset). */
    static String login(Stack stack) {
        return stack.login(BridgeMain.SERVICE.loginGroup()).name();
    }
}
