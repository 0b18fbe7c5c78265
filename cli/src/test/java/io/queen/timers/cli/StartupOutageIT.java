package io.queen.timers.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.queen.timers.cli.ServiceCommandsIT.Background;
import io.queen.timers.embedded.EmbeddedKafkaBroker;
import io.queen.timers.embedded.EmbeddedPostgresServer;
import io.queen.timers.embedded.EmbeddedPostgresServer.Durability;
import io.queen.timers.sql.Migrations;
import io.queen.timers.testkit.TestKafka;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.postgresql.ds.PGSimpleDataSource;

/**
 * Start-up rides out a PostgreSQL outage: the services wait (live, not ready, saying why) and come up on
 * their own once the database does; a restart of PostgreSQL while a service waits for the migration lock
 * is retried, not fatal. A PostgreSQL server of the test's own, stopped and started on one port.
 */
class StartupOutageIT {

    /** The advisory lock key of {@link Migrations} ("queentmr"). */
    static final long MIGRATION_LOCK_KEY = 0x7175_6565_6e74_6d72L;

    @TempDir
    Path dir;

    @Test
    void bothServicesStartedWhilePostgresIsDownComeUpWhenItStartsTenSecondsLater() throws Exception {
        int pgPort = Http.freePort();
        int bridgePort = Http.freePort();
        int sweeperPort = Http.freePort();
        String url = "jdbc:postgresql://127.0.0.1:" + pgPort + "/postgres";
        try (Background bridge = Background.run(env(url, bridgePort), "bridge");
                Background sweeper = Background.run(env(url, sweeperPort), "sweeper")) {
            for (int port : new int[] {bridgePort, sweeperPort}) {
                await().atMost(Duration.ofSeconds(30)).until(() -> Http.status(port, "/health/live") == 200);
                HttpResponse<String> ready = Http.get(port, "/health/ready");
                assertThat(ready.statusCode()).isEqualTo(503);
                assertThat(ready.body()).contains("startup: starting");
            }
            await().atMost(Duration.ofSeconds(30)).untilAsserted(() ->
                    assertThat(Http.get(bridgePort, "/health/ready").body()).contains("startup: cannot apply the schema migrations"));
            Thread.sleep(10_000);
            assertThat(bridge.thread().isAlive()).isTrue();
            assertThat(sweeper.thread().isAlive()).isTrue();
            try (EmbeddedPostgresServer pg = EmbeddedPostgresServer.start(dir.resolve("pg"), pgPort, Durability.RELAXED, false)) {
                for (int port : new int[] {bridgePort, sweeperPort}) {
                    await().atMost(Duration.ofSeconds(120)).untilAsserted(() ->
                            assertThat(Http.get(port, "/health/ready").statusCode()).as(Http.get(port, "/health/ready").body()).isEqualTo(200));
                }
                assertThat(Migrations.pendingCount(dataSource(url))).isZero();
                assertThat(bridge.stop()).isZero();
                assertThat(sweeper.stop()).isZero();
            }
        }
    }

    @Test
    void aPostgresRestartWhileTheServiceWaitsForTheMigrationLockIsRetried() throws Exception {
        int pgPort = Http.freePort();
        int sweeperPort = Http.freePort();
        String url = "jdbc:postgresql://127.0.0.1:" + pgPort + "/postgres";
        Path data = dir.resolve("pg2");
        EmbeddedPostgresServer pg = EmbeddedPostgresServer.start(data, pgPort, Durability.RELAXED, false);
        try {
            Connection holder = DriverManager.getConnection(url, EmbeddedPostgresServer.USER, "");
            try (PreparedStatement st = holder.prepareStatement("SELECT pg_advisory_lock(?)")) {
                st.setLong(1, MIGRATION_LOCK_KEY);
                st.execute();
            }
            try (Background sweeper = Background.run(env(url, sweeperPort), "sweeper")) {
                // the sweeper's migration waits for the lock the test holds ...
                await().atMost(Duration.ofSeconds(60)).until(() -> waitingForAdvisoryLock(url));
                // ... when PostgreSQL restarts under it (the test's session, and its lock, go with it)
                pg.close();
                holder.close();
                Thread.sleep(2_000);
                pg = EmbeddedPostgresServer.start(data, pgPort, Durability.RELAXED, false);
                await().atMost(Duration.ofSeconds(120)).untilAsserted(() ->
                        assertThat(Http.get(sweeperPort, "/health/ready").statusCode()).as(Http.get(sweeperPort, "/health/ready").body())
                                .isEqualTo(200));
                assertThat(sweeper.thread().isAlive()).isTrue();
                assertThat(Migrations.pendingCount(dataSource(url))).isZero();
                assertThat(sweeper.stop()).isZero();
            }
        } finally {
            pg.close();
        }
    }

