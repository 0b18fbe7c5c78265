package io.queen.timers.bridge;

import static org.assertj.core.api.Assertions.assertThat;

import io.queen.timers.core.config.Config;
import io.queen.timers.core.config.ConfigLoader;
import java.util.HashMap;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** kafka.consumer.* reaches the bridge's consumer (and its probe) only; kafka.admin.* its Admin client only. */
class KafkaClientOverridesTest {

    @Test
    void theConsumerAndTheAdminClientEachGetTheirOwnOverride() {
        Map<String, String> env = new HashMap<>();
        env.put("QUEEN_JDBC_URL", "jdbc:postgresql://db/queen");
        env.put("QUEEN_KAFKA_BOOTSTRAP", "kafka:9092");
        env.put("QUEEN_KAFKA_SASL_JAAS_CONFIG", "shared");
        env.put("QUEEN_KAFKA_CONSUMER_SASL_JAAS_CONFIG", "consumer-only");
        env.put("QUEEN_KAFKA_ADMIN_SASL_JAAS_CONFIG", "admin-only");
        env.put("QUEEN_KAFKA_PRODUCER_SASL_JAAS_CONFIG", "producer-only");
        Config config = ConfigLoader.load(BridgeSettings.definition(), null, env);
        BridgeSettings settings = BridgeSettings.from(config);

        assertThat(BridgeMain.consumerProps(settings)).containsEntry("sasl.jaas.config", "consumer-only")
                .containsEntry("bootstrap.servers", "kafka:9092");
        assertThat(BridgeMain.adminProps(settings)).containsEntry("sasl.jaas.config", "admin-only")
                .containsEntry("bootstrap.servers", "kafka:9092");
    }
}
