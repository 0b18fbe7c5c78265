package io.queen.timers.bridge;

import com.zaxxer.hikari.HikariDataSource;
import io.micrometer.core.instrument.MeterRegistry;
import io.queen.timers.bridge.apply.BatchApplier;
import io.queen.timers.bridge.crypto.EncryptionPolicy;
import io.queen.timers.bridge.crypto.EncryptionSettings;
import io.queen.timers.bridge.crypto.QueueEncryption;
import io.queen.timers.bridge.ingest.IngestLoop;
import io.queen.timers.bridge.ingest.OffsetStore;
import io.queen.timers.bridge.wire.CommandParser;
import io.queen.timers.bridge.wire.WireLimits;
import io.queen.timers.core.audit.AuditRelay;
import io.queen.timers.core.audit.AuditSettings;
import io.queen.timers.core.config.CommonSettings;
import io.queen.timers.core.config.Config;
import io.queen.timers.core.db.DataSources;
import io.queen.timers.core.ops.ServiceHost;
import io.queen.timers.core.ops.ReadinessCheck;
import io.queen.timers.sql.Migrations;
import java.sql.SQLException;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The bridge process: configuration → data source → migrations → consumer, applier, relay → start.
 * {@link #main} takes {@code --config FILE}; {@link #start(Config, MeterRegistry)} runs the same
 * thing in-process (the CLI, tests, benchmarks) and {@link #close()} stops it gracefully: the batch
 * in hand is committed, the consumer leaves its group, the relay stops.
 */
public final class BridgeMain implements AutoCloseable {

    private static final Logger LOG = LoggerFactory.getLogger(BridgeMain.class);

    private final HikariDataSource dataSource;
    private final IngestLoop loop;
    private final Thread loopThread;
    private final AuditRelay relay;

    private BridgeMain(HikariDataSource dataSource, IngestLoop loop, AuditRelay relay) {
        this.dataSource = dataSource;
        this.loop = loop;
        this.relay = relay;
        this.loopThread = new Thread(loop, "queen-bridge-ingest");
        this.loopThread.setUncaughtExceptionHandler((t, e) -> LOG.error("ingest loop stopped: {}", e.toString(), e));
    }

    public static void main(String[] args) {
        // the same wiring as the launcher's `bridge` subcommand: readiness (database, Kafka, schema) and
        // metrics on http.port, exit 2 on a bad setting, exit 1 when the service dies on its own
        ServiceHost.main("bridge", args, BridgeSettings.definition(), (config, registry) -> {
            BridgeMain bridge = start(config, registry);
            return new ServiceHost.Running(bridge.readinessChecks(), bridge::awaitTermination, bridge);
        });
    }

    /** Starts the bridge in this JVM; the caller owns the registry (and any HTTP face). */
    public static BridgeMain start(Config config, MeterRegistry registry) {
        LOG.info("starting bridge: {}", config);
        HikariDataSource dataSource = DataSources.create(config, "queen-bridge");
        try {
            if (config.bool(CommonSettings.MIGRATE_ON_START)) {
                Migrations.migrate(dataSource);
            }
            String group = config.string(BridgeSettings.GROUP_ID);
            TopicRoutes routes = TopicRoutes.from(config);
            CommandParser parser = new CommandParser(new WireLimits(config.duration(BridgeSettings.HORIZON),
                    config.intValue(BridgeSettings.PAYLOAD_MAX_BYTES)));
            QueueEncryption encryption = new QueueEncryption(new EncryptionPolicy(config.list(EncryptionSettings.QUEUES)),
                    EncryptionSettings.cipher(config));
            encryption.checkAtStart(dataSource);
            BatchApplier applier = new BatchApplier(dataSource, group, config.duration(BridgeSettings.WAKE_WITHIN),
                    config.intValue(BridgeSettings.ZSTD_THRESHOLD), encryption);
            IngestLoop loop = new IngestLoop(new KafkaConsumer<>(consumerProps(config, group)), config.list(BridgeSettings.COMMAND_TOPICS),
                    routes, parser, applier, new OffsetStore(dataSource, group), config.duration(BridgeSettings.POLL_TIMEOUT),
                    config.duration(CommonSettings.DB_RETRY_BACKOFF_MAX), registry);
            AuditRelay relay = config.bool(AuditSettings.RELAY_ENABLED) ? new AuditRelay(dataSource, config, registry).start() : null;
            BridgeMain bridge = new BridgeMain(dataSource, loop, relay);
            bridge.loopThread.start();
            return bridge;
        } catch (SQLException e) {
            dataSource.close();
            throw new IllegalStateException("cannot read queen.queues at start: " + e.getMessage(), e);
        } catch (RuntimeException e) {
            dataSource.close();
            throw e;
        }
    }

    /** Kafka settings of the consumer: every kafka.* key, then what exactly-once requires. */
    static Map<String, Object> consumerProps(Config config, String group) {
        Map<String, Object> p = new HashMap<>(config.kafka());
        p.put(ConsumerConfig.GROUP_ID_CONFIG, group);
        // Positions live in queen.bridge_offsets, committed with the timers; Kafka's commits would be a second truth.
        p.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false);
        p.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
        p.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
        // A command of an aborted producer transaction never happened.
        p.putIfAbsent(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
        p.putIfAbsent(ConsumerConfig.MAX_POLL_RECORDS_CONFIG, 2000);
        p.putIfAbsent(ConsumerConfig.CLIENT_ID_CONFIG, "queen-timers-bridge");
        return p;
    }

    public List<ReadinessCheck> readinessChecks() {
        return List.of(new ReadinessCheck() {
            @Override
            public String name() {
                return "ingest";
            }

            @Override
            public Optional<String> problem() {
                return loop.problem();
            }
        });
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
        dataSource.close();
    }
}