    @Test
    void aBridgeStartedWhileKafkaIsDownComesUpWhenTheBrokerStartsTenSecondsLater() throws Exception {
        int kafkaPort = Http.freePort();
        int bridgePort = Http.freePort();
        io.queen.timers.testkit.FreshDatabase database = io.queen.timers.testkit.TestPostgres.createDatabase("StartupOutageIT");
        Map<String, String> env = env(database.jdbcUrl(), bridgePort);
        env.put("QUEEN_JDBC_USER", database.user());
        env.put("QUEEN_DB_ROLE_CHECK", "false"); // the service connects as the superuser: the single-role opt-out (docs/schema-and-roles.md#database-roles)
        env.put("QUEEN_JDBC_PASSWORD", database.password());
        env.put("QUEEN_KAFKA_BOOTSTRAP", "127.0.0.1:" + kafkaPort);
        env.put("QUEEN_COMMAND_TOPICS", "outage.commands");
        env.put("QUEEN_AUDIT_TOPIC", "outage.audit");
        try (Background bridge = Background.run(env, "bridge")) {
            await().atMost(Duration.ofSeconds(60)).ignoreExceptions().untilAsserted(() -> {
                HttpResponse<String> ready = Http.get(bridgePort, "/health/ready");
                assertThat(ready.statusCode()).isEqualTo(503);
                assertThat(ready.body()).contains("startup: ok").contains("kafka: unreachable");
            });
            Thread.sleep(10_000);
            assertThat(bridge.thread().isAlive()).isTrue();
            assertThat(Http.status(bridgePort, "/health/live")).isEqualTo(200);
            try (EmbeddedKafkaBroker broker = EmbeddedKafkaBroker.start(dir.resolve("kafka"), kafkaPort, true);
                    org.apache.kafka.clients.admin.Admin admin = org.apache.kafka.clients.admin.Admin.create(
                            Map.of("bootstrap.servers", broker.bootstrapServers()))) {
                admin.createTopics(java.util.List.of(new org.apache.kafka.clients.admin.NewTopic("outage.audit", 1, (short) 1))).all().get();
                await().atMost(Duration.ofSeconds(120)).untilAsserted(() ->
                        assertThat(Http.get(bridgePort, "/health/ready").statusCode()).as(Http.get(bridgePort, "/health/ready").body()).isEqualTo(200));
                Cli sent = Cli.run(env, "schedule", "-t", "outage.commands", "-q", "outage.q", "-k", "k1", "--delay", "1h", "--wait=60s");
                assertThat(sent.exitCode()).as(sent.err()).isZero();
                assertThat(sent.out()).contains("verdict: scheduled");
                assertThat(bridge.stop()).isZero();
            }
        } finally {
            database.close();
        }
    }

    private static boolean waitingForAdvisoryLock(String url) throws Exception {
        try (Connection c = DriverManager.getConnection(url, EmbeddedPostgresServer.USER, ""); Statement st = c.createStatement();
                ResultSet rs = st.executeQuery("SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND NOT granted")) {
            rs.next();
            return rs.getLong(1) > 0;
        }
    }

    private static PGSimpleDataSource dataSource(String url) {
        PGSimpleDataSource ds = new PGSimpleDataSource();
        ds.setUrl(url);
        ds.setUser(EmbeddedPostgresServer.USER);
        return ds;
    }

    private static Map<String, String> env(String url, int httpPort) {
        Map<String, String> env = new HashMap<>();
        env.put("QUEEN_JDBC_URL", url);
        env.put("QUEEN_JDBC_USER", EmbeddedPostgresServer.USER);
        env.put("QUEEN_DB_ROLE_CHECK", "false"); // the service connects as the superuser: the single-role opt-out (docs/schema-and-roles.md#database-roles)
        env.put("QUEEN_JDBC_PASSWORD", "");
        env.put("QUEEN_KAFKA_BOOTSTRAP", TestKafka.bootstrapServers());
        env.put("QUEEN_COMMAND_TOPICS", TestKafka.newTopic("outage-commands", 1));
        env.put("QUEEN_BRIDGE_START_POSITION", "earliest"); // the test's own topic: commands sent before the first join are applied
        env.put("QUEEN_AUDIT_TOPIC", TestKafka.newTopic("outage-audit", 1));
        env.put("QUEEN_HTTP_PORT", Integer.toString(httpPort));
        env.put("QUEEN_HTTP_BIND_ADDRESS", "127.0.0.1");
        env.put("QUEEN_DB_RETRY_BACKOFF_MAX", "1s");
        return env;
    }
}
