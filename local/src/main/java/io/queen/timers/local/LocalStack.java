package io.queen.timers.local;

import com.zaxxer.hikari.HikariDataSource;
import io.queen.timers.bridge.BridgeGroupSettings;
import io.queen.timers.bridge.BridgeMain;
import io.queen.timers.bridge.BridgeSettings;
import io.queen.timers.core.config.CommonSettings;
import io.queen.timers.core.config.ConfigDef;
import io.queen.timers.core.config.ConfigLoader;
import io.queen.timers.core.db.DataSources;
import io.queen.timers.core.config.DatabaseSettings;
import io.queen.timers.core.db.DatabaseRole;
import io.queen.timers.core.db.SessionTimeouts;
import io.queen.timers.embedded.EmbeddedKafkaBroker;
import io.queen.timers.embedded.EmbeddedPostgresServer;
import io.queen.timers.routes.RouteSettings;
import io.queen.timers.sql.BridgeGroups;
import io.queen.timers.sql.Migrations;
import io.queen.timers.sweeper.SweeperMain;
import io.queen.timers.sweeper.SweeperSettings;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.HashMap;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ExecutionException;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewTopic;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The whole product in one JVM: a Kafka broker, a PostgreSQL server (or the one a JDBC URL names),
 * the schema, the two topics, the bridge and the sweeper (each with its audit relay and its
 * /health and /metrics port). Closing stops them in reverse order.
 */
final class LocalStack implements AutoCloseable {

    private static final Logger LOG = LoggerFactory.getLogger(LocalStack.class);

    /** Where things listen, for the banner and for a second terminal. */
    record Endpoints(String bootstrap, String jdbcUrl, String jdbcUser, String commandTopic, String auditTopic,
                     int bridgeHttpPort, int sweeperHttpPort, String pgData, String kafkaData) {}

    /** What to start. {@code dataDir} null = temporary directories, removed on close. */
    record Plan(Path dataDir, int kafkaPort, int pgPort, String externalJdbcUrl, String jdbcUser, String jdbcPassword,
                int bridgeHttpPort, int sweeperHttpPort, String commandTopic, String auditTopic) {}

    private final Deque<AutoCloseable> started = new ArrayDeque<>();
    private Endpoints endpoints;
    private Map<String, String> serviceEnv;
    private SweeperSettings sweeperSettings;

    private LocalStack() {}

    static LocalStack start(Plan plan) {
        LocalStack stack = new LocalStack();
        try {
            stack.startAll(plan);
            return stack;
        } catch (RuntimeException e) {
            stack.close();
            throw e;
        }
    }

