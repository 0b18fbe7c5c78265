package io.queen.timers.bridge;

import static io.queen.timers.core.config.ConfigDef.Type.DURATION;
import static io.queen.timers.core.config.ConfigDef.Type.INT;
import static io.queen.timers.core.config.ConfigDef.Type.STRING;
import static io.queen.timers.core.config.ConfigDef.between;
import static io.queen.timers.core.config.ConfigDef.durationBetween;
import static io.queen.timers.core.config.ConfigDef.nonEmpty;

import io.queen.timers.bridge.apply.BatchApplier;
import io.queen.timers.bridge.crypto.EncryptionSettings;
import io.queen.timers.bridge.ingest.IngestSettings;
import io.queen.timers.bridge.wire.RecordLimits;
import io.queen.timers.bridge.wire.WireLimits;
import io.queen.timers.core.config.CommonSettings;
import io.queen.timers.core.config.Config;
import io.queen.timers.core.config.ConfigDef;
import io.queen.timers.core.config.ConfigException;
import io.queen.timers.core.telemetry.TelemetrySettings;
import io.queen.timers.log.codec.Frame;
import io.queen.timers.relay.AuditSettings;
import io.queen.timers.routes.RouteSettings;
import java.time.Duration;
import java.util.List;

/**
 * Everything the bridge reads (docs/commands.md lists them with their environment names), typed by
 * {@link #from(Config)} as the sweeper's {@code SweeperSettings} is. The command topics and their routes are
 * {@link RouteSettings}' keys (with the undeclared {@code topic.<name>.*} keys), read the same by the HTTP API; the
 * Kafka clients read {@code kafka.*} for the consumer and the relay's producer.
 */
