package io.queen.timers.test;

import com.zaxxer.hikari.HikariDataSource;
import io.queen.timers.bridge.BridgeGroupSettings;
import io.queen.timers.bridge.BridgeMain;
import io.queen.timers.bridge.BridgeSettings;
import io.queen.timers.client.verdict.CommandSender;
import io.queen.timers.core.config.CommonSettings;
import io.queen.timers.core.config.ConfigDef;
import io.queen.timers.core.config.ConfigLoader;
import io.queen.timers.core.db.DataSources;
import io.queen.timers.core.config.DatabaseSettings;
import io.queen.timers.core.db.DatabaseRole;
import io.queen.timers.core.db.SessionTimeouts;
import io.queen.timers.embedded.EmbeddedKafkaBroker;
import io.queen.timers.embedded.EmbeddedPostgresServer;
import io.queen.timers.log.read.LogMessage;
import io.queen.timers.log.read.LogReader;
import io.queen.timers.log.read.PartitionInfo;
import io.queen.timers.routes.RouteSettings;
import io.queen.timers.sql.BridgeGroups;
import io.queen.timers.sql.Migrations;
import io.queen.timers.sweeper.SweeperMain;
import io.queen.timers.sweeper.SweeperSettings;
import java.security.SecureRandom;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.HashMap;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import org.apache.kafka.clients.CommonClientConfigs;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The whole queen-timers stack for an integration test, in the test's JVM: a Kafka broker and a PostgreSQL
 * server (embedded, as the {@code local} command runs them, or the ones {@link Options#external} names), the
 * schema, a command and an audit topic of this stack's own, the bridge and the sweeper (each as the services
 * run, as a least-privilege login role). Usable from any framework; {@link QueenTimersExtension} runs one per
 * JUnit 5 test class. {@link #close()} stops everything in reverse order.
 *
 * <p>Every name the stack makes is its own (topics, the bridge's consumer group, the services' login roles end
 * in a random suffix), so stacks of several test classes may share one external broker and database. They do
 * share the database's queues: give each test its own queue names or keys.
 *
 * <p>PRICE: start-up is about 5–10 s (the embedded servers start side by side; the migration is most of the
 * rest), once per test class; memory is a broker and a server's worth (run the tests with {@code -Xmx512m} or more).
 */
public final class QueenTimersStack implements AutoCloseable {

    private static final Logger LOG = LoggerFactory.getLogger(QueenTimersStack.class);
    /** The tenant of a command that names none (the default tenant; docs/commands.md). */
    public static final UUID DEFAULT_TENANT = UUID.fromString(CommonSettings.DEFAULT_TENANT);
    private static final SecureRandom RANDOM = new SecureRandom();

    /** What to run: embedded servers, or a broker and a PostgreSQL database a test environment provides. */
    public record Options(String bootstrapServers, String jdbcUrl, String jdbcUser, String jdbcPassword) {

        /** An embedded broker and an embedded PostgreSQL, both temporary (removed on close). */
        public static Options embedded() {
            return new Options(null, null, null, null);
        }

        /**
         * A broker ({@code bootstrapServers}, PLAINTEXT) and a database ({@code jdbcUrl}) that are already running.
         * {@code jdbcUser} migrates the schema and owns it (docs/schema-and-roles.md), and needs CREATEROLE: the
         * services run as login roles made for this stack, dropped on close.
         */
        public static Options external(String bootstrapServers, String jdbcUrl, String jdbcUser, String jdbcPassword) {
            return new Options(bootstrapServers, jdbcUrl, jdbcUser, jdbcPassword);
        }
    }

    private final Deque<AutoCloseable> started = new ArrayDeque<>();
    private final List<String> loginRoles = new ArrayList<>();
    private String bootstrapServers;
    private String commandTopic;
    private String auditTopic;
    private HikariDataSource owner;
    private AuditLog audit;
    private CommandSender sender;
    private Clock clock;

    private QueenTimersStack() {}

    /** Starts a stack; on failure, stops what had started and throws. */
    public static QueenTimersStack start(Options options) {
        QueenTimersStack stack = new QueenTimersStack();
        try {
            stack.startAll(options);
            return stack;
        } catch (RuntimeException e) {
            stack.close();
            throw e;
        }
    }

    private void startAll(Options o) {
        long t0 = System.nanoTime();
        // the two servers start side by side: a cold PostgreSQL takes seconds, so does a broker
        CompletableFuture<EmbeddedPostgresServer> pg = o.jdbcUrl() == null
                ? CompletableFuture.supplyAsync(() -> EmbeddedPostgresServer.start(null, 0, EmbeddedPostgresServer.Durability.RELAXED, false))
                : CompletableFuture.completedFuture(null);
        CompletableFuture<EmbeddedKafkaBroker> kafka = o.bootstrapServers() == null
                ? CompletableFuture.supplyAsync(EmbeddedKafkaBroker::startTemporary)
                : CompletableFuture.completedFuture(null);
        EmbeddedPostgresServer pgServer = join(pg, kafka);
        EmbeddedKafkaBroker broker = join(kafka, null);
        String jdbcUrl;
        String user;
        String password;
        if (pgServer != null) {
            jdbcUrl = pgServer.jdbcUrl("postgres");
            user = EmbeddedPostgresServer.USER;
            password = "";
        } else {
            jdbcUrl = o.jdbcUrl();
            user = o.jdbcUser();
            password = o.jdbcPassword() == null ? "" : o.jdbcPassword();
        }
        bootstrapServers = broker != null ? broker.bootstrapServers() : o.bootstrapServers();

        String suffix = HexFormat.of().formatHex(bytes(4));
        commandTopic = "queen.timers.test-" + suffix + ".commands";
        auditTopic = "queen.timers.test-" + suffix + ".audit";

        Map<String, String> env = new HashMap<>();
        env.put(env(CommonSettings.JDBC_URL), jdbcUrl);
        env.put(env(CommonSettings.JDBC_USER), user);
        env.put(env(CommonSettings.JDBC_PASSWORD), password);
        env.put(env(CommonSettings.KAFKA_BOOTSTRAP), bootstrapServers);
        env.put(env(RouteSettings.COMMAND_TOPICS), commandTopic);
        env.put(env(CommonSettings.AUDIT_TOPIC), auditTopic);
        env.put(env(CommonSettings.MIGRATE_ON_START), "false");
        env.put(env(CommonSettings.HTTP_PORT), "0");
        env.put(env(CommonSettings.HTTP_BIND_ADDRESS), "127.0.0.1");

        try (HikariDataSource migrating = DataSources.create(DatabaseSettings.from(ConfigLoader.load(DATABASE, null, env)), SessionTimeouts.MIGRATION, 3)) {
            Migrations.migrate(migrating);
        }
        owner = DataSources.create(DatabaseSettings.from(ConfigLoader.load(DATABASE, null, env)), SessionTimeouts.OPERATOR.named("queen-timers-test"), 4);
        started.push(owner);
        Map<String, String> bridgeEnv = new HashMap<>(env);
        Map<String, String> sweeperEnv = new HashMap<>(env);
        String bridgeLogin = "queen_test_bridge_" + suffix;
        loginRole(bridgeLogin, DatabaseRole.BRIDGE, bridgeEnv);
        loginRole("queen_test_sweeper_" + suffix, DatabaseRole.SWEEPER, sweeperEnv);
        createTopics(commandTopic, auditTopic);

        // a group of this stack's own, bound by the owner to the bridge's login with its topic's tenant, as the owner's
        // `queen-timers migrate` binds it from the bridge's declaration (a least-privilege login binds no group itself)
        bridgeEnv.put(env(BridgeSettings.GROUP_ID), "queen-timers-test-" + suffix);
        BridgeGroupSettings declared = BridgeGroupSettings.from(ConfigLoader.load(BridgeGroupSettings.definition(), null, bridgeEnv));
        try {
            BridgeGroups.bind(owner, declared.groupId(), bridgeLogin, declared.topicTenants());
        } catch (java.sql.SQLException e) {
            throw new IllegalStateException("cannot bind the bridge group to " + bridgeLogin + ": " + e.getMessage(), e);
        }
        bridgeEnv.put(env(BridgeSettings.START_POSITION), "earliest");
        started.push(BridgeMain.host(BridgeSettings.from(ConfigLoader.load(BridgeSettings.definition(), null, bridgeEnv))));
        started.push(SweeperMain.host(SweeperSettings.from(ConfigLoader.load(SweeperSettings.definition(), null, sweeperEnv))));

        audit = new AuditLog(kafkaSettings(), auditTopic);
        started.push(audit);
        clock = new Clock(owner);
        LOG.info("queen-timers test stack up in {} ms: kafka {}, {}, command topic {}", (System.nanoTime() - t0) / 1_000_000,
                bootstrapServers, jdbcUrl, commandTopic);
    }

    /** Waits for {@code f}; on failure stops what {@code other} started meanwhile. */
    private <T> T join(CompletableFuture<T> f, CompletableFuture<?> other) {
        try {
            T t = f.get();
            if (t instanceof AutoCloseable c) {
                started.push(c);
            }
            return t;
        } catch (ExecutionException e) {
            if (other != null) {
                other.thenAccept(x -> {
                    if (x instanceof AutoCloseable c) {
                        closeQuietly(c);
                    }
                });
            }
            throw e.getCause() instanceof RuntimeException r ? r : new IllegalStateException(e.getCause());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while starting the stack", e);
        }
    }

    /** The topic to send commands to (the bridge of this stack consumes it). */
    public String commandTopic() {
        return commandTopic;
    }

    /** The topic the bridge and the sweeper publish this stack's audit events to. */
    public String auditTopic() {
        return auditTopic;
    }

    public String bootstrapServers() {
        return bootstrapServers;
    }

    /** Kafka client settings for this stack's broker: a producer or consumer of the test's own starts from these. */
    public Map<String, Object> kafkaSettings() {
        return Map.of(CommonClientConfigs.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers);
    }

    /**
     * A {@link CommandSender} on the command topic's broker, awaiting verdicts on this stack's audit topic; made at the
     * first call, closed with the stack. Not thread-safe (as CommandSender).
     */
    public synchronized CommandSender sender() {
        if (sender == null) {
            sender = new CommandSender(new HashMap<>(kafkaSettings()), auditTopic);
            started.push(sender);
        }
        return sender;
    }

    /** The audit events of this stack, read from the beginning of its audit topic. */
    public AuditLog audit() {
        return audit;
    }

    /**
     * The messages of {@code queue} (default tenant) in the log, as a Queen consumer reads them: every partition,
     * each in offset order (partitions by name), with message id, txn and payload. Empty when the queue does not
     * exist yet (a queue is made at its first fire).
     */
    public List<LogMessage> log(String queue) {
        return log(DEFAULT_TENANT, queue);
    }

    /** As {@link #log(String)}, for the queue of {@code tenant}. */
    public List<LogMessage> log(UUID tenant, String queue) {
        LogReader reader = new LogReader(owner);
        List<LogMessage> out = new ArrayList<>();
        try {
            List<PartitionInfo> parts = new ArrayList<>(reader.partitions(tenant, queue));
            parts.sort(java.util.Comparator.comparing(PartitionInfo::name));
            for (PartitionInfo p : parts) {
                long from = 0;
                while (from <= p.lastOffset()) {
                    List<LogMessage> page = reader.read(tenant, queue, p.name(), from, 1000);
                    if (page.isEmpty()) {
                        break;
                    }
                    out.addAll(page);
                    from = page.get(page.size() - 1).offset() + 1;
                }
            }
        } catch (SQLException e) {
            throw new IllegalStateException("cannot read the log of " + queue + ": " + e.getMessage(), e);
        }
        return out;
    }

    /** The tests' clock of this stack: {@link Clock#fireDue} and {@link Clock#advance}. */
    public Clock clock() {
        return clock;
    }

    /** Shorthand for {@code clock().fireDue(queue)}: the queue's staged timers fire now; returns once they fired. */
    public List<Clock.Moved> fireDue(String queue) {
        return clock.fireDue(queue);
    }

    /** A pool on the stack's database as the schema's owner, for a test's own reads. Closed with the stack. */
    public javax.sql.DataSource ownerDataSource() {
        return owner;
    }

    @Override
    public synchronized void close() {
        while (!started.isEmpty()) {
            AutoCloseable c = started.pop();
            if (c == owner) {
                dropLoginRoles();
            }
            closeQuietly(c);
        }
    }

    private static void closeQuietly(AutoCloseable c) {
        try {
            c.close();
        } catch (Exception e) {
            LOG.warn("stopping {} failed: {}", c.getClass().getSimpleName(), e.toString());
        }
    }

    /**
     * A login role that is a member of {@code group} and nothing more, with a random password, for one service of
     * this stack (as the local stack does, docs/schema-and-roles.md#database-roles); dropped on close.
     */
    private void loginRole(String login, String group, Map<String, String> serviceEnv) {
        String pw = HexFormat.of().formatHex(bytes(24));
        try (Connection c = owner.getConnection(); Statement st = c.createStatement()) {
            st.execute("CREATE ROLE " + login + " LOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE NOREPLICATION NOBYPASSRLS PASSWORD '" + pw + "'");
            loginRoles.add(login);
            st.execute("GRANT " + group + " TO " + login);
            st.execute("DO $$ BEGIN EXECUTE format('GRANT CONNECT ON DATABASE %I TO " + login + "', current_database()); END $$");
        } catch (SQLException e) {
            throw new IllegalStateException("cannot create the login role " + login + " (a member of " + group
                    + "): " + e.getMessage() + " (the database user needs CREATEROLE)", e);
        }
        serviceEnv.put(env(CommonSettings.JDBC_USER), login);
        serviceEnv.put(env(CommonSettings.JDBC_PASSWORD), pw);
    }

    private void dropLoginRoles() {
        for (String login : loginRoles) {
            try (Connection c = owner.getConnection(); Statement st = c.createStatement()) {
                st.execute("DROP OWNED BY " + login); // the CONNECT grant
                st.execute("DROP ROLE IF EXISTS " + login);
            } catch (SQLException e) {
                LOG.warn("cannot drop the login role {}: {}", login, e.getMessage());
            }
        }
        loginRoles.clear();
    }

    private void createTopics(String... topics) {
        try (Admin admin = Admin.create(kafkaSettings())) {
            admin.createTopics(java.util.Arrays.stream(topics).map(t -> new NewTopic(t, 1, (short) 1)).toList()).all().get();
        } catch (ExecutionException e) {
            throw new IllegalStateException("cannot create topics: " + e.getCause().getMessage(), e.getCause());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted");
        }
    }

    private static final ConfigDef DATABASE = CommonSettings.definition().select(
            CommonSettings.JDBC_URL, CommonSettings.JDBC_USER, CommonSettings.JDBC_PASSWORD, CommonSettings.JDBC_POOL_SIZE);

    /** The environment variable a setting is read from, as its definition declares it. */
    private static String env(String key) {
        return BridgeSettings.definition().key(key).env(); // the bridge's keys include the common ones
    }

    private static byte[] bytes(int n) {
        byte[] b = new byte[n];
        RANDOM.nextBytes(b);
        return b;
    }
}
