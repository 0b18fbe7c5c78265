package io.queen.timers.bridge;

import static org.assertj.core.api.Assertions.assertThat;

import io.queen.timers.bridge.crypto.EncryptionSettings;
import io.queen.timers.core.config.Config;
import io.queen.timers.core.config.ConfigLoader;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The bridge's own secrets (encryption keys) and its consumer's SASL settings read from files (docs/configuration.md). */
class SecretFilesTest {

    @TempDir
    Path dir;

    @Test
    void encryptionKeysAndTheConsumersJaasConfigComeFromFiles() throws Exception {
        Path key = Files.writeString(dir.resolve("key"), "k1:c2VjcmV0LWtleS1vbmU=\n");
        Path previous = Files.writeString(dir.resolve("previous"), "k0:b2xkLWtleQ==\n");
        Path jaas = Files.writeString(dir.resolve("jaas"), "ScramLoginModule required username=\"bridge\" password=\"pw\";\n");
        Map<String, String> env = new HashMap<>();
        env.put("QUEEN_JDBC_URL", "jdbc:postgresql://db/queen");
        env.put("QUEEN_KAFKA_BOOTSTRAP", "kafka:9092");
        env.put("QUEEN_ENCRYPTION_KEY_FILE", key.toString());
        env.put("QUEEN_ENCRYPTION_KEYS_PREVIOUS_FILE", previous.toString());
        env.put("QUEEN_KAFKA_CONSUMER_SASL_JAAS_CONFIG_FILE", jaas.toString());
        Config config = ConfigLoader.load(BridgeSettings.definition(), null, env);
        assertThat(config.string(EncryptionSettings.KEY)).isEqualTo("k1:c2VjcmV0LWtleS1vbmU=");
        assertThat(config.string(EncryptionSettings.KEYS_PREVIOUS)).isEqualTo("k0:b2xkLWtleQ==");
        BridgeSettings settings = BridgeSettings.from(config);
        assertThat(BridgeMain.consumerProps(settings))
                .containsEntry("sasl.jaas.config", "ScramLoginModule required username=\"bridge\" password=\"pw\";");
        assertThat(config.toString()).doesNotContain("c2VjcmV0").doesNotContain("b2xk").doesNotContain("password=\"pw\"");
        // the typed records print no secret either: the start line and any record in a log line
        assertThat(settings.toString()).doesNotContain("c2VjcmV0").doesNotContain("b2xk").doesNotContain("password=\"pw\"");
    }
}