public record BridgeSettings(
        /* command.topics and each topic's tenant, producer sub and token rules, as the HTTP API reads them too */ RouteSettings routing,
        Ingest ingest,
        Commands commands,
        Apply apply,
        CommonSettings common,
        AuditSettings audit,
        TelemetrySettings telemetry) {

    /**
     * How the bridge consumes: its group, its polls and batches and what they may hold, where a new group starts, and how
     * long its statements may run.
     *
     * @param groupId               {@link #GROUP_ID}
     * @param pollTimeout           {@link #POLL_TIMEOUT}
     * @param maxBytes              {@link #INGEST_MAX_BYTES}
     * @param decompressionMaxBytes {@link #DECOMPRESSION_MAX_BYTES}
     * @param batchMaxRecords       {@link #BATCH_MAX_RECORDS}
     * @param startPosition         {@link #START_POSITION}: earliest, latest, or null when not set (a new group's partition
     *                              that holds records waits)
     * @param statements            {@link #LOCK_TIMEOUT} and {@link #STATEMENT_TIMEOUT}
     */
    public record Ingest(String groupId, Duration pollTimeout, int maxBytes, int decompressionMaxBytes, int batchMaxRecords,
                         String startPosition, Statements statements) {}

    /**
     * How long one of the bridge's statements (the lock, the write, the relay's) may wait for a lock and may run.
     *
     * @param lockTimeout      {@link #LOCK_TIMEOUT}
     * @param statementTimeout {@link #STATEMENT_TIMEOUT}
     */
    public record Statements(Duration lockTimeout, Duration statementTimeout) {}

    /**
     * What one command record may hold and ask for.
     *
     * @param horizon               {@link #HORIZON}
     * @param payloadMaxBytes       {@link #PAYLOAD_MAX_BYTES}
     * @param recurringMinPeriod    {@link #RECURRING_MIN_PERIOD}
     * @param recordHeadersMaxCount {@link #RECORD_HEADERS_MAX_COUNT}
     * @param recordHeadersMaxBytes {@link #RECORD_HEADERS_MAX_BYTES}
     */
    public record Commands(Duration horizon, int payloadMaxBytes, Duration recurringMinPeriod, int recordHeadersMaxCount,
                           int recordHeadersMaxBytes) {

        /** The wire's limits as the parser applies them. */
        public WireLimits wire() {
            return new WireLimits(horizon, payloadMaxBytes, recurringMinPeriod);
        }

        /**
         * What one command record may hold, counted on its wire form before it becomes objects: the longest valid value, a
         * key, and bridge.record.headers.max.count / bridge.record.headers.max.bytes of headers ({@link RecordLimits}).
         */
        public RecordLimits records() {
            return RecordLimits.of(wire(), recordHeadersMaxCount, recordHeadersMaxBytes);
        }
    }

    /**
     * How the apply stores what it writes and what a tenant may hold.
     *
     * @param wakeWithin         {@link #WAKE_WITHIN}
     * @param zstdThreshold      {@link #ZSTD_THRESHOLD}
     * @param tenantMaxPending   {@link #TENANT_MAX_PENDING}
     * @param tenantMaxRecurring {@link #TENANT_MAX_RECURRING}
     * @param encryption         which queues' payloads are sealed, and with which key ({@link EncryptionSettings})
     */
    public record Apply(Duration wakeWithin, int zstdThreshold, int tenantMaxPending, int tenantMaxRecurring,
                        EncryptionSettings encryption) {

        /** What {@link BatchApplier} is given. */
        public BatchApplier.Limits limits() {
            return new BatchApplier.Limits(wakeWithin, zstdThreshold, tenantMaxPending, tenantMaxRecurring);
        }
    }

    public static final String GROUP_ID = "bridge.group.id";
    public static final String HORIZON = "bridge.horizon";
    public static final String PAYLOAD_MAX_BYTES = "bridge.payload.max.bytes";
    public static final String ZSTD_THRESHOLD = "bridge.payload.zstd.threshold";
    public static final String WAKE_WITHIN = "bridge.wake.within";
    public static final String POLL_TIMEOUT = "bridge.poll.timeout";
    public static final String LOCK_TIMEOUT = "bridge.lock.timeout";
    public static final String STATEMENT_TIMEOUT = "bridge.statement.timeout";
    public static final String INGEST_MAX_BYTES = "bridge.ingest.max.bytes";
    public static final String DECOMPRESSION_MAX_BYTES = "bridge.decompression.max.bytes";
    /**
     * The least {@link #DECOMPRESSION_MAX_BYTES} may be: 9 MiB, the largest stream one batch may open (a zstd window of 8 MiB
     * with zstd's buffers, io.queen.timers.bridge.fetch.Decompression), so every batch within the limits can be read.
     */
    public static final int DECOMPRESSION_MIN_BYTES = 9 << 20;
    public static final String RECORD_HEADERS_MAX_COUNT = RecordLimits.HEADERS_MAX_COUNT;
    public static final String RECORD_HEADERS_MAX_BYTES = RecordLimits.HEADERS_MAX_BYTES;
    public static final String BATCH_MAX_RECORDS = "bridge.batch.max.records";
    public static final String START_POSITION = "bridge.start.position";
    public static final String TENANT_MAX_PENDING = "tenant.max.pending";
    /**
     * The default of {@link #TENANT_MAX_PENDING}: 1,000,000 pending timers, 10x the largest backlog the project measures
     * (ScaleBench's million is all tenants together; LatenessBench's burst 100,000), so no honest producer meets it, while a
     * flood stops there instead of at the disk: at ~200-byte payloads about 0.5 GiB of rows and indexes per tenant.
     */
    public static final int DEFAULT_TENANT_MAX_PENDING = 1_000_000;
    public static final String RECURRING_MIN_PERIOD = "recurring.min.period";
    public static final String TENANT_MAX_RECURRING = "tenant.max.recurring";
    /**
     * The default of {@link #TENANT_MAX_RECURRING}. With {@link #RECURRING_MIN_PERIOD}'s 10 s, one tenant's series together
     * fire at most 1,000 / 10 s = 100 occurrences a second, a small share of what the pipeline fires end to end
     * (docs/benchmarks.md), for ever: a series has no end unless its producer gives one. Counting them at apply reads at
     * most this many entries of idx_log_timers_recurring.
     */
    public static final int DEFAULT_TENANT_MAX_RECURRING = 1_000;
    /**
     * What the bridge really holds per byte of {@link #INGEST_MAX_BYTES}: the polled values, the parsed batch, and
     * while it is applied its rows written as JSON text and the driver's copy of it (docs/guarantees.md#bounded-by-real-bytes).
     */
    public static final int HELD_PER_INGEST_BYTE = 4;

    public static ConfigDef definition() {
        return new ConfigDef()
                .include(CommonSettings.definition())
                .include(AuditSettings.definition())
                .include(EncryptionSettings.definition())
                .include(RouteSettings.definition())
                .define(GROUP_ID, STRING, "queen-timers-bridge", nonEmpty(),
                        "Kafka consumer group of the bridge instances; also the key of their offsets in queen.bridge_offsets.")
                .define(HORIZON, DURATION, "90d", durationBetween(Duration.ofSeconds(1), Duration.ofDays(3650)),
                        "Latest delivery time a command may ask for, counted from the record's timestamp; later is rejected (horizon).")
                .define(PAYLOAD_MAX_BYTES, INT, Integer.toString(1 << 20), between(0, Frame.MAX_PAYLOAD_BYTES),
                        "Largest compact payload in bytes; larger is rejected (payload_too_large).")
                .define(ZSTD_THRESHOLD, INT, "4096", between(0, Integer.MAX_VALUE),
                        "Payloads longer than this many bytes are stored zstd-compressed (payload_zstd = true).")
                .define(WAKE_WITHIN, DURATION, "30s", durationBetween(Duration.ZERO, Duration.ofHours(1)),
                        "NOTIFY queen_timers_wake at commit when a batch wrote a timer due within this much time. "
                                + "30s = the sweeper's longest idle sleep, so no timer waits for a sleeping sweeper past its due time.")
                .define(POLL_TIMEOUT, DURATION, "200ms", durationBetween(Duration.ofMillis(1), Duration.ofSeconds(30)),
                        "Longest wait of one consumer poll; also how soon a stop request is seen.")
                .define(LOCK_TIMEOUT, DURATION, "45s", durationBetween(Duration.ofMillis(100), Duration.ofMinutes(30)),
                        "Longest wait of a batch for a timer row another session holds (lock_timeout of the bridge's connections)."
                                + " A fire holds its timer rows for at most sweeper.statement.timeout (30s), so the default outlasts any"
                                + " live fire; a session that holds a row longer fails the batch (transient), which is retried from the"
                                + " stored offsets, nothing skipped, and /health/ready says so.")
                .define(INGEST_MAX_BYTES, INT, String.valueOf(16 << 20), between(1 << 20, Integer.MAX_VALUE),
                        "Most bytes of command records (decompressed: keys, values and headers with the objects that hold them,"
                                + " counted from each record's lengths before it is read) the bridge holds at once:"
                                + " half for one poll (kafka max.poll.records is derived from it and the longest valid value), half for"
                                + " the batch gathered from successive polls before one apply. The bridge needs about 4x this of heap"
                                + " besides bridge.decompression.max.bytes and refuses to start with less than twice that.")
                .define(DECOMPRESSION_MAX_BYTES, INT, String.valueOf(32 << 20), between(DECOMPRESSION_MIN_BYTES, Integer.MAX_VALUE),
                        "Most bytes the decompression streams of the compressed batches the bridge is reading hold together, each"
                                + " counted for what its codec's header declares before it opens (an lz4 block, up to 4 MiB; a snappy"
                                + " chunk or a zstd window, up to 8 MiB: a batch declaring more is rejected whole, unreadable_record;"
                                + " gzip 64 KiB), heap and native. A command topic has at most one open at a time; a batch whose stream"
                                + " does not fit waits until another's batch is read. 32 MiB: three of the largest streams, eleven of"
                                + " Kafka's default zstd (a 2 MiB window). Counted in the heap the bridge needs besides 4x"
                                + " bridge.ingest.max.bytes.")
                .define(RECORD_HEADERS_MAX_COUNT, INT, "64", between(0, 4096),
                        "Most headers one command record may carry. A record with more is rejected (unreadable_record) before any"
                                + " of its headers becomes an object, and the records after it in its batch are read as usual. 64: a"
                                + " command uses at most 14 queen-* headers, queen-auth, traceparent and tracestate; the rest is room"
                                + " for a producer's own. Each header costs the bridge up to 128 bytes of heap besides its bytes.")
                .define(RECORD_HEADERS_MAX_BYTES, INT, "32768", between(0, 1 << 20),
                        "Most bytes of header names and values one command record may carry, all its headers together. A record"
                                + " with more is rejected (unreadable_record) before any of its headers becomes an object, and the"
                                + " records after it in its batch are read as usual. 32768: the headers form at its longest is about"
                                + " 8 KiB, a token (queen-auth) rarely more than a few, trace context under 1 KiB.")
                .define(BATCH_MAX_RECORDS, INT, "2000", between(1, 100_000),
                        "Most records one apply transaction takes (gathered from successive polls while more are buffered).")
                .define(START_POSITION, STRING, "", (key, value) -> {
                            if (!List.of("", "earliest", "latest").contains(value)) {
                                throw new ConfigException("setting " + key + " = '" + value + "' is not earliest or latest");
                            }
                        },
                        "Where a group with no stored offset starts in a partition that holds records: earliest (every retained"
                                + " record is applied) or latest (the log end: those records get no verdict, an offset_moved audit event says so);"
                                + " the choice is stored. No default: without it such a partition stays paused and /health/ready says"
                                + " so, rather than a new or mistyped " + GROUP_ID + " replaying the topic from its start. An empty"
                                + " partition starts at its beginning either way.")
                .define(TENANT_MAX_PENDING, INT, Integer.toString(DEFAULT_TENANT_MAX_PENDING), between(1, Integer.MAX_VALUE),
                        "Most pending timers one tenant may hold: a schedule of a key not staged yet for a tenant that holds this many"
                                + " is rejected (tenant_quota); a reschedule or cancel of a staged key always passes. Counted up to this number"
                                + " (queen.timer_tenant_pending_v1) for a tenant scheduling new keys: at every batch that could bring it to 90 %"
                                + " of this, else at most once a second (between counts: the last count plus what this bridge admitted since).")
                .define(RECURRING_MIN_PERIOD, DURATION, "10s", durationBetween(Duration.ofSeconds(1), Duration.ofHours(1)),
                        "Shortest time between two occurrences of a recurring timer: an every below it, or a cron with two"
                                + " occurrences closer than it (its seconds and minutes fields read as if every hour matched), is rejected"
                                + " (period_too_short). 10s: a series is a schedule, not a stream; with tenant.max.recurring it bounds what one"
                                + " tenant's series fire (1,000 / 10 s = 100 a second at the defaults). Series already staged keep their rule.")
                .define(TENANT_MAX_RECURRING, INT, Integer.toString(DEFAULT_TENANT_MAX_RECURRING), between(1, Integer.MAX_VALUE),
                        "Most recurring series one tenant may hold: a schedule or reschedule that would make a key a series (it holds"
                                + " no rule yet) for a tenant that holds this many is rejected (recurring_quota); one of an existing series"
                                + " passes. Counted at each batch that carries such a command for the tenant, up to this number"
                                + " (queen.timer_tenant_series_v1). A series also counts as one pending timer against tenant.max.pending.")
                .define(STATEMENT_TIMEOUT, DURATION, "60s", durationBetween(Duration.ofSeconds(1), Duration.ofMinutes(30)),
                        "Longest statement of the bridge (statement_timeout): the lock, the write and the relay's reads and deletes."
                                + " Above bridge.lock.timeout so a lock wait is reported as one; below db.socket.timeout.");
    }

    public static BridgeSettings from(Config c) {
        return new BridgeSettings(RouteSettings.from(c),
                new Ingest(c.string(GROUP_ID), c.duration(POLL_TIMEOUT), c.intValue(INGEST_MAX_BYTES), c.intValue(DECOMPRESSION_MAX_BYTES),
                        c.intValue(BATCH_MAX_RECORDS), c.string(START_POSITION).isEmpty() ? null : c.string(START_POSITION),
                        new Statements(c.duration(LOCK_TIMEOUT), c.duration(STATEMENT_TIMEOUT))),
                new Commands(c.duration(HORIZON), c.intValue(PAYLOAD_MAX_BYTES), c.duration(RECURRING_MIN_PERIOD),
                        c.intValue(RECORD_HEADERS_MAX_COUNT), c.intValue(RECORD_HEADERS_MAX_BYTES)),
                new Apply(c.duration(WAKE_WITHIN), c.intValue(ZSTD_THRESHOLD), c.intValue(TENANT_MAX_PENDING), c.intValue(TENANT_MAX_RECURRING),
                        EncryptionSettings.from(c)),
                CommonSettings.from(c), AuditSettings.from(c), TelemetrySettings.fromEnvironment("bridge"));
    }

    /**
     * Records per consumer poll: as many of the longest valid value as half of {@link #INGEST_MAX_BYTES} holds (at
     * least 1, at most {@link #BATCH_MAX_RECORDS}). Kafka's fetch limits count compressed bytes, so this count is
     * what bounds the decompressed values one poll hands over.
     */
    public int maxPollRecords() {
        long perPoll = (ingest.maxBytes() / 2L) / commands.wire().maxValueBytes();
        return (int) Math.max(1, Math.min(ingest.batchMaxRecords(), perPoll));
    }

    /**
     * What the ingest loop is told. Its longest pause between retries is the common settings'
     * ({@link CommonSettings#retryPauseMax}: db.retry.backoff.max, at most health.failing.after), not a bridge key.
     */
    public IngestSettings ingestLoop() {
        return new IngestSettings(routing.commandTopics(), ingest.pollTimeout(), batchMaxBytes(), ingest.batchMaxRecords(),
                common.retryPauseMax(), ingest.startPosition());
    }

    /** Value bytes a batch gathers from successive polls before it is applied: the other half of {@link #INGEST_MAX_BYTES}. */
    public long batchMaxBytes() {
        return ingest.maxBytes() / 2L;
    }

    /**
     * Refuses to start when what the bounds let the bridge hold cannot fit in half the heap: 4 x the ingest bound and the
     * decompression budget (counted whole, though a zstd window is native). Enforced, not advised.
     */
    public void checkFitsHeap(long maxHeapBytes) {
        int ingestMaxBytes = ingest.maxBytes();
        int decompressionMaxBytes = ingest.decompressionMaxBytes();
        long need = (long) HELD_PER_INGEST_BYTE * ingestMaxBytes + decompressionMaxBytes;
        if (need > maxHeapBytes / 2) {
            throw new ConfigException("settings " + INGEST_MAX_BYTES + " = " + ingestMaxBytes + " and " + DECOMPRESSION_MAX_BYTES
                    + " = " + decompressionMaxBytes + " need about " + (need >> 20) + " MiB of heap (" + HELD_PER_INGEST_BYTE
                    + " x the first, plus the second), more than half of this JVM's " + (maxHeapBytes >> 20)
                    + " MiB: lower them or raise -Xmx");
        }
        if (ingestMaxBytes / 2L < commands.wire().maxValueBytes()) {
            throw new ConfigException("setting " + INGEST_MAX_BYTES + " = " + ingestMaxBytes + " must be at least twice the longest valid"
                    + " command value (" + commands.wire().maxValueBytes() + " bytes: " + PAYLOAD_MAX_BYTES + " + envelope), so one poll holds one");
        }
    }
}
