package io.queen.timers.bridge.wire;

import java.time.Duration;

/** The configurable limits of validation: the horizon and the payload size (bridge.horizon, bridge.payload.max.bytes). */
public record WireLimits(Duration horizon, int payloadMaxBytes) {
    public static final WireLimits DEFAULTS = new WireLimits(Duration.ofDays(90), 1 << 20);
}
