package io.queen.timers.bridge.apply;

import io.queen.timers.bridge.wire.Parsed;
import java.util.UUID;

/** One consumed record, parsed, with the tenant and producer sub its topic is configured with. */
public record Incoming(Source source, UUID tenant, String producerSub, Parsed parsed) {}
