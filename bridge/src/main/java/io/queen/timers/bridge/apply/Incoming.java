package io.queen.timers.bridge.apply;

import io.queen.timers.bridge.wire.Parsed;
import java.util.UUID;

/** One consumed record, parsed, with its topic's tenant and its producer sub (the topic's fixed one, or its verified token's sub). */
public record Incoming(Source source, UUID tenant, String producerSub, Parsed parsed) {}
