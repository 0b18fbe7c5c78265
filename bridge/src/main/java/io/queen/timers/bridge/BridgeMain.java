package io.queen.timers.bridge;

import com.zaxxer.hikari.HikariDataSource;
import io.micrometer.core.instrument.MeterRegistry;
import io.queen.timers.bridge.apply.BatchApplier;
import io.queen.timers.bridge.auth.TopicTimestamps;
import io.queen.timers.bridge.crypto.EncryptionPolicy;
import io.queen.timers.bridge.crypto.QueueEncryption;
import io.queen.timers.bridge.fetch.CommandSource;
import io.queen.timers.bridge.ingest.IngestLoop;
import io.queen.timers.bridge.ingest.OffsetStore;
import io.queen.timers.bridge.wire.CommandParser;
import io.queen.timers.core.config.CommonSettings;
import io.queen.timers.core.config.ConfigLoader;
import io.queen.timers.core.config.KafkaSettings;
import io.queen.timers.core.db.DataSources;
import io.queen.timers.core.db.DatabaseRole;
import io.queen.timers.core.db.SessionTimeouts;
import io.queen.timers.core.ops.SchemaStep;
import io.queen.timers.core.ops.ServiceHost;
import io.queen.timers.core.ops.ServiceKind;
import io.queen.timers.core.health.Health;
import io.queen.timers.core.health.LoopProgress;
import io.queen.timers.core.ops.Dependencies;
import io.queen.timers.core.health.ReadinessCheck;
import io.queen.timers.core.ops.KafkaVersion;
import io.queen.timers.core.ops.Startup;
import io.queen.timers.core.telemetry.Telemetry;
import io.queen.timers.relay.AuditRelay;
import io.queen.timers.routes.TopicRoutes;
import io.queen.timers.sql.BridgeGroups;
import java.util.HashMap;
import java.util.Map;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The bridge process: configuration → data source → migrations → consumer, applier, relay → start.
 * {@link #main} takes {@code --config FILE}; {@link #start(BridgeSettings, Dependencies)} runs the same
 * thing in-process (the CLI, tests, benchmarks) and {@link #close()} stops it gracefully: the batch
 * in hand is committed, the consumer leaves its group, the relay stops.
 */
public final class BridgeMain implements AutoCloseable {

    private static final Logger LOG = LoggerFactory.getLogger(BridgeMain.class);

    private final HikariDataSource dataSource;
    private final IngestLoop loop;
    private final Thread loopThread;
    private final AuditRelay relay;
    private final Health health;
    private final TopicTimestamps timestamps;

    private BridgeMain(HikariDataSource dataSource, IngestLoop loop, LoopProgress ingest, AuditRelay relay, Health health,
            TopicTimestamps timestamps) {
        this.timestamps = timestamps;
        this.dataSource = dataSource;
        this.loop = loop;
        this.relay = relay;
        this.health = health;
        this.loopThread = new Thread(ingest.guard(loop), "queen-bridge-ingest");
        this.loopThread.setUncaughtExceptionHandler((t, e) -> LOG.error("ingest loop stopped: {}", e.toString(), e));
    }

    /**
     * The bridge as a stack runs it (the local command, the test stack): its login is bound by the owner to its group and
     * its command topics' tenants, read from its own settings as {@code queen-timers migrate} reads them.
     */
    public static final ServiceKind<BridgeMain> SERVICE = new ServiceKind<>("bridge", DatabaseRole.BRIDGE, BridgeSettings::definition,
            (settings, deps) -> start(BridgeSettings.from(settings), deps), settings -> host(BridgeSettings.from(settings)),
            (settings, owner, login) -> {
                BridgeGroupSettings declared = BridgeGroupSettings.from(settings);
                BridgeGroups.bind(owner, declared.groupId(), login, declared.topicTenants());
            });

    public static void main(String[] args) {
        // the same wiring as the launcher's `bridge` subcommand: readiness (database, Kafka, schema) and
        // metrics on http.port, exit 2 on a bad setting, exit 1 when the service dies on its own
        ServiceHost.main("bridge", args, file -> BridgeSettings.from(ConfigLoader.load(BridgeSettings.definition(), file)), BridgeMain::host);
    }

    /** Runs the bridge under a {@link ServiceHost} in this JVM (the launcher's `bridge` subcommand, the local stack). */
    public static ServiceHost host(BridgeSettings settings) {
        return ServiceHost.start("bridge", settings.common(), deps -> {
            BridgeMain bridge = start(settings, deps);
            return new ServiceHost.Running(bridge::awaitTermination, bridge);
        });
    }

    /**
     * Starts the bridge in this JVM; its loops report to the {@link Health} of {@code dependencies} (one of its own,
     * {@link #health()}, with {@link Dependencies#defaults}), its spans go to their telemetry (this JVM's unless a test
     * gives its own, docs/tracing.md#tracing); the caller owns the registry. Blocks while the database is unreachable at
     * start (the migration is retried through the startup). Refuses to start ({@link
     * io.queen.timers.core.config.ConfigException}) when a jwt topic lets its producers choose record timestamps
     * ({@link TopicTimestamps}).
     */
    public static BridgeMain start(BridgeSettings settings, Dependencies dependencies) {
        Dependencies deps = dependencies.complete("bridge", settings.common(), settings.telemetry());
        LOG.info("starting bridge: {}", settings.common());
        // the mappings were read with the settings: a bad one was a start-up error before anything connects
        TopicRoutes routes = settings.routing().routes();
        settings.checkFitsHeap(Runtime.getRuntime().maxMemory());
        // a Kafka cluster older than the oldest supported is refused in one sentence, before anything reads from it
        KafkaVersion.requireAtStart(settings.common().kafka(KafkaSettings.Client.ADMIN), "bridge");
        TopicTimestamps timestamps = null;
        if (routes.checksTokens()) {
            // tokens are checked at the record's timestamp: refuse to start on a topic whose producers choose it
            timestamps = new TopicTimestamps(Admin.create(adminProps(settings)), routes.jwtSkews(),
                    String.valueOf(settings.common().kafka().shared().get(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG)));
            try {
                timestamps.requireSafe(settings.common().outages().startupTimeout());
            } catch (RuntimeException e) {
                timestamps.close();
                throw e;
            }
        }
        try {
            return start(settings, deps, routes, timestamps);
        } catch (RuntimeException e) {
            if (timestamps != null) {
                timestamps.close();
            }
            throw e;
        }
    }

    private static BridgeMain start(BridgeSettings settings, Dependencies deps, TopicRoutes routes, TopicTimestamps timestamps) {
        MeterRegistry registry = deps.registry();
        Health health = deps.health();
        Startup startup = deps.startup();
        Telemetry telemetry = deps.telemetry();
        CommonSettings common = settings.common();
        SessionTimeouts timeouts = SessionTimeouts.of("queen-bridge", settings.ingest().statements().statementTimeout(), BridgeSettings.STATEMENT_TIMEOUT,
                settings.ingest().statements().lockTimeout(), common.outages().socketTimeout());
        // least privilege: refuses a role that can write the tables directly; migrates only with db.role.check=false
        SchemaStep.atStart(common, registry, startup, "bridge", DatabaseRole.BRIDGE);
        HikariDataSource dataSource = DataSources.create(common.database(), timeouts, registry);
        try {
            String group = settings.ingest().groupId();
            CommandParser parser = new CommandParser(settings.commands().wire());
            QueueEncryption encryption = new QueueEncryption(new EncryptionPolicy(settings.apply().encryption().queues()),
                    settings.apply().encryption().cipher());
            // each a start-up step: PostgreSQL restarting in between is waited out like the migrations (the fault
            // harness found a fast stop during checkAtStart making the bridge exit "cannot read queen.queues")
            startup.retry("check the queues that require encryption", () -> {
                encryption.checkAtStart(dataSource);
                return null;
            });
            OffsetStore offsets = new OffsetStore(dataSource, group);
            // the database learns which tenant owns each topic, so an offset's audit event goes to that tenant; first of the
            // group's calls, so that a group or topic the schema owner did not bind to this login is what it says
            startup.retry("register the command topics' tenants", () -> {
                offsets.register(routes.tenants());
                return null;
            });
            startup.retry("publish this group's sealed queue patterns", () -> {
                encryption.publishPatterns(dataSource, group);
                return null;
            });
            BatchApplier applier = new BatchApplier(dataSource, group, settings.apply().limits(), encryption, telemetry);
            LoopProgress ingest = health.loop("ingest");
            Map<String, Object> consumerProps = consumerProps(settings);
            CommandSource source = new CommandSource(new KafkaConsumer<>(consumerProps), new ConsumerConfig(consumerProps),
                    settings.routing().commandTopics(), settings.commands().records(), settings.batchMaxBytes(),
                    settings.ingest().decompressionMaxBytes(), registry);
            IngestLoop loop = new IngestLoop(settings.ingestLoop(),
                    new IngestLoop.Parts(source, routes, parser, applier, offsets, timestamps), registry, ingest);
            health.add(ReadinessCheck.of("ingest-partitions", loop::stoppedPartitions));
            if (routes.checksTokens()) {
                // a broken key file refuses every token of its topic (fails closed): not ready until it is fixed
                health.add(ReadinessCheck.of("auth-keys", routes::keyProblems));
                // an operator made a jwt topic's timestamps producer-chosen: its partitions are paused until fixed
                health.add(ReadinessCheck.of("auth-timestamps", timestamps::problems));
            }
            AuditRelay relay = settings.audit().relayEnabled()
                    ? new AuditRelay(dataSource, settings.audit(), common, registry, health.loop("audit-relay")).start() : null;
            BridgeMain bridge = new BridgeMain(dataSource, loop, ingest, relay, health, timestamps);
            bridge.loopThread.start();
            return bridge;
        } catch (RuntimeException e) {
            dataSource.close();
            throw e;
        }
    }

    /** Kafka settings of the consumer: every kafka.* key, kafka.consumer.* on top, then what exactly-once and the byte bound require. */
    static Map<String, Object> consumerProps(BridgeSettings settings) {
        String group = settings.ingest().groupId();
        Map<String, Object> p = new HashMap<>(settings.common().kafka(KafkaSettings.Client.CONSUMER));
        p.put(ConsumerConfig.GROUP_ID_CONFIG, group);
        // Positions live in queen.bridge_offsets, committed with the timers; Kafka's commits would be a second truth.
        p.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false);
        p.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
        p.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
        // Never reset a position on Kafka's own: an out-of-range stored offset stops its partition until an
        // operator sets it (queen-timers offsets set); "latest" would drop unapplied commands without a verdict.
        p.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "none");
        // A command of an aborted producer transaction never happened.
        p.putIfAbsent(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
        // Kafka's fetch limits count compressed bytes, which bound nothing once a producer compresses: the records a
        // poll may hand over are what bounds its decompressed values (bridge.ingest.max.bytes). A kafka.* value may
        // only lower it. The compressed fetch buffer is held too, so its default (50 MiB) comes down to the same half.
        int fromBound = settings.maxPollRecords();
        Object asked = p.get(ConsumerConfig.MAX_POLL_RECORDS_CONFIG);
        p.put(ConsumerConfig.MAX_POLL_RECORDS_CONFIG, asked == null ? fromBound : Math.min(fromBound, Integer.parseInt(asked.toString().trim())));
        p.putIfAbsent(ConsumerConfig.FETCH_MAX_BYTES_CONFIG, (int) settings.batchMaxBytes());
        // Fair between command topics (tenants): a fetch brings at most 64 KiB per partition (at least one batch), so a
        // poll drains every partition's share in turn instead of a flooding topic's 1 MiB fetches first. PipelineBench
        // --mode flood applied the quiet tenant's schedules sooner into a flood than at Kafka's default; PRICE: some of
        // one flooding topic's ingest rate (docs/benchmarks.md). kafka.max.partition.fetch.bytes overrides it.
        p.putIfAbsent(ConsumerConfig.MAX_PARTITION_FETCH_BYTES_CONFIG, 64 * 1024);
        // A broker answers one request per connection at a time, and a partition drained while the fetch of its
        // neighbours waits for data is fetched only after that fetch returns: the broker's wait (500 ms by default) is
        // the longest a partition's new record can wait behind another's empty long poll. UnreadableRecordIT saw a
        // quiet tenant's schedule wait most of that. PRICE: an
        // idle bridge sends 10 fetches a second per broker instead of 2. kafka.fetch.max.wait.ms overrides it.
        p.putIfAbsent(ConsumerConfig.FETCH_MAX_WAIT_MS_CONFIG, 100);
        p.putIfAbsent(ConsumerConfig.CLIENT_ID_CONFIG, "queen-timers-bridge");
        return p;
    }

    /** The Admin client reading the jwt topics' settings: every kafka.* key, kafka.admin.* on top, short timeouts. */
    static Map<String, Object> adminProps(BridgeSettings settings) {
        Map<String, Object> p = new HashMap<>(settings.common().kafka(KafkaSettings.Client.ADMIN));
        p.put(AdminClientConfig.REQUEST_TIMEOUT_MS_CONFIG, 10_000);
        p.put(AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, 10_000);
        p.putIfAbsent(AdminClientConfig.CLIENT_ID_CONFIG, "queen-timers-bridge-admin");
        return p;
    }

    /** The bridge's readiness: its ingest loop and its relay ({@code /health/ready} reads it). */
    public Health health() {
        return health;
    }

    /** Blocks until the ingest loop ends (after {@link #close()}, or on a fatal error). */
    public void awaitTermination() {
        try {
            loopThread.join();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    @Override
    public void close() {
        loop.close();
        awaitTermination();
        if (relay != null) {
            relay.close();
        }
        if (timestamps != null) {
            timestamps.close();
        }
        dataSource.close();
    }
}
