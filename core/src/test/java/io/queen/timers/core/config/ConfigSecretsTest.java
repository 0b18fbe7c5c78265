package io.queen.timers.core.config;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Map;
import org.junit.jupiter.api.Test;

/** Settings are logged once at start (Config.toString); a secret never reaches that line. */
class ConfigSecretsTest {

    @Test
    void passwordsAndKafkaCredentialsAreMaskedInTheLoggedSettings() {
        Config c = ConfigLoader.load(CommonSettings.definition(), null, Map.of(
                "QUEEN_JDBC_URL", "jdbc:postgresql://db/queen",
                "QUEEN_JDBC_PASSWORD", "s3cret-db",
                "QUEEN_KAFKA_BOOTSTRAP", "kafka:9092",
                "QUEEN_KAFKA_SASL_JAAS_CONFIG", "org.apache.kafka.common.security.plain.PlainLoginModule required password=\"s3cret-kafka\";",
                "QUEEN_KAFKA_SSL_KEYSTORE_PASSWORD", "s3cret-keystore"));

        String logged = c.toString();

        assertThat(logged).doesNotContain("s3cret").contains("jdbc.password=***", "kafka.sasl.jaas.config=***",
                "kafka.ssl.keystore.password=***", "kafka.bootstrap.servers=kafka:9092");
    }
}
