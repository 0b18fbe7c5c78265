package io.queen.timers.e2e;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assumptions.assumeThat;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.queen.timers.core.ops.Dependencies;
import io.queen.timers.bridge.BridgeMain;
import io.queen.timers.bridge.BridgeSettings;
import io.queen.timers.client.audit.AuditEvent;
import io.queen.timers.client.audit.AuditEvents;
import io.queen.timers.client.audit.EventType;
import io.queen.timers.client.command.TimerCommand;
import io.queen.timers.client.verdict.CommandSender;
import io.queen.timers.core.config.CommonSettings;
import io.queen.timers.core.config.ConfigException;
import io.queen.timers.core.db.DatabaseRole;
import io.queen.timers.core.ops.KafkaReadiness;
import io.queen.timers.embedded.EmbeddedKafkaBroker;
import io.queen.timers.embedded.EmbeddedPostgresServer;
import io.queen.timers.relay.AuditSettings;
import io.queen.timers.sql.BridgeGroups;
import io.queen.timers.sql.Migrations;
import io.queen.timers.sql.PostgresVersion;
import io.queen.timers.sweeper.LogContents;
import io.queen.timers.sweeper.SweeperMain;
import io.queen.timers.sweeper.SweeperSettings;
import io.queen.timers.testkit.TestKafka;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.function.Predicate;
import java.util.stream.Stream;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Issue 41, point 2: the compatibility matrix that CI proves (docs/operations.md#compatibility). Against each supported
 * PostgreSQL major (14, 15, 16 from the binaries jars the e2e build copies to target/pg-binaries/&lt;major&gt;; 17 from
 * the classpath), one stack: every migration (V and R__) and the least-privilege grants applied by the owner, then a
 * bridge and a sweeper in-process as least-privilege logins (their start checks on), and through the client's
 * {@link CommandSender}: one timer scheduled, fired and audited; one cancelled; one recurring series of two
 * occurrences. PRICE: one PostgreSQL start per major (2–5 s each, the first unpacking its archive) and a few seconds
 * of timers; the depth is the rest of the suite's, on 17.
 */
class CompatibilityMatrixIT {

    static final String PASSWORD = "matrix-pw";
    static final Path BINARIES = Path.of("target", "pg-binaries");

    /** The Kafka 3 broker's classpath, copied by module compat-kafka3. */
    static final Path KAFKA_3 = Path.of("..", "compat-kafka3", "target", "kafka-3");

    /**
     * Each PostgreSQL major with the build's Kafka (4.4, the testkit's in-process broker); and the oldest corner, PostgreSQL
     * 14 with a Kafka 3.9 broker in a JVM of its own (the clients stay 4.4's, as a deployment's would).
     */
    static Stream<Arguments> stacks() {
        return Stream.of(Arguments.of(14, 4), Arguments.of(15, 4), Arguments.of(16, 4), Arguments.of(17, 4), Arguments.of(14, 3));
    }

    @ParameterizedTest(name = "PostgreSQL {0}, Kafka {1}")
    @MethodSource("stacks")
    void scheduleFireCancelAndARecurringSeries(int major, int kafkaMajor) throws Exception {
        long t0 = System.nanoTime();
        if (kafkaMajor == 3) {
            assertThat(KAFKA_3).as("the Kafka 3 broker's classpath, copied by module compat-kafka3 (build e2e with -am)").isDirectory();
        }
        try (SeparateKafkaBroker kafka3 = kafkaMajor == 3 ? SeparateKafkaBroker.start(KAFKA_3) : null) {
            String bootstrap = kafka3 == null ? TestKafka.bootstrapServers() : kafka3.bootstrapServers();
            assertThat(brokerVersion(bootstrap)).startsWith(kafkaMajor == 3 ? "3.9-" : "4.");
            onStack(major, bootstrap);
        } finally {
            System.out.printf("[matrix] PostgreSQL %d, Kafka %d: %d ms%n", major, kafkaMajor, (System.nanoTime() - t0) / 1_000_000);
        }
    }

    private static void onStack(int major, String bootstrap) throws Exception {
        try (EmbeddedPostgresServer pg = start(major); HikariDataSource owner = pool(pg.jdbcUrl("postgres"), EmbeddedPostgresServer.USER, "")) {
            assertThat(serverMajor(owner)).isEqualTo(major);
            Migrations.migrate(owner);
            assertThat(Migrations.pendingCount(owner)).isZero();
            String suffix = Long.toHexString(System.nanoTime());
            String bridgeLogin = "mx_bridge_" + suffix;
            String sweeperLogin = "mx_sweeper_" + suffix;
            execute(owner, "CREATE ROLE " + bridgeLogin + " LOGIN PASSWORD '" + PASSWORD + "' IN ROLE " + DatabaseRole.BRIDGE);
            execute(owner, "CREATE ROLE " + sweeperLogin + " LOGIN PASSWORD '" + PASSWORD + "' IN ROLE " + DatabaseRole.SWEEPER);

            String commands = "mx-cmd-" + major + "-" + suffix;
            String audit = "mx-audit-" + major + "-" + suffix;
            createTopics(bootstrap, commands, audit);
            Instant start;
            Map<String, String> bridgeSettings = bridgeSettings(pg, bootstrap, commands, audit, bridgeLogin);
            // the owner binds the bridge's group to its login, as `migrate` does with the bridge's declaration (V135)
            BridgeGroups.bind(owner, bridgeSettings.get("bridge.group.id"), bridgeLogin,
                    Map.of(commands, UUID.fromString(CommonSettings.DEFAULT_TENANT)));
            try (BridgeMain bridge = BridgeMain.start(BridgeSettings.from(BridgeSettings.definition().parse(bridgeSettings)), Dependencies.defaults(new SimpleMeterRegistry()));
                    SweeperMain sweeper = SweeperMain.start(SweeperSettings.from(SweeperSettings.definition().parse(sweeperSettings(pg, sweeperLogin))), Dependencies.defaults(new SimpleMeterRegistry()));
                    CommandSender sender = new CommandSender(Map.of("bootstrap.servers", bootstrap), audit)) {
                // scheduled, fired, audited
                expect(sender, TimerCommand.schedule("mx.q", "once").delay(Duration.ZERO).txn("mx-once").payload("{\"n\":1}")
                        .envelope(commands), EventType.SCHEDULED);
                // cancelled before it is due
                expect(sender, TimerCommand.schedule("mx.q", "later").delay(Duration.ofHours(1)).txn("mx-later").payload("{\"n\":2}")
                        .envelope(commands), EventType.SCHEDULED);
                expect(sender, TimerCommand.cancel("mx.q", "later").envelope(commands), EventType.CANCELLED);
                // a recurring series: two occurrences a second apart
                start = Instant.now().plusSeconds(1).truncatedTo(ChronoUnit.SECONDS).plusSeconds(1);
                expect(sender, TimerCommand.schedule("mx.q", "series").every(Duration.ofSeconds(1)).startAt(start).maxOccurrences(2)
                        .txn("mx-series").payload("{\"n\":3}").envelope(commands), EventType.SCHEDULED);

                List<AuditEvent> fired = awaitEvents(bootstrap, audit, e -> e.type() == EventType.FIRED, 3, Duration.ofSeconds(30));
                assertThat(fired).map(e -> ((AuditEvent.Fired) e).txn())
                        .containsExactlyInAnyOrder("mx-once", "mx-series@" + start, "mx-series@" + start.plusSeconds(1));
            }
            // each fire exactly once in the log; nothing left staged (the cancelled timer is gone, the series ended)
            assertThat(LogContents.txnCounts(owner)).containsOnlyKeys("mx-once", "mx-series@" + start, "mx-series@" + start.plusSeconds(1))
                    .allSatisfy((txn, n) -> assertThat(n).isEqualTo(1));
            assertThat(count(owner, "SELECT count(*) FROM queen.log_timers")).isZero();
        }
    }

    /**
     * Below the oldest supported major (PostgresVersion): the owner's migrate and a service's start both refuse
     * PostgreSQL 13 in one sentence naming the supported versions, before any migration or role check runs on it.
     */
    @Test
    void postgres13IsRefusedByTheMigrateAndByAServicesStart() throws Exception {
        try (EmbeddedPostgresServer pg = EmbeddedPostgresServer.startFromBinaries(binariesJar(13));
                HikariDataSource owner = pool(pg.jdbcUrl("postgres"), EmbeddedPostgresServer.USER, "")) {
            assertThat(serverMajor(owner)).isEqualTo(13);
            assertThatThrownBy(() -> Migrations.migrate(owner)).isInstanceOf(PostgresVersion.Unsupported.class)
                    .hasMessageContaining("PostgreSQL 13.").hasMessageContaining("needs PostgreSQL 14 or newer");
            assertThat(count(owner, "SELECT count(*) FROM pg_namespace WHERE nspname IN ('queen', 'queen_timers')"))
                    .as("nothing migrated").isZero();
            Map<String, String> settings = sweeperSettings(pg, EmbeddedPostgresServer.USER);
            settings.put(CommonSettings.JDBC_PASSWORD, "");
            assertThatThrownBy(() -> SweeperMain.start(SweeperSettings.from(SweeperSettings.definition().parse(settings)), Dependencies.defaults(new SimpleMeterRegistry())))
                    .isInstanceOf(ConfigException.class).hasMessageContaining("sweeper refuses to start: PostgreSQL 13.");
        }
    }

    /**
     * Below the oldest supported Kafka (KafkaVersion): a KRaft cluster at metadata.version 3.8 (this build's broker,
     * formatted at 3.8-IV0: it reports itself as 3.8 until upgraded) is refused by a bridge's, an HTTP API's and a sweeper's start in one
     * sentence naming both versions, before either touches PostgreSQL (the JDBC URL below names no server); and the
     * readiness probe, which checks at its first answer when the start had none, stays not ready with the same sentence.
     * The rows above show the supported ones passing the same check: Kafka 4.4 and the 3.9 broker.
     */
    @Test
    void aKafkaClusterAtMetadataVersion3_8IsRefusedByAServicesStart() throws Exception {
        try (EmbeddedKafkaBroker old = EmbeddedKafkaBroker.startTemporaryAtRelease("3.8-IV0")) {
            String bootstrap = old.bootstrapServers();
            assertThat(brokerVersion(bootstrap)).isEqualTo("3.8-IV0");
            Map<String, String> bridge = new HashMap<>();
            bridge.put(CommonSettings.JDBC_URL, "jdbc:postgresql://127.0.0.1:1/none");
            bridge.put(CommonSettings.JDBC_USER, "none");
            bridge.put(CommonSettings.JDBC_PASSWORD, "none");
            bridge.put(CommonSettings.KAFKA_BOOTSTRAP, bootstrap);
            bridge.put("command.topics", "mx-old-commands");
            bridge.put(CommonSettings.AUDIT_TOPIC, "mx-old-audit");
            bridge.put(CommonSettings.HTTP_PORT, "0");
            // without the check a service would wait for that database for ever: give up soon, so the test fails, not hangs
            bridge.put(CommonSettings.STARTUP_TIMEOUT, "3s");
            String sentence = "the Kafka cluster at " + bootstrap + " runs metadata.version 3.8 (feature level 20): queen-timers"
                    + " needs a KRaft cluster at metadata.version 3.9-IV0 (feature level 21, Kafka 3.9) or newer";
            assertThatThrownBy(() -> BridgeMain.start(BridgeSettings.from(BridgeSettings.definition().parse(bridge)),
                    Dependencies.defaults(new SimpleMeterRegistry())))
                    .isInstanceOf(ConfigException.class).hasMessageStartingWith("bridge refuses to start: " + sentence);
            assertThatThrownBy(() -> io.queen.timers.http.HttpMain.start(
                    io.queen.timers.http.HttpSettings.from(io.queen.timers.http.HttpSettings.definition().parse(bridge))))
                    .isInstanceOf(ConfigException.class).hasMessageStartingWith("http refuses to start: " + sentence);
            Map<String, String> sweeper = new HashMap<>(bridge);
            sweeper.remove("command.topics");
            sweeper.put(AuditSettings.RELAY_ENABLED, "true");
            assertThatThrownBy(() -> SweeperMain.start(SweeperSettings.from(SweeperSettings.definition().parse(sweeper)),
                    Dependencies.defaults(new SimpleMeterRegistry())))
                    .isInstanceOf(ConfigException.class).hasMessageStartingWith("sweeper refuses to start: " + sentence);
            try (KafkaReadiness readiness = new KafkaReadiness(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap),
                    Duration.ofSeconds(5))) {
                assertThat(readiness.problem()).hasValueSatisfying(p -> assertThat(p).startsWith(sentence));
            }
        }
    }

    static void expect(CommandSender sender, org.apache.kafka.clients.producer.ProducerRecord<byte[], byte[]> command, EventType type) {
        AuditEvent.Verdict v = sender.sendAndAwait(command, Duration.ofSeconds(30));
        assertThat(v.type()).as("%s", v).isEqualTo(type);
    }

    /** 17 from the classpath (the version every other test runs); an older major from its copied binaries jar. */
    static EmbeddedPostgresServer start(int major) throws Exception {
        if (major == 17) {
            return EmbeddedPostgresServer.start(null, 0, EmbeddedPostgresServer.Durability.RELAXED);
        }
        return EmbeddedPostgresServer.startFromBinaries(binariesJar(major));
    }

    static Path binariesJar(int major) throws Exception {
        assumeThat(System.getProperty("os.name") + "/" + System.getProperty("os.arch")).as("the matrix's binaries are Linux x86_64's")
                .isEqualTo("Linux/amd64");
        Path dir = BINARIES.resolve(String.valueOf(major));
        assertThat(dir).as("copied by the e2e build (maven-dependency-plugin, execution pg-binaries)").isDirectory();
        try (Stream<Path> jars = Files.list(dir)) {
            return jars.filter(p -> p.getFileName().toString().endsWith(".jar")).findFirst().orElseThrow();
        }
    }

    static HikariDataSource pool(String url, String user, String password) {
        HikariConfig c = new HikariConfig();
        c.setJdbcUrl(url);
        c.setUsername(user);
        c.setPassword(password);
        c.setMaximumPoolSize(4);
        c.setMinimumIdle(0);
        return new HikariDataSource(c);
    }

    static int serverMajor(HikariDataSource ds) throws SQLException {
        return (int) (count(ds, "SELECT current_setting('server_version_num')::int") / 10_000);
    }

    /** The broker's finalized metadata.version ("3.9-IV0", "4.4-IV2"): which broker line answered. */
    static String brokerVersion(String bootstrap) throws Exception {
        try (Admin admin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap))) {
            var finalized = admin.describeFeatures().featureMetadata().get().finalizedFeatures().get("metadata.version");
            return org.apache.kafka.server.common.MetadataVersion.fromFeatureLevel(finalized.maxVersionLevel()).version();
        }
    }

    static void createTopics(String bootstrap, String... names) throws Exception {
        try (Admin admin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap))) {
            List<NewTopic> topics = new ArrayList<>();
            for (String n : names) {
                topics.add(new NewTopic(n, 1, (short) 1));
            }
            admin.createTopics(topics).all().get();
        }
    }

    /** Events of partition 0 of {@code topic} that {@code which} selects, until there are {@code n} distinct ones. */
    static List<AuditEvent> awaitEvents(String bootstrap, String topic, Predicate<AuditEvent> which, int n, Duration timeout) {
        Map<String, Object> props = new HashMap<>();
        props.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        props.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
        props.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
        props.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
        List<AuditEvent> out = new ArrayList<>();
        Set<UUID> seen = new java.util.HashSet<>();
        long deadline = System.nanoTime() + timeout.toNanos();
        try (KafkaConsumer<byte[], byte[]> c = new KafkaConsumer<>(props)) {
            TopicPartition tp = new TopicPartition(topic, 0);
            c.assign(List.of(tp));
            c.seekToBeginning(List.of(tp));
            while (out.size() < n) {
                if (System.nanoTime() > deadline) {
                    throw new AssertionError("only " + out.size() + " of " + n + " events on " + topic + " within " + timeout + ": " + out);
                }
                for (ConsumerRecord<byte[], byte[]> r : c.poll(Duration.ofMillis(200))) {
                    AuditEvent e = AuditEvents.parse(r.value());
                    if (which.test(e) && seen.add(e.meta().eventId())) {
                        out.add(e);
                    }
                }
            }
        }
        return out;
    }

    static Map<String, String> bridgeSettings(EmbeddedPostgresServer pg, String bootstrap, String topic, String audit, String login) {
        Map<String, String> s = new HashMap<>();
        s.put(CommonSettings.JDBC_URL, pg.jdbcUrl("postgres"));
        s.put(CommonSettings.JDBC_USER, login);
        s.put(CommonSettings.JDBC_PASSWORD, PASSWORD);
        s.put(CommonSettings.JDBC_POOL_SIZE, "4");
        s.put(CommonSettings.KAFKA_BOOTSTRAP, bootstrap);
        s.put("command.topics", topic);
        s.put(CommonSettings.AUDIT_TOPIC, audit);
        s.put(AuditSettings.RELAY_POLL_INTERVAL, "50ms");
        s.put("bridge.group.id", "mx-" + UUID.randomUUID());
        s.put("recurring.min.period", "1s");   // the series ticks each second, to be seen in seconds
        s.put("bridge.start.position", "earliest");   // a new group: apply the topic from its start, whenever its partition comes
        s.put(CommonSettings.HTTP_PORT, "0");
        s.put(CommonSettings.DB_RETRY_BACKOFF_MAX, "1s");
        return s; // db.role.check at its default (true): the least-privilege start check runs on this major too
    }

    static Map<String, String> sweeperSettings(EmbeddedPostgresServer pg, String login) {
        Map<String, String> s = new HashMap<>();
        s.put(CommonSettings.JDBC_URL, pg.jdbcUrl("postgres"));
        s.put(CommonSettings.JDBC_USER, login);
        s.put(CommonSettings.JDBC_PASSWORD, PASSWORD);
        s.put(CommonSettings.JDBC_POOL_SIZE, "4");
        s.put(CommonSettings.KAFKA_BOOTSTRAP, "127.0.0.1:1");   // not contacted: the bridge's relay publishes
        s.put(CommonSettings.HTTP_PORT, "0");
        s.put(AuditSettings.RELAY_ENABLED, "false");
        s.put(SweeperSettings.CLEANUP_ENABLED, "true");          // the cleanup's functions run on this major too
        s.put(SweeperSettings.CLEANUP_INTERVAL, "1s");
        s.put(SweeperSettings.BACKOFF_BASE, "50ms");
        s.put(SweeperSettings.TRANSIENT_BACKOFF, "200ms");
        s.put(SweeperSettings.SLEEP_NEAR, "200ms");
        s.put(SweeperSettings.IDLE_MAX, "200ms");
        return s;
    }

    static void execute(HikariDataSource ds, String sql) throws SQLException {
        try (Connection c = ds.getConnection(); Statement st = c.createStatement()) {
            st.execute(sql);
        }
    }

    static long count(HikariDataSource ds, String sql) throws SQLException {
        try (Connection c = ds.getConnection(); Statement st = c.createStatement(); ResultSet rs = st.executeQuery(sql)) {
            rs.next();
            return rs.getLong(1);
        }
    }
}