    private void startAll(Plan plan) {
        Ports.requireFree(plan.kafkaPort(), "--kafka-port");
        if (plan.externalJdbcUrl() == null) {
            Ports.requireFree(plan.pgPort(), "--pg-port");
        }
        Ports.requireFree(plan.bridgeHttpPort(), "--http-port");
        Ports.requireFree(plan.sweeperHttpPort(), "--http-port");

        String jdbcUrl;
        String user;
        String password;
        String pgData;
        if (plan.externalJdbcUrl() != null) {
            jdbcUrl = plan.externalJdbcUrl();
            user = plan.jdbcUser();
            password = plan.jdbcPassword();
            pgData = "(external)";
        } else {
            Path dir = plan.dataDir() == null ? null : plan.dataDir().resolve("pg");
            // stopped by close() (the local command's shutdown hook), after the services that use it
            EmbeddedPostgresServer pg = EmbeddedPostgresServer.start(dir, plan.pgPort(),
                    dir == null ? EmbeddedPostgresServer.Durability.RELAXED : EmbeddedPostgresServer.Durability.DURABLE, false);
            started.push(pg);
            jdbcUrl = pg.jdbcUrl("postgres");
            user = EmbeddedPostgresServer.USER;
            password = "";
            pgData = dir == null ? "(temporary)" : dir.toString();
        }

        EmbeddedKafkaBroker kafka;
        String kafkaData;
        if (plan.dataDir() == null) {
            kafka = EmbeddedKafkaBroker.start(tempDir("queen-local-kafka-"), plan.kafkaPort(), true);
            kafkaData = "(temporary)";
        } else {
            Path dir = plan.dataDir().resolve("kafka");
            kafka = EmbeddedKafkaBroker.start(dir, plan.kafkaPort(), false);
            kafkaData = dir.toString();
        }
        started.push(kafka);

        // the services' settings as docker-compose gives them: the environment names their definitions declare
        serviceEnv = new HashMap<>();
        serviceEnv.put(env(CommonSettings.JDBC_URL), jdbcUrl);
        serviceEnv.put(env(CommonSettings.JDBC_USER), user);
        serviceEnv.put(env(CommonSettings.JDBC_PASSWORD), password == null ? "" : password);
        serviceEnv.put(env(CommonSettings.KAFKA_BOOTSTRAP), kafka.bootstrapServers());
        serviceEnv.put(env(RouteSettings.COMMAND_TOPICS), plan.commandTopic());
        serviceEnv.put(env(CommonSettings.AUDIT_TOPIC), plan.auditTopic());
        serviceEnv.put(env(CommonSettings.MIGRATE_ON_START), "false");

        Map<String, String> bridgeEnv = new HashMap<>(serviceEnv);
        Map<String, String> sweeperEnv = new HashMap<>(serviceEnv);
        try (HikariDataSource ds = dataSource(serviceEnv, SessionTimeouts.MIGRATION)) {
            // the owner (the user given, or the embedded server's superuser) migrates; the services run as
            // least-privilege login roles, as in production (docs/schema-and-roles.md#database-roles; db.role.check stays on)
            Migrations.migrate(ds);
            loginRole(ds, BRIDGE_LOGIN, DatabaseRole.BRIDGE, bridgeEnv);
            loginRole(ds, SWEEPER_LOGIN, DatabaseRole.SWEEPER, sweeperEnv);
            bindBridgeGroup(ds, bridgeEnv);
        }
        createTopics(kafka.bootstrapServers(), plan.commandTopic(), plan.auditTopic());

        int bridgePort = plan.bridgeHttpPort() == 0 ? Ports.free() : plan.bridgeHttpPort();
        int sweeperPort = plan.sweeperHttpPort() == 0 ? Ports.free() : plan.sweeperHttpPort();
        bridgeEnv.put(env(CommonSettings.HTTP_PORT), Integer.toString(bridgePort));
        // a sandbox whose topic may outlive its database: its commands are the user's own, applied again rather than waiting
        bridgeEnv.putIfAbsent(env(BridgeSettings.START_POSITION), "earliest");
        started.push(BridgeMain.host(BridgeSettings.from(ConfigLoader.load(BridgeSettings.definition(), null, bridgeEnv))));
        sweeperEnv.put(env(CommonSettings.HTTP_PORT), Integer.toString(sweeperPort));
        // every key the environment above does not set at its default, as deployed: the fire budget among them
        sweeperSettings = SweeperSettings.from(ConfigLoader.load(SweeperSettings.definition(), null, sweeperEnv));
        started.push(SweeperMain.host(sweeperSettings));

        endpoints = new Endpoints(kafka.bootstrapServers(), jdbcUrl, user, plan.commandTopic(), plan.auditTopic(),
                bridgePort, sweeperPort, pgData, kafkaData);
    }

    /** The login roles the local stack's services connect as (cluster-wide, like the group roles they are members of). */
    static final String BRIDGE_LOGIN = "queen_local_bridge";
    static final String SWEEPER_LOGIN = "queen_local_sweeper";

