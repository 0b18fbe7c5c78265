package io.queen.timers.bridge;

import static io.queen.timers.core.config.ConfigDef.Type.DURATION;
import static io.queen.timers.core.config.ConfigDef.Type.INT;
import static io.queen.timers.core.config.ConfigDef.Type.LIST;
import static io.queen.timers.core.config.ConfigDef.Type.STRING;
import static io.queen.timers.core.config.ConfigDef.between;
import static io.queen.timers.core.config.ConfigDef.durationBetween;
import static io.queen.timers.core.config.ConfigDef.nonEmpty;

import io.queen.timers.bridge.crypto.EncryptionSettings;
import io.queen.timers.core.audit.AuditSettings;
import io.queen.timers.core.config.CommonSettings;
import io.queen.timers.core.config.ConfigDef;
import java.time.Duration;

/**
 * Everything the bridge reads (README "Commands" lists them with their environment names). Besides
 * these declared keys: {@code topic.<name>.tenant} and {@code topic.<name>.producer.sub} per command
 * topic and {@code topic.<name>.auth*} (token checks, {@link TopicRoutes}), and {@code kafka.*} for the consumer and the relay's producer.
 */
public final class BridgeSettings {

    public static final String COMMAND_TOPICS = "command.topics";
    public static final String GROUP_ID = "bridge.group.id";
    public static final String HORIZON = "bridge.horizon";
    public static final String PAYLOAD_MAX_BYTES = "bridge.payload.max.bytes";
    public static final String ZSTD_THRESHOLD = "bridge.payload.zstd.threshold";
    public static final String WAKE_WITHIN = "bridge.wake.within";
    public static final String POLL_TIMEOUT = "bridge.poll.timeout";

    private BridgeSettings() {}

    public static ConfigDef definition() {
        return new ConfigDef()
                .include(CommonSettings.definition())
                .include(AuditSettings.definition())
                .include(EncryptionSettings.definition())
                .define(COMMAND_TOPICS, LIST, "queen.timers.commands", nonEmpty(), "QUEEN_COMMAND_TOPICS",
                        "Comma-separated Kafka topics carrying commands. Each maps to one tenant (topic.<name>.tenant, "
                                + "default the default tenant) and optionally one producer sub (topic.<name>.producer.sub).")
                .define(GROUP_ID, STRING, "queen-timers-bridge", nonEmpty(),
                        "Kafka consumer group of the bridge instances; also the key of their offsets in queen.bridge_offsets.")
                .define(HORIZON, DURATION, "90d", durationBetween(Duration.ofSeconds(1), Duration.ofDays(3650)),
                        "Latest delivery time a command may ask for, counted from the record's timestamp; later is rejected (horizon).")
                .define(PAYLOAD_MAX_BYTES, INT, Integer.toString(1 << 20), between(0, 64 << 20),
                        "Largest compact payload in bytes; larger is rejected (payload_too_large).")
                .define(ZSTD_THRESHOLD, INT, "4096", between(0, Integer.MAX_VALUE),
                        "Payloads longer than this many bytes are stored zstd-compressed (payload_zstd = true).")
                .define(WAKE_WITHIN, DURATION, "30s", durationBetween(Duration.ZERO, Duration.ofHours(1)),
                        "NOTIFY queen_timers_wake at commit when a batch wrote a timer due within this much time. "
                                + "30s = the sweeper's longest idle sleep, so no timer waits for a sleeping sweeper past its due time.")
                .define(POLL_TIMEOUT, DURATION, "200ms", durationBetween(Duration.ofMillis(1), Duration.ofSeconds(30)),
                        "Longest wait of one consumer poll; also how soon a stop request is seen.");
    }
}
