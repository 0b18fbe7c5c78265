package io.queen.timers.relay;

import static io.queen.timers.core.config.ConfigDef.Type.BOOLEAN;
import static io.queen.timers.core.config.ConfigDef.Type.DURATION;
import static io.queen.timers.core.config.ConfigDef.Type.INT;
import static io.queen.timers.core.config.ConfigDef.Type.STRING;
import static io.queen.timers.core.config.ConfigDef.between;
import static io.queen.timers.core.config.ConfigDef.durationBetween;
import static io.queen.timers.core.config.ConfigDef.oneOf;

import io.queen.timers.core.config.AuditTopics;
import io.queen.timers.core.config.Config;
import io.queen.timers.core.config.ConfigDef;
import java.time.Duration;

/**
 * Settings of the audit outbox relay ({@link AuditRelay}). Every process that writes outbox rows
 * (bridge, sweeper) includes these and may run a relay; one per database is active at a time.
 * The audit topic itself is {@code audit.topic} of CommonSettings; a tenant other than the default
 * publishes to {@code tenant.<uuid>.audit.topic}, default {@code <audit.topic>.<uuid>}.
 *
 * @param relayEnabled {@link #RELAY_ENABLED}
 * @param outbox       how the relay reads the outbox
 * @param producer     how it sends what it read
 * @param topics       each tenant's audit topic ({@link AuditTopics#from})
 */
public record AuditSettings(boolean relayEnabled, Outbox outbox, Producer producer, AuditTopics topics) {

    /**
     * @param batchSize       {@link #RELAY_BATCH_SIZE}
     * @param pollInterval    {@link #RELAY_POLL_INTERVAL}
     * @param standbyInterval {@link #RELAY_STANDBY_INTERVAL}
     */
    public record Outbox(int batchSize, Duration pollInterval, Duration standbyInterval) {}

    /**
     * @param sendTimeout   {@link #RELAY_SEND_TIMEOUT}
     * @param compression   {@link #RELAY_COMPRESSION}
     * @param linger        {@link #RELAY_LINGER}
     * @param maxBatchBytes {@link #RELAY_MAX_BATCH_BYTES}
     */
    public record Producer(Duration sendTimeout, String compression, Duration linger, int maxBatchBytes) {}

    public static final String RELAY_ENABLED = "audit.relay.enabled";
    public static final String RELAY_BATCH_SIZE = "audit.relay.batch.size";
    public static final String RELAY_POLL_INTERVAL = "audit.relay.poll.interval";
    public static final String RELAY_STANDBY_INTERVAL = "audit.relay.standby.interval";
    public static final String RELAY_SEND_TIMEOUT = "audit.relay.send.timeout";
    public static final String RELAY_COMPRESSION = "audit.relay.compression";
    public static final String RELAY_LINGER = "audit.relay.linger";
    public static final String RELAY_MAX_BATCH_BYTES = "audit.relay.max.batch.bytes";

    public static ConfigDef definition() {
        return new ConfigDef()
                .define(RELAY_ENABLED, BOOLEAN, "true", null,
                        "Run an audit outbox relay in this process. Only one relay per database publishes at a time "
                                + "(the relay lease, queen.timer_settings.relay_lease, which only the bridge's and the sweeper's"
                                + " database roles may take); the others stand by.")
                // 5000, not 1000: every round pays a fetch, a flush round trip to the broker and a durable delete
                // commit; PipelineBench (docs/benchmarks.md) measured the audit tail behind the log halved or better.
                .define(RELAY_BATCH_SIZE, INT, "5000", between(1, 100_000),
                        "Audit events the relay publishes per round, then deletes their outbox rows. A round holds whole rows:"
                                + " a fired segment's row (one event per timer) is never split, so one round may exceed it by a segment.")
                .define(RELAY_POLL_INTERVAL, DURATION, "200ms", durationBetween(Duration.ofMillis(10), Duration.ofMinutes(1)),
                        "Longest pause of the active relay when the outbox is empty: the outbox trigger's NOTIFY queen_timers_audit"
                                + " ends it at the commit that wrote a row, so this only bounds the wait when a notification is lost.")
                .define(RELAY_STANDBY_INTERVAL, DURATION, "2s", durationBetween(Duration.ofMillis(100), Duration.ofMinutes(10)),
                        "How often a standing-by relay tries to become the active one.")
                .include(AuditTopics.definition())
                .define(RELAY_SEND_TIMEOUT, DURATION, "10s", durationBetween(Duration.ofMillis(500), Duration.ofMinutes(5)),
                        "Longest wait for one audit send: the relay's producer gets max.block.ms and delivery.timeout.ms of this"
                                + " value (request.timeout.ms a little less), overriding kafka.*. A topic that cannot be written within it"
                                + " (missing with auto-create off, not authorized) is held on its own while the other topics flow; it also"
                                + " bounds the one pause the others see when a topic first fails. A relay starts a send only while it fits in"
                                + " its lease: the owner's queen.timer_settings.relay_lease must be at least twice this value.")
                // The broker's CPU per event follows the batches and bytes it stores and serves: PipelineBench
                // (docs/benchmarks.md#pipeline-benchmark) measured the broker at a third to a half of its uncompressed CPU per
                // timer. zstd: the events of one batch share most of their JSON, which it shrinks more than lz4 does.
                .define(RELAY_COMPRESSION, STRING, "zstd", oneOf("none", "gzip", "lz4", "zstd"),
                        "Compression of the relay's producer batches (the producer's compression.type, overriding kafka.*)."
                                + " The broker stores the batches as sent; every audit consumer decompresses them.")
                .define(RELAY_LINGER, DURATION, "5ms", durationBetween(Duration.ZERO, Duration.ofSeconds(1)),
                        "How long the relay's producer waits to fill a batch before sending it (linger.ms, overriding kafka.*)."
                                + " A round's end sends at once, so this only shapes the batches of a round in progress.")
                .define(RELAY_MAX_BATCH_BYTES, INT, String.valueOf(256 * 1024), between(16 * 1024, 16 * 1024 * 1024),
                        "Largest producer batch of the relay per partition, in bytes (batch.size, overriding kafka.*): a round of"
                                + " audit.relay.batch.size events goes out in few large batches. The producer holds up to this much"
                                + " per partition in memory while a round is sent.");
    }

    public static AuditSettings from(Config c) {
        return new AuditSettings(c.bool(RELAY_ENABLED),
                new Outbox(c.intValue(RELAY_BATCH_SIZE), c.duration(RELAY_POLL_INTERVAL), c.duration(RELAY_STANDBY_INTERVAL)),
                new Producer(c.duration(RELAY_SEND_TIMEOUT), c.string(RELAY_COMPRESSION), c.duration(RELAY_LINGER),
                        c.intValue(RELAY_MAX_BATCH_BYTES)),
                AuditTopics.from(c));
    }
}