    /**
     * Creates (or resets) {@code login}: a login role that is a member of {@code group} and nothing more, with a
     * password new at every start (never printed; the services get it in their settings), and points {@code env}
     * at it. Needs a migrating user that may create roles (the embedded server's superuser, or an external user
     * with CREATEROLE). PRICE: a second local stack on the same PostgreSQL cluster resets the password, so the
     * first one's new connections are refused; one local stack per cluster.
     */
    private static void loginRole(HikariDataSource ds, String login, String group, Map<String, String> env) {
        String password = HexFormat.of().formatHex(SecureRandomHolder.bytes(24));
        try (Connection c = ds.getConnection(); Statement st = c.createStatement()) {
            st.execute("DO $$ BEGIN CREATE ROLE " + login + " LOGIN; EXCEPTION WHEN duplicate_object OR unique_violation THEN NULL; END $$");
            st.execute("ALTER ROLE " + login + " LOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE NOREPLICATION NOBYPASSRLS PASSWORD '" + password + "'");
            st.execute("GRANT " + group + " TO " + login);
            st.execute("DO $$ BEGIN EXECUTE format('GRANT CONNECT ON DATABASE %I TO " + login + "', current_database()); END $$");
        } catch (SQLException e) {
            throw new IllegalStateException("cannot create the login role " + login + " (a member of " + group + ") the local " + login.substring(12)
                    + " runs as: " + e.getMessage() + " (the database user needs CREATEROLE)", e);
        }
        env.put(env(CommonSettings.JDBC_USER), login);
        env.put(env(CommonSettings.JDBC_PASSWORD), password);
    }

    /**
     * As the owner's `migrate` does with the bridge's declaration: binds the bridge's group to its login and its
     * command topic to its tenant, read from the bridge's own settings, before the bridge starts (a least-privilege login
     * may not bind a group itself).
     */
    private static void bindBridgeGroup(HikariDataSource ds, Map<String, String> bridgeEnv) {
        BridgeGroupSettings declared = BridgeGroupSettings.from(ConfigLoader.load(BridgeGroupSettings.definition(), null, bridgeEnv));
        try {
            BridgeGroups.bind(ds, declared.groupId(), BRIDGE_LOGIN, declared.topicTenants());
        } catch (SQLException e) {
            throw new IllegalStateException("cannot bind the bridge group to " + BRIDGE_LOGIN + ": " + e.getMessage(), e);
        }
    }

    private static final class SecureRandomHolder {
        private static final java.security.SecureRandom RANDOM = new java.security.SecureRandom();

        static byte[] bytes(int n) {
            byte[] b = new byte[n];
            RANDOM.nextBytes(b);
            return b;
        }
    }

    Endpoints endpoints() {
        return endpoints;
    }

    /** The settings the stack's sweeper runs with. */
    SweeperSettings sweeperSettings() {
        return sweeperSettings;
    }

    /** A small pool on the stack's database, closed with the stack (for reading the log back). */
    HikariDataSource newDataSource() {
        HikariDataSource ds = dataSource(serviceEnv, SessionTimeouts.OPERATOR.named("queen-local"));
        started.push(ds);
        return ds;
    }

    @Override
    public synchronized void close() {
        while (!started.isEmpty()) {
            AutoCloseable c = started.pop();
            try {
                c.close();
            } catch (Exception e) {
                LOG.warn("stopping {} failed: {}", c.getClass().getSimpleName(), e.toString());
            }
        }
    }

    private static final ConfigDef DATABASE = CommonSettings.definition().select(
            CommonSettings.JDBC_URL, CommonSettings.JDBC_USER, CommonSettings.JDBC_PASSWORD, CommonSettings.JDBC_POOL_SIZE);

    /** The environment variable a setting is read from, as its definition declares it. */
    private static String env(String key) {
        ConfigDef def = BridgeSettings.definition(); // the bridge's keys include the common ones
        return def.key(key).env();
    }

    /** A small pool on the stack's database, built as the services build theirs. */
    private static HikariDataSource dataSource(Map<String, String> env, SessionTimeouts timeouts) {
        return DataSources.create(DatabaseSettings.from(ConfigLoader.load(DATABASE, null, env)), timeouts, 4);
    }

    private static void createTopics(String bootstrap, String... topics) {
        try (Admin admin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap))) {
            Set<String> existing = admin.listTopics().names().get();
            List<NewTopic> missing = java.util.Arrays.stream(topics).distinct().filter(t -> !existing.contains(t))
                    .map(t -> new NewTopic(t, 1, (short) 1)).toList();
            admin.createTopics(missing).all().get();
        } catch (ExecutionException e) {
            throw new IllegalStateException("cannot create topics: " + e.getCause().getMessage(), e.getCause());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted");
        }
    }

    private static Path tempDir(String prefix) {
        try {
            return java.nio.file.Files.createTempDirectory(prefix);
        } catch (java.io.IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }
}
