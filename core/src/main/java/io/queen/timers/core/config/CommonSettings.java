package io.queen.timers.core.config;

import static io.queen.timers.core.config.ConfigDef.Type.DURATION;
import static io.queen.timers.core.config.ConfigDef.Type.INT;
import static io.queen.timers.core.config.ConfigDef.Type.PASSWORD;
import static io.queen.timers.core.config.ConfigDef.Type.STRING;
import static io.queen.timers.core.config.ConfigDef.between;
import static io.queen.timers.core.config.ConfigDef.durationBetween;
import static io.queen.timers.core.config.ConfigDef.nonEmpty;
import static io.queen.timers.core.config.ConfigDef.oneOf;

import java.time.Duration;

/**
 * Settings every queen-timers process reads. The environment names are part of the interface
 * (docs/configuration.md: docker-compose and operators use them). Built once by {@link #from(Config)} and held by each
 * service's settings (BridgeSettings, SweeperSettings, HttpSettings); the components take these records, never the
 * {@link Config}.
 *
 * <p>{@link #AUDIT_TOPIC} is declared here (every process that runs a relay reads it) and read by {@link AuditTopics}.
 *
 * @param database {@code jdbc.*}
 * @param kafka    {@code kafka.*}, passed through to the Kafka clients
 * @param ops      where /health and /metrics listen, and how log lines are written
 * @param outages  how the process meets a database that is away
 * @param schema   what a start does about the schema and the login
 * @param health   {@link HealthSettings}
 * @param printed  every setting of the process as one log line, secrets masked ({@link Config#toString()}): what
 *                 a service's start line prints, and this record's {@link #toString()}
 */
