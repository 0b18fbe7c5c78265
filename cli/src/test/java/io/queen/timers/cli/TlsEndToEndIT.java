package io.queen.timers.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.queen.timers.core.ops.Dependencies;
import io.queen.timers.bridge.BridgeMain;
import io.queen.timers.bridge.BridgeSettings;
import io.queen.timers.core.config.Config;
import io.queen.timers.core.config.ConfigLoader;
import io.queen.timers.embedded.EmbeddedKafkaBroker;
import io.queen.timers.embedded.EmbeddedPostgresServer;
import io.queen.timers.sweeper.LogContents;
import io.queen.timers.sweeper.SweeperMain;
import io.queen.timers.sweeper.SweeperSettings;
import io.queen.timers.testkit.TestCertificates;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.UUID;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.junit.jupiter.api.Test;

/**
 * Issue 41, point 3: encrypted transport end to end. A broker whose only client listener requires SASL_SSL with
 * SCRAM-SHA-512 and a PostgreSQL that accepts TLS connections only (pg_hba.conf has hostssl lines only), both
 * presenting a certificate a CA made by this test signed (TestCertificates: keytool). `migrate` and `schedule` (the
 * CLI), the bridge and the sweeper with their audit relays connect with sslmode=verify-full and the CA as
 * sslrootcert, Kafka with the CA as PEM truststore; passwords and JAAS configs come from files
 * (QUEEN_*_FILE), and the relays' producer logs in as another SCRAM user than the consumers (kafka.producer.*).
 * One timer is scheduled, fired into the log and audited.
 */
class TlsEndToEndIT {

    static final ObjectMapper JSON = new ObjectMapper();

    @Test
    void aTimerIsScheduledFiredAndAuditedOverSaslSslAndVerifyFullTls() throws Exception {
        TestCertificates certs = TestCertificates.create();
        Path dir = certs.directory();
        Path hba = Files.writeString(dir.resolve("pg_hba.conf"), String.join("\n",
                "# TLS only: no host line, so a plaintext TCP connection matches nothing and is refused",
                "hostssl all postgres 127.0.0.1/32 trust",
                "hostssl all postgres ::1/128 trust",
                "hostssl all all 127.0.0.1/32 scram-sha-256",
                "hostssl all all ::1/128 scram-sha-256", ""));
        Map<String, String> users = Map.of("broker", pw(), "bridge", pw(), "relay", pw(), "operator", pw());
        try (EmbeddedPostgresServer pg = EmbeddedPostgresServer.startTls(certs.serverCertPem(), certs.serverKeyPem(), hba);
                EmbeddedKafkaBroker kafka = EmbeddedKafkaBroker.startSaslSsl(certs.serverKeyStore(), certs.storePassword(), users, "broker")) {
            String url = "jdbc:postgresql://localhost:" + pg.port() + "/postgres?sslmode=verify-full&sslrootcert=" + certs.caPem();
            String ownerPassword = pw();
            try (Connection c = DriverManager.getConnection(url, "postgres", ""); Statement st = c.createStatement()) {
                st.execute("CREATE ROLE queen_tls_owner LOGIN SUPERUSER PASSWORD '" + ownerPassword + "'");
            }
            // no plaintext way in: the server refuses a connection that does not ask for TLS
            assertThatThrownBy(() -> DriverManager.getConnection(url.replace("sslmode=verify-full", "sslmode=disable"), "postgres", "").close())
                    .isInstanceOf(SQLException.class).hasMessageContaining("no pg_hba.conf entry");

            Path dbPassword = Files.writeString(dir.resolve("db-password"), ownerPassword + "\n");
            Map<String, String> env = new HashMap<>();
            env.put("QUEEN_JDBC_URL", url);
            env.put("QUEEN_JDBC_USER", "queen_tls_owner");
            env.put("QUEEN_JDBC_PASSWORD_FILE", dbPassword.toString());
            env.put("QUEEN_KAFKA_BOOTSTRAP", kafka.bootstrapServers());
            env.put("QUEEN_KAFKA_SECURITY_PROTOCOL", "SASL_SSL");
            env.put("QUEEN_KAFKA_SASL_MECHANISM", "SCRAM-SHA-512");
            env.put("QUEEN_KAFKA_SSL_TRUSTSTORE_TYPE", "PEM");
            env.put("QUEEN_KAFKA_SSL_TRUSTSTORE_LOCATION", certs.caPem().toString());
            env.put("QUEEN_KAFKA_SASL_JAAS_CONFIG_FILE", jaas(dir, "bridge", users).toString());
            env.put("QUEEN_KAFKA_PRODUCER_SASL_JAAS_CONFIG_FILE", jaas(dir, "relay", users).toString());

            String commands = "tls-commands-" + UUID.randomUUID().toString().substring(0, 8);
            String audit = "tls-audit-" + UUID.randomUUID().toString().substring(0, 8);
            Map<String, Object> adminProps = clientProps(kafka, certs, "operator", users);
            try (Admin admin = Admin.create(adminProps)) {
                admin.createTopics(List.of(new NewTopic(commands, 1, (short) 1), new NewTopic(audit, 1, (short) 1))).all().get();
            }

            Cli migrate = cli(env, "migrate");
            assertThat(migrate.code).as("migrate: %s %s", migrate.out, migrate.err).isZero();

            Map<String, String> service = new HashMap<>(env);
            service.put("QUEEN_DB_ROLE_CHECK", "false"); // one superuser role here: least privilege is LeastPrivilegeTest's subject
            service.put("QUEEN_MIGRATE_ON_START", "false");
            service.put("QUEEN_HTTP_PORT", "0");
            service.put("QUEEN_JDBC_POOL_SIZE", "4");
            service.put("QUEEN_COMMAND_TOPICS", commands);
            service.put("QUEEN_AUDIT_TOPIC", audit);
            service.put("QUEEN_BRIDGE_GROUP_ID", "tls-bridge");
            service.put("QUEEN_BRIDGE_START_POSITION", "earliest"); // the command may reach the topic before the group is assigned
            service.put("QUEEN_KAFKA_SESSION_TIMEOUT_MS", "6000");
            Config bridgeConfig = ConfigLoader.load(BridgeSettings.definition(), null, service);
            Config sweeperConfig = ConfigLoader.load(SweeperSettings.definition(), null, service);
            assertThat(bridgeConfig.toString()).doesNotContain(ownerPassword).doesNotContain(users.get("bridge"))
                    .doesNotContain(users.get("relay"));

            try (BridgeMain bridge = BridgeMain.start(BridgeSettings.from(bridgeConfig), Dependencies.defaults(new SimpleMeterRegistry()));
                    SweeperMain sweeper = SweeperMain.start(SweeperSettings.from(sweeperConfig), Dependencies.defaults(new SimpleMeterRegistry()))) {
                Map<String, String> operator = new HashMap<>(env);
                operator.put("QUEEN_KAFKA_SASL_JAAS_CONFIG_FILE", jaas(dir, "operator", users).toString());
                operator.remove("QUEEN_KAFKA_PRODUCER_SASL_JAAS_CONFIG_FILE");
                Cli schedule = cli(operator, "schedule", "-t", commands, "--audit-topic", audit, "-q", "tls.reminders", "-k", "k1",
                        "--delay", "1s", "-p", "{\"over\":\"tls\"}", "--wait", "60s");
                assertThat(schedule.code).as("schedule: %s %s", schedule.out, schedule.err).isZero();

                await().atMost(Duration.ofSeconds(90)).until(() -> types(audit, adminProps).containsAll(List.of("scheduled", "fired")));
                try (Connection c = DriverManager.getConnection(url, "postgres", ""); Statement st = c.createStatement()) {
                    ResultSet rs = st.executeQuery("SELECT count(*) FROM queen.log_timers");
                    rs.next();
                    assertThat(rs.getLong(1)).as("the timer left the staging table").isZero();
                    // every connection of the services is TLS (pg_stat_ssl), and they exist
                    rs = st.executeQuery("SELECT count(*) FILTER (WHERE s.ssl), count(*) FROM pg_stat_activity a JOIN pg_stat_ssl s"
                            + " ON s.pid = a.pid WHERE a.usename = 'queen_tls_owner'");
                    rs.next();
                    assertThat(rs.getLong(2)).isPositive();
                    assertThat(rs.getLong(1)).isEqualTo(rs.getLong(2));
                }
                assertThat(LogContents.read(pgDataSource(url))).extracting(LogContents.Message::queue).containsExactly("tls.reminders");
            }
        }
    }

