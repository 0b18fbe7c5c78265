package io.queen.timers.stack;

import com.zaxxer.hikari.HikariDataSource;
import io.queen.timers.core.config.CommonSettings;
import io.queen.timers.core.config.Config;
import io.queen.timers.core.db.DataSources;
import io.queen.timers.core.config.DatabaseSettings;
import io.queen.timers.core.db.SessionTimeouts;
import io.queen.timers.core.ops.Dependencies;
import io.queen.timers.core.ops.ServiceHost;
import io.queen.timers.core.ops.ServiceKind;
import io.queen.timers.sql.Migrations;
import io.queen.timers.sql.SqlFile;
import java.security.SecureRandom;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.function.BiConsumer;
import javax.sql.DataSource;
import org.apache.kafka.clients.CommonClientConfigs;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A running queen-timers stack, built by {@link #builder()}: a PostgreSQL database and a Kafka broker (embedded, or the
 * ones given), the schema migrated by its owner, a command and an audit topic, a least-privilege login per role, and the
 * services the builder names, each started as its launcher subcommand starts it ({@link ServiceKind#host}) from settings
 * its own definition checks ({@link ServiceSettings}). Further services of the same stack start from {@link #settings}
 * ({@link #start}): a test's bridge with its own registry, a second sweeper. {@link #close()} stops everything in the
 * reverse order of its start.
 *
 * <p>The one way this repository assembles a stack: the {@code local} command, the kit for a team's tests
 * ({@code queen-timers-test}), the integration tests, the benchmarks and the harnesses build on it
 * (docs/development.md#test-stack).
 *
 * <p>Every name the stack makes ends in a random suffix ({@link #uniqueName}), so stacks may share one broker and one
 * database server; the logins it makes are dropped when it stops, unless the builder named them ({@link Builder#logins}).
 */
public final class Stack implements AutoCloseable {

    private static final Logger LOG = LoggerFactory.getLogger(Stack.class);
    private static final SecureRandom RANDOM = new SecureRandom();
    private static final String LOGIN_SQL = SqlFile.load(Stack.class, "login.sql");
    private static final String DROP_LOGIN_SQL = SqlFile.load(Stack.class, "drop-login.sql");

    /** A login role of this stack: a member of one group role and nothing more. */
    public record Login(String name, String password) {}

    private final String suffix = HexFormat.of().formatHex(bytes(4));
    private final Deque<AutoCloseable> started = new ArrayDeque<>();
    private final Map<String, Login> logins = new LinkedHashMap<>();
    private final Map<String, Config> configs = new LinkedHashMap<>();
    private final Map<String, ServiceHost> hosts = new LinkedHashMap<>();
    private final String loginPrefix;
    private final boolean dropLogins;
    private Postgres.Running database;
    private Kafka.Running broker;
    private HikariDataSource owner;
    private String commandTopic;
    private String auditTopic;

    private Stack(String loginPrefix) {
        this.loginPrefix = loginPrefix;
        this.dropLogins = loginPrefix == null;
    }

    public static Builder builder() {
        return new Builder();
    }

    /**
     * A stack on this JVM's shared test servers: a fresh database named after {@code owner} (a test class), migrated by
     * its owner, and the shared broker; no service yet ({@link #start}). What an integration test starts from.
     */
    public static Stack shared(String owner) {
        return builder().postgres(Postgres.freshDatabase(owner)).kafka(Kafka.shared()).migrated().start();
    }

    /** What to start; {@link #start()} starts it. */
    public static final class Builder {

        private Postgres postgres = Postgres.embedded();
        private Kafka kafka = Kafka.embedded();
        private boolean migrated;
        private String commandTopic;
        private String auditTopic;
        private String loginPrefix;
        private final List<Planned> services = new ArrayList<>();

        private Builder() {}

        /** The database (default: an embedded server of the stack's own). */
        public Builder postgres(Postgres postgres) {
            this.postgres = postgres;
            return this;
        }

        /** The broker (default: an in-process broker of the stack's own). */
        public Builder kafka(Kafka kafka) {
            this.kafka = kafka;
            return this;
        }

        /** The owner migrates the schema before anything else connects (as `queen-timers migrate` does). */
        public Builder migrated() {
            this.migrated = true;
            return this;
        }

        /** The command topic's name (created when missing); default {@code queen.timers.test-<suffix>.commands}. */
        public Builder commandTopic(String name) {
            this.commandTopic = name;
            return this;
        }

        /** The audit topic's name (created when missing); default {@code queen.timers.test-<suffix>.audit}. */
        public Builder auditTopic(String name) {
            this.auditTopic = name;
            return this;
        }

        /**
         * The services' logins are named {@code <prefix>_<role>} ({@code queen_local_bridge}), made or given a new
         * password at start, and kept when the stack stops. PRICE: a second stack with the same prefix on the same cluster
         * resets the password, so the first one's new connections are refused: one such stack per cluster. Without it
         * each login is {@code queen_test_<role>_<suffix>}, dropped when the stack stops.
         */
        public Builder logins(String prefix) {
            this.loginPrefix = prefix;
            return this;
        }

        /**
         * Runs {@code kind} under a {@link ServiceHost} (its /health and /metrics port), as its launcher subcommand does,
         * with {@link Stack#settings} and what {@code settings} adds (given the stack, for its topics and names). Services
         * start in the order they are named.
         */
        public <S extends AutoCloseable> Builder service(ServiceKind<S> kind, BiConsumer<ServiceSettings, Stack> settings) {
            services.add(new Planned(kind, settings));
            return this;
        }

        /** Starts everything; on a failure stops what had started and throws. */
        public Stack start() {
            Stack stack = new Stack(loginPrefix);
            try {
                stack.startAll(this);
                return stack;
            } catch (RuntimeException e) {
                stack.close();
                throw e;
            }
        }
    }

    private record Planned(ServiceKind<?> kind, BiConsumer<ServiceSettings, Stack> settings) {}

    private void startAll(Builder b) {
        long t0 = System.nanoTime();
        // the two servers start side by side: a cold PostgreSQL takes seconds, so does a broker
        CompletableFuture<Postgres.Running> pg = CompletableFuture.supplyAsync(b.postgres::start);
        CompletableFuture<Kafka.Running> kafka = CompletableFuture.supplyAsync(b.kafka::start);
        // both awaited whatever happens, so a server that started beside one that failed is stopped too
        CompletableFuture.allOf(pg, kafka).exceptionally(e -> null).join();
        pg.thenAccept(started::push); // stopped last: pushed first
        kafka.thenAccept(started::push);
        database = join(pg);
        broker = join(kafka);

        commandTopic = b.commandTopic != null ? b.commandTopic : "queen.timers.test-" + suffix + ".commands";
        auditTopic = b.auditTopic != null ? b.auditTopic : "queen.timers.test-" + suffix + ".audit";
        if (b.migrated) {
            try (HikariDataSource migrating = DataSources.create(ownerSettings(3), SessionTimeouts.MIGRATION, 3)) {
                Migrations.migrate(migrating);
            }
        }
        owner = DataSources.create(ownerSettings(4), SessionTimeouts.OPERATOR.named("queen-timers-stack"), 4);
        started.push(owner);
        started.push(this::dropLogins); // before the owner's pool closes (pushed after it)
        if (broker.present()) {
            createTopics(commandTopic, auditTopic);
        }
        for (Planned p : b.services) {
            host(p.kind(), p.settings());
        }
        LOG.info("queen-timers stack up in {} ms: kafka {}, {}, command topic {}", (System.nanoTime() - t0) / 1_000_000,
                broker.bootstrapServers(), database.jdbcUrl(), commandTopic);
    }

    private static <T> T join(CompletableFuture<T> f) {
        try {
            return f.join();
        } catch (CompletionException e) {
            throw e.getCause() instanceof RuntimeException r ? r : new IllegalStateException(e.getCause());
        }
    }

    private void host(ServiceKind<?> kind, BiConsumer<ServiceSettings, Stack> customize) {
        Config config = prepare(kind, customize);
        ServiceHost host = kind.host().apply(config);
        started.push(host);
        hosts.put(kind.name(), host);
    }

    /**
     * Starts one more {@code kind} in this JVM, bare (no host), with {@link #settings} and what {@code customize} adds,
     * reporting to {@code dependencies}: the caller owns it and stops it (it is not stopped with the stack).
     */
    public <S extends AutoCloseable> S start(ServiceKind<S> kind, BiConsumer<ServiceSettings, Stack> customize, Dependencies dependencies) {
        return kind.starter().start(prepare(kind, customize), dependencies);
    }

    /** The settings, the owner's declaration for the login (the bridge's group), recorded as what {@code kind} runs with. */
    private Config prepare(ServiceKind<?> kind, BiConsumer<ServiceSettings, Stack> customize) {
        ServiceSettings s = settings(kind);
        customize.accept(s, this);
        Config config = s.config();
        try {
            kind.declaration().declare(config, owner, config.string(CommonSettings.JDBC_USER));
        } catch (SQLException e) {
            throw new IllegalStateException("the owner cannot declare the " + kind.name() + "'s login: " + e.getMessage(), e);
        }
        configs.put(kind.name(), config);
        return config;
    }

    /**
     * What a {@code kind} of this stack starts from: the database as this stack's login of its role, the broker, the audit
     * topic, no migration at start (the owner migrated), its /health port any free one. The rest at the defaults it ships with.
     */
    public ServiceSettings settings(ServiceKind<?> kind) {
        Login login = login(kind.loginGroup());
        return ServiceSettings.of(kind.definition().get())
                .set(CommonSettings.JDBC_URL, database.jdbcUrl())
                .set(CommonSettings.JDBC_USER, login.name())
                .set(CommonSettings.JDBC_PASSWORD, login.password())
                .set(CommonSettings.KAFKA_BOOTSTRAP, broker.bootstrapServers())
                .set(CommonSettings.AUDIT_TOPIC, auditTopic)
                .set(CommonSettings.MIGRATE_ON_START, false)
                .set(CommonSettings.HTTP_PORT, 0);
    }

    /** The service of {@code kind} the builder started, under its host (its /health port, its readiness). */
    public ServiceHost host(ServiceKind<?> kind) {
        ServiceHost h = hosts.get(kind.name());
        if (h == null) {
            throw new IllegalArgumentException("this stack runs no " + kind.name());
        }
        return h;
    }

    /** The settings the last {@code kind} started by this stack runs with. */
    public Config config(ServiceKind<?> kind) {
        Config c = configs.get(kind.name());
        if (c == null) {
            throw new IllegalArgumentException("this stack started no " + kind.name());
        }
        return c;
    }

    /**
     * This stack's login of {@code groupRole} ({@link io.queen.timers.core.db.DatabaseRole}): made at the first call (a
     * member of that role and nothing more, with a random password; docs/schema-and-roles.md#database-roles).
     */
    public synchronized Login login(String groupRole) {
        Login existing = logins.get(groupRole);
        if (existing != null) {
            return existing;
        }
        String role = groupRole.startsWith("queen_") ? groupRole.substring("queen_".length()) : groupRole;
        Login l = new Login(loginPrefix != null ? loginPrefix + "_" + role : "queen_test_" + role + "_" + suffix,
                HexFormat.of().formatHex(bytes(24)));
        try (Connection c = owner.getConnection()) {
            c.setAutoCommit(false);
            try (PreparedStatement settings = c.prepareStatement(
                    "SELECT set_config('queen_stack.login', ?, true), set_config('queen_stack.password', ?, true), set_config('queen_stack.group', ?, true)");
                    Statement st = c.createStatement()) {
                settings.setString(1, l.name());
                settings.setString(2, l.password());
                settings.setString(3, groupRole);
                settings.execute();
                st.execute(LOGIN_SQL);
                c.commit();
            } catch (SQLException e) {
                c.rollback();
                throw e;
            }
        } catch (SQLException e) {
            throw new IllegalStateException("cannot make the login " + l.name() + " (a member of " + groupRole + "): " + e.getMessage()
                    + " (the owner needs CREATEROLE)", e);
        }
        logins.put(groupRole, l);
        return l;
    }

    private synchronized void dropLogins() {
        if (!dropLogins) {
            return;
        }
        for (Login l : logins.values()) {
            try (Connection c = owner.getConnection()) {
                c.setAutoCommit(false);
                try (PreparedStatement settings = c.prepareStatement("SELECT set_config('queen_stack.login', ?, true)");
                        Statement st = c.createStatement()) {
                    settings.setString(1, l.name());
                    settings.execute();
                    st.execute(DROP_LOGIN_SQL);
                    c.commit();
                }
            } catch (SQLException e) {
                LOG.warn("cannot drop the login {}: {}", l.name(), e.getMessage());
            }
        }
        logins.clear();
    }

    /** {@code prefix} and this stack's random suffix: a name no other stack uses (a group, a topic, a queue). */
    public String uniqueName(String prefix) {
        return prefix + suffix;
    }

    public String commandTopic() {
        return commandTopic;
    }

    public String auditTopic() {
        return auditTopic;
    }

    public String bootstrapServers() {
        return broker.bootstrapServers();
    }

    /** Kafka client settings for this stack's broker: a producer or consumer of the caller's own starts from these. */
    public Map<String, Object> kafkaSettings() {
        return Map.of(CommonClientConfigs.BOOTSTRAP_SERVERS_CONFIG, broker.bootstrapServers());
    }

    /** The database's JDBC URL. */
    public String jdbcUrl() {
        return database.jdbcUrl();
    }

    /** The schema owner's user name (the embedded server's superuser, or the user given). */
    public String ownerUser() {
        return database.user();
    }

    /** A pool on the database as the schema's owner, for the caller's own reads and arrangements; closed with the stack. */
    public DataSource owner() {
        return owner;
    }

    /** A new pool of {@code maxPoolSize} as the owner, named {@code name} in pg_stat_activity; closed with the stack. */
    public synchronized HikariDataSource newOwnerPool(String name, int maxPoolSize) {
        HikariDataSource ds = DataSources.create(ownerSettings(maxPoolSize), SessionTimeouts.OPERATOR.named(name), maxPoolSize);
        started.push(ds);
        return ds;
    }

    /** Creates {@code topics} that do not exist yet, one partition each. */
    public void createTopics(String... topics) {
        try (Admin admin = Admin.create(kafkaSettings())) {
            Set<String> existing = admin.listTopics().names().get();
            List<NewTopic> missing = java.util.Arrays.stream(topics).distinct().filter(t -> !existing.contains(t))
                    .map(t -> new NewTopic(t, 1, (short) 1)).toList();
            admin.createTopics(missing).all().get();
        } catch (java.util.concurrent.ExecutionException e) {
            throw new IllegalStateException("cannot create topics: " + e.getCause().getMessage(), e.getCause());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while creating topics", e);
        }
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

    private DatabaseSettings ownerSettings(int poolSize) {
        return new DatabaseSettings(database.jdbcUrl(), database.user(), database.password(), poolSize);
    }

    private static byte[] bytes(int n) {
        byte[] b = new byte[n];
        RANDOM.nextBytes(b);
        return b;
    }
}
