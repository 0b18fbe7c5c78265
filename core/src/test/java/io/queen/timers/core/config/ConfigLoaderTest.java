package io.queen.timers.core.config;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class ConfigLoaderTest {

    @TempDir
    Path dir;

    @Test
    void environmentOverridesTheFileAndDefaultsFillTheRest() throws Exception {
        Path file = write("jdbc.url=jdbc:postgresql://file/db\nkafka.bootstrap.servers=file:9092\njdbc.pool.size=4\n");
        Config c = ConfigLoader.load(CommonSettings.definition(), file,
                Map.of("QUEEN_JDBC_URL", "jdbc:postgresql://env/db", "QUEEN_HTTP_PORT", "9100"));
        assertThat(c.string(CommonSettings.JDBC_URL)).isEqualTo("jdbc:postgresql://env/db");
        assertThat(c.intValue(CommonSettings.JDBC_POOL_SIZE)).isEqualTo(4);
        assertThat(c.intValue(CommonSettings.HTTP_PORT)).isEqualTo(9100);
        assertThat(c.string(CommonSettings.AUDIT_TOPIC)).isEqualTo("queen.timers.audit");
        assertThat(c.duration(CommonSettings.DB_RETRY_BACKOFF_MAX)).isEqualTo(Duration.ofSeconds(30));
    }

    @Test
    void kafkaKeysPassThroughFromFileAndEnvironment() throws Exception {
        Path file = write("jdbc.url=x\nkafka.bootstrap.servers=b:1\nkafka.security.protocol=SSL\n");
        Config c = ConfigLoader.load(CommonSettings.definition(), file,
                Map.of("QUEEN_KAFKA_BOOTSTRAP", "env:9093", "QUEEN_KAFKA_SASL_MECHANISM", "PLAIN"));
        assertThat(c.kafka()).containsEntry("bootstrap.servers", "env:9093")
                .containsEntry("security.protocol", "SSL")
                .containsEntry("sasl.mechanism", "PLAIN");
    }

    @Test
    void eachKafkaClientGetsItsOwnOverridesAndNoOtherClientsOverrides() throws Exception {
        Path file = write("jdbc.url=x\nkafka.bootstrap.servers=b:1\nkafka.security.protocol=SASL_SSL\nkafka.client.id=shared\n"
                + "kafka.consumer.client.id=the-consumer\nkafka.admin.request.timeout.ms=1234\n");
        Config c = ConfigLoader.load(CommonSettings.definition(), file,
                Map.of("QUEEN_KAFKA_PRODUCER_SASL_JAAS_CONFIG", "producer-jaas", "QUEEN_KAFKA_SASL_JAAS_CONFIG", "shared-jaas"));
        assertThat(c.kafka(KafkaSettings.Client.CONSUMER)).containsEntry("client.id", "the-consumer")
                .containsEntry("sasl.jaas.config", "shared-jaas").containsEntry("security.protocol", "SASL_SSL")
                .doesNotContainKey("request.timeout.ms");
        assertThat(c.kafka(KafkaSettings.Client.PRODUCER)).containsEntry("client.id", "shared")
                .containsEntry("sasl.jaas.config", "producer-jaas").doesNotContainKey("request.timeout.ms");
        assertThat(c.kafka(KafkaSettings.Client.ADMIN)).containsEntry("client.id", "shared")
                .containsEntry("sasl.jaas.config", "shared-jaas").containsEntry("request.timeout.ms", "1234");
        // the overrides themselves never reach a client as keys of their own (the client would warn of unknown settings)
        for (KafkaSettings.Client client : KafkaSettings.Client.values()) {
            assertThat(c.kafka(client).keySet()).noneMatch(k -> k.startsWith("consumer.") || k.startsWith("producer.") || k.startsWith("admin."));
        }
        assertThat(c.toString()).doesNotContain("producer-jaas").doesNotContain("shared-jaas").contains("kafka.producer.sasl.jaas.config=***");
    }

    @Test
    void secretsAreReadFromTheFileTheirFileVariableNamesTrailingNewlineDroppedNeverPrinted() throws Exception {
        Path db = Files.writeString(dir.resolve("db-password"), "hunter2 with spaces inside\n");
        Path jaas = Files.writeString(dir.resolve("jaas"),
                "org.apache.kafka.common.security.scram.ScramLoginModule required\n  username=\"relay\" password=\"s3cret\";\r\n\n");
        Map<String, String> env = new java.util.HashMap<>(Map.of("QUEEN_JDBC_URL", "x", "QUEEN_KAFKA_BOOTSTRAP", "b:1",
                "QUEEN_JDBC_PASSWORD_FILE", db.toString(), "QUEEN_KAFKA_PRODUCER_SASL_JAAS_CONFIG_FILE", jaas.toString(),
                // a Kafka setting whose own name ends in .file is a path for the client, not a secret to read
                "QUEEN_KAFKA_SASL_OAUTHBEARER_ASSERTION_PRIVATE_KEY_FILE", "/keys/assertion.pem"));
        env.put("QUEEN_JDBC_PASSWORD", ""); // an empty variable (a compose file's default) does not conflict
        Config c = ConfigLoader.load(CommonSettings.definition(), null, env);
        assertThat(c.string(CommonSettings.JDBC_PASSWORD)).isEqualTo("hunter2 with spaces inside");
        assertThat(c.kafka(KafkaSettings.Client.PRODUCER)).containsEntry("sasl.jaas.config",
                "org.apache.kafka.common.security.scram.ScramLoginModule required\n  username=\"relay\" password=\"s3cret\";");
        assertThat(c.kafka(KafkaSettings.Client.CONSUMER)).doesNotContainKey("sasl.jaas.config")
                .containsEntry("sasl.oauthbearer.assertion.private.key.file", "/keys/assertion.pem");
        assertThat(c.kafka()).doesNotContainKey("producer.sasl.jaas.config.file");
        assertThat(c.toString()).doesNotContain("hunter2").doesNotContain("s3cret").doesNotContain(dir.toString())
                .contains("jdbc.password=***", "kafka.producer.sasl.jaas.config=***");
    }

    @Test
    void aSecretSetTwiceOrInAnUnreadableFileIsOneLineWithoutTheSecret() throws Exception {
        Path db = Files.writeString(dir.resolve("db-password"), "hunter2\n");
        assertThatThrownBy(() -> ConfigLoader.load(CommonSettings.definition(), null, Map.of("QUEEN_JDBC_URL", "x",
                "QUEEN_KAFKA_BOOTSTRAP", "b:1", "QUEEN_JDBC_PASSWORD", "other", "QUEEN_JDBC_PASSWORD_FILE", db.toString())))
                .isInstanceOf(ConfigException.class)
                .hasMessage("both QUEEN_JDBC_PASSWORD and QUEEN_JDBC_PASSWORD_FILE are set: set one");
        assertThatThrownBy(() -> ConfigLoader.load(CommonSettings.definition(), null, Map.of("QUEEN_JDBC_URL", "x",
                "QUEEN_KAFKA_BOOTSTRAP", "b:1", "QUEEN_KAFKA_SASL_JAAS_CONFIG_FILE", dir.resolve("missing").toString())))
                .isInstanceOf(ConfigException.class)
                .hasMessageStartingWith("QUEEN_KAFKA_SASL_JAAS_CONFIG_FILE names " + dir.resolve("missing") + ", which cannot be read");
    }

    @Test
    void aMissingRequiredSettingNamesTheKeyAndItsVariable() {
        assertThatThrownBy(() -> ConfigLoader.load(CommonSettings.definition(), null, Map.of("QUEEN_KAFKA_BOOTSTRAP", "b:1")))
                .isInstanceOf(ConfigException.class)
                .hasMessageContaining("jdbc.url").hasMessageContaining("QUEEN_JDBC_URL");
    }

    @Test
    void anOutOfRangeValueNamesTheKeyAndTheAllowedRange() {
        assertThatThrownBy(() -> ConfigLoader.load(CommonSettings.definition(), null,
                Map.of("QUEEN_JDBC_URL", "x", "QUEEN_KAFKA_BOOTSTRAP", "b:1", "QUEEN_JDBC_POOL_SIZE", "2")))
                .isInstanceOf(ConfigException.class)
                .hasMessage("setting jdbc.pool.size = 2 is out of range: allowed 3 .. 200");
        assertThatThrownBy(() -> ConfigLoader.load(CommonSettings.definition(), null,
                Map.of("QUEEN_JDBC_URL", "x", "QUEEN_KAFKA_BOOTSTRAP", "b:1", "QUEEN_HTTP_PORT", "eighty")))
                .isInstanceOf(ConfigException.class)
                .hasMessageStartingWith("setting http.port = 'eighty' is not a valid int");
    }

    @Test
    void aMissingFileIsOneClearLine() {
        assertThatThrownBy(() -> ConfigLoader.load(CommonSettings.definition(), dir.resolve("nope.properties"), Map.of()))
                .isInstanceOf(ConfigException.class)
                .hasMessageContaining("nope.properties").hasMessageContaining("does not exist");
    }

    @Test
    void passwordsNeverReachToString() throws Exception {
        Path file = write("jdbc.url=x\njdbc.password=hunter2\nkafka.bootstrap.servers=b:1\n"
                + "kafka.sasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required password=\"s3cret\";\n");
        Config c = ConfigLoader.load(CommonSettings.definition(), file, Map.of());
        assertThat(c.string(CommonSettings.JDBC_PASSWORD)).isEqualTo("hunter2");
        assertThat(c.toString()).doesNotContain("hunter2").doesNotContain("s3cret").contains("jdbc.password=***");
        assertThat(c.toString().split("kafka\\.bootstrap\\.servers=", -1)).as("printed once").hasSize(2);
    }

    @Test
    void durationsAcceptUnitsAndIso() {
        assertThat(ConfigDef.parseDuration("250ms")).isEqualTo(Duration.ofMillis(250));
        assertThat(ConfigDef.parseDuration("7d")).isEqualTo(Duration.ofDays(7));
        assertThat(ConfigDef.parseDuration("PT30S")).isEqualTo(Duration.ofSeconds(30));
        assertThatThrownBy(() -> ConfigDef.parseDuration("soon")).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> ConfigDef.parseDuration("5 weeks")).isInstanceOf(RuntimeException.class);
    }

    private Path write(String text) throws Exception {
        Path f = dir.resolve("queen.properties");
        Files.writeString(f, text);
        return f;
    }
}