    private static javax.sql.DataSource pgDataSource(String url) {
        org.postgresql.ds.PGSimpleDataSource ds = new org.postgresql.ds.PGSimpleDataSource();
        ds.setUrl(url);
        ds.setUser("postgres");
        return ds;
    }

    private static String pw() {
        return UUID.randomUUID().toString().replace("-", "");
    }

    private static Path jaas(Path dir, String user, Map<String, String> users) throws Exception {
        return Files.writeString(dir.resolve(user + ".jaas"), "org.apache.kafka.common.security.scram.ScramLoginModule required"
                + " username=\"" + user + "\" password=\"" + users.get(user) + "\";\n");
    }

    private static Map<String, Object> clientProps(EmbeddedKafkaBroker kafka, TestCertificates certs, String user, Map<String, String> users) {
        Map<String, Object> p = new LinkedHashMap<>();
        p.put("bootstrap.servers", kafka.bootstrapServers());
        p.put("security.protocol", "SASL_SSL");
        p.put("sasl.mechanism", "SCRAM-SHA-512");
        p.put("ssl.truststore.type", "PEM");
        p.put("ssl.truststore.location", certs.caPem().toString());
        p.put("sasl.jaas.config", "org.apache.kafka.common.security.scram.ScramLoginModule required username=\"" + user
                + "\" password=\"" + users.get(user) + "\";");
        return p;
    }

    /** The event types on the audit topic so far. */
    private static List<String> types(String audit, Map<String, Object> props) throws Exception {
        Map<String, Object> p = new HashMap<>(props);
        p.put("key.deserializer", ByteArrayDeserializer.class.getName());
        p.put("value.deserializer", ByteArrayDeserializer.class.getName());
        List<String> out = new ArrayList<>();
        try (KafkaConsumer<byte[], byte[]> c = new KafkaConsumer<>(p)) {
            TopicPartition tp = new TopicPartition(audit, 0);
            c.assign(List.of(tp));
            c.seekToBeginning(List.of(tp));
            long end = c.endOffsets(List.of(tp)).get(tp);
            while (c.position(tp) < end) {
                for (ConsumerRecord<byte[], byte[]> r : c.poll(Duration.ofMillis(500))) {
                    JsonNode e = JSON.readTree(r.value());
                    out.add(e.get("type").asText());
                }
            }
        }
        return out;
    }

    record Cli(int code, String out, String err) {}

    private static Cli cli(Map<String, String> env, String... args) {
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        int code = QueenTimers.commandLine(new QueenTimers(env), new PrintWriter(out, true), new PrintWriter(err, true)).execute(args);
        return new Cli(code, out.toString(), err.toString());
    }
}