public record CommonSettings(DatabaseSettings database, KafkaSettings kafka, Ops ops, Outages outages, Schema schema,
        HealthSettings health, String printed) {

    /**
     * @param httpPort        {@link #HTTP_PORT}
     * @param httpBindAddress {@link #HTTP_BIND_ADDRESS}
     * @param logFormat       {@link #LOG_FORMAT}
     */
    public record Ops(int httpPort, String httpBindAddress, String logFormat) {}

    /**
     * @param startupTimeout  {@link #STARTUP_TIMEOUT}
     * @param retryBackoffMax {@link #DB_RETRY_BACKOFF_MAX}
     * @param socketTimeout   {@link #DB_SOCKET_TIMEOUT}
     */
    public record Outages(Duration startupTimeout, Duration retryBackoffMax, Duration socketTimeout) {}

    /**
     * @param migrateOnStart {@link #MIGRATE_ON_START}
     * @param roleCheck      {@link #DB_ROLE_CHECK}
     */
    public record Schema(boolean migrateOnStart, boolean roleCheck) {}

    public static final String JDBC_URL = "jdbc.url";
    public static final String JDBC_USER = "jdbc.user";
    public static final String JDBC_PASSWORD = "jdbc.password";
    public static final String JDBC_POOL_SIZE = "jdbc.pool.size";
    public static final String KAFKA_BOOTSTRAP = "kafka.bootstrap.servers";
    public static final String AUDIT_TOPIC = "audit.topic";
    /** The default of {@link #AUDIT_TOPIC}, a constant so the CLI's help can name it. */
    public static final String DEFAULT_AUDIT_TOPIC = "queen.timers.audit";
    public static final String HTTP_PORT = "http.port";
    public static final String HTTP_BIND_ADDRESS = "http.bind.address";
    public static final String STARTUP_TIMEOUT = "startup.timeout";
    public static final String DB_RETRY_BACKOFF_MAX = "db.retry.backoff.max";
    public static final String MIGRATE_ON_START = "migrate.on.start";
    public static final String DB_SOCKET_TIMEOUT = "db.socket.timeout";
    public static final String DB_ROLE_CHECK = "db.role.check";
    public static final String LOG_FORMAT = "log.format";

    /** The default tenant: every topic maps to it unless configured otherwise. */
    public static final String DEFAULT_TENANT = "00000000-0000-0000-0000-000000000001";

    public static ConfigDef definition() {
        return new ConfigDef()
                .define(JDBC_URL, STRING, null, nonEmpty(), "QUEEN_JDBC_URL",
                        "JDBC URL of the PostgreSQL database holding the queen schema, e.g. jdbc:postgresql://db:5432/queen?sslmode=verify-full&sslrootcert=/etc/queen/tls/ca.pem"
                                + " (require encrypts but believes any server; verify-full checks the certificate and the host name).")
                .define(JDBC_USER, STRING, "postgres", null, "QUEEN_JDBC_USER", "Database user.")
                .define(JDBC_PASSWORD, PASSWORD, "", null, "QUEEN_JDBC_PASSWORD", "Database password. Never logged.")
                .define(JDBC_POOL_SIZE, INT, "8", between(3, 200), "QUEEN_JDBC_POOL_SIZE",
                        "Maximum connections in this process's pool (HikariCP maximumPoolSize). At least 3: the"
                                + " migration at start holds one for its advisory lock while Flyway uses two.")
                .define(KAFKA_BOOTSTRAP, STRING, null, nonEmpty(), "QUEEN_KAFKA_BOOTSTRAP",
                        "Kafka bootstrap servers. Every other kafka.* key passes through to the Kafka clients (SASL, TLS);"
                                + " kafka.consumer.*, kafka.producer.* and kafka.admin.* override it for the consumers (the bridge's, the"
                                + " CLI's readers), the producers (the audit relay's, the CLI's sender) or the admin clients only.")
                .define(AUDIT_TOPIC, STRING, DEFAULT_AUDIT_TOPIC, nonEmpty(), "QUEEN_AUDIT_TOPIC",
                        "Topic the audit relay publishes to (for the default tenant; see tenant.<id>.audit.topic).")
                .define(HTTP_PORT, INT, "8080", between(0, 65535), "QUEEN_HTTP_PORT",
                        "Port of /health/live, /health/ready and /metrics; 0 picks a free port, -1 is not allowed.")
                .define(HTTP_BIND_ADDRESS, STRING, "0.0.0.0", nonEmpty(), "QUEEN_HTTP_BIND_ADDRESS",
                        "Address /health and /metrics listen on. 0.0.0.0 (all interfaces) so a container's healthcheck and a"
                                + " scraper on the container network reach it; 127.0.0.1 keeps them on the host.")
                .define(STARTUP_TIMEOUT, DURATION, "0s", durationBetween(Duration.ZERO, Duration.ofDays(365)), "QUEEN_STARTUP_TIMEOUT",
                        "How long a service starting while PostgreSQL is unreachable or restarting keeps retrying its start-up"
                                + " (the migration and its lock included), live and not ready, before it exits non-zero; 0 = indefinitely.")
                .define(DB_RETRY_BACKOFF_MAX, DURATION, "30s", durationBetween(Duration.ofMillis(100), Duration.ofMinutes(10)),
                        "Longest pause between retries while the database is unreachable (each pause is random, under a ceiling that"
                                + " doubles from 100 ms to this);"
                                + " never longer than health.failing.after, so every loop tries again within that bound once the database is back.")
                .define(DB_SOCKET_TIMEOUT, DURATION, "90s", durationBetween(Duration.ofSeconds(1), Duration.ofHours(1)),
                        "How long the driver waits for a PostgreSQL backend that stopped answering (pgjdbc socketTimeout; also"
                                + " idle_in_transaction_session_timeout) before it drops the connection and the pool opens another."
                                + " Must exceed every statement timeout of the process (sweeper.statement.timeout, bridge.statement.timeout).")
                .define(MIGRATE_ON_START, ConfigDef.Type.BOOLEAN, "true", null,
                        "Apply the Flyway migrations at start (safe when several processes start at once). Only with"
                                + " db.role.check=false: a role that may migrate is one that check refuses, so with it the service"
                                + " requires the schema current and the owner migrates (`queen-timers migrate`).")
                .define(DB_ROLE_CHECK, ConfigDef.Type.BOOLEAN, "true", null, "QUEEN_DB_ROLE_CHECK",
                        "Refuse to start as a database role that can write the tables directly (a superuser, the owner, any"
                                + " INSERT/UPDATE/DELETE/TRUNCATE grant) or is not a member of the service's role (queen_bridge,"
                                + " queen_sweeper); docs/schema-and-roles.md#database-roles. false only for a single-role development database.")
                .define(LOG_FORMAT, STRING, "text", oneOf("text", "json"), "QUEEN_LOG_FORMAT",
                        "The service's log lines: text (one line per event, for a terminal) or json (one JSON object per line for a"
                                + " log shipper: @timestamp, level, logger_name, thread_name, message, stack_trace, and tenant, queue,"
                                + " key, trace_id on a line about one timer; secrets masked as in text).")
                .include(HealthSettings.definition());
    }

    public static CommonSettings from(Config c) {
        return new CommonSettings(DatabaseSettings.from(c), KafkaSettings.from(c),
                new Ops(c.intValue(HTTP_PORT), c.string(HTTP_BIND_ADDRESS), c.string(LOG_FORMAT)),
                new Outages(c.duration(STARTUP_TIMEOUT), c.duration(DB_RETRY_BACKOFF_MAX), c.duration(DB_SOCKET_TIMEOUT)),
                new Schema(c.bool(MIGRATE_ON_START), c.bool(DB_ROLE_CHECK)), HealthSettings.from(c), c.toString());
    }

    /** {@link HealthSettings#retryPauseMax}: {@code db.retry.backoff.max}, never longer than {@code health.failing.after}. */
    public Duration retryPauseMax() {
        return health.retryPauseMax(outages.retryBackoffMax());
    }

    /** The settings of one Kafka client ({@link KafkaSettings#client}). */
    public java.util.Map<String, Object> kafka(KafkaSettings.Client client) {
        return kafka.client(client);
    }

    /** {@link #printed}: the secrets masked. */
    @Override
    public String toString() {
        return printed;
    }
}
