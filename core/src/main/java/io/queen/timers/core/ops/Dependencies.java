package io.queen.timers.core.ops;

import io.micrometer.core.instrument.MeterRegistry;
import io.queen.timers.core.config.CommonSettings;
import io.queen.timers.core.health.Health;
import io.queen.timers.core.telemetry.Telemetry;
import io.queen.timers.core.telemetry.TelemetrySettings;
import java.time.Clock;

/**
 * What a service is given besides its settings when it starts in this JVM: where its meters go, the {@link Health} its
 * loops report to, the {@link Startup} that retries its start-up steps, and where its spans go. A {@link ServiceHost}
 * gives its own; a test or a benchmark usually gives only a registry ({@link #defaults}) and lets the service make the
 * rest from its settings ({@link #complete}).
 *
 * @param registry  where the service's meters go; the caller owns it
 * @param health    its loops' readiness; null: one of its own from {@code health.*}
 * @param startup   its start-up steps' retries; null: one of its own from {@code startup.timeout}
 * @param telemetry where its spans go; null: this JVM's ({@link Telemetry#process})
 */
public record Dependencies(MeterRegistry registry, Health health, Startup startup, Telemetry telemetry) {

    /** The common case: meters to {@code registry}, the rest made by the service. */
    public static Dependencies defaults(MeterRegistry registry) {
        return new Dependencies(registry, null, null, null);
    }

    public Dependencies withHealth(Health h) {
        return new Dependencies(registry, h, startup, telemetry);
    }

    public Dependencies withStartup(Startup s) {
        return new Dependencies(registry, health, s, telemetry);
    }

    public Dependencies withTelemetry(Telemetry t) {
        return new Dependencies(registry, health, startup, t);
    }

    /** Every null one made from the service's settings, as described on each component. */
    public Dependencies complete(String service, CommonSettings common, TelemetrySettings tracing) {
        return new Dependencies(registry,
                health != null ? health : Health.from(common.health()),
                startup != null ? startup : new Startup(service, common.outages().startupTimeout(), common.retryPauseMax(), Clock.systemUTC()),
                telemetry != null ? telemetry : Telemetry.process(tracing));
    }
}
