package io.queen.timers.bridge;

import io.micrometer.core.instrument.MeterRegistry;
import io.queen.timers.core.config.CommonSettings;
import io.queen.timers.core.ops.Dependencies;
import io.queen.timers.relay.AuditSettings;
import io.queen.timers.stack.ServiceSettings;
import io.queen.timers.stack.Stack;
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

    /** The name of {@code stack}'s bridge login (what the audit trail records as who moved an offset). */
    static String login(Stack stack) {
        return stack.login(BridgeMain.SERVICE.loginGroup()).name();
    }
}
