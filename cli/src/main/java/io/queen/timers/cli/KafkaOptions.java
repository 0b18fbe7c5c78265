package io.queen.timers.cli;

import io.queen.timers.core.config.CommonSettings;
import io.queen.timers.core.config.KafkaSettings;
import io.queen.timers.core.config.ConfigDef;
import io.queen.timers.core.config.ConfigLoader;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;
import picocli.CommandLine.Option;

/**
 * How an operator tool finds Kafka: the services' properties file and environment (so
 * {@code kafka.*} SASL/TLS settings apply here too), and {@code --bootstrap} on top.
 */
public final class KafkaOptions {

    static final String LOCAL_BOOTSTRAP = "127.0.0.1:9092";

    @Option(names = "--kafka-config", paramLabel = "FILE",
            description = "Properties file with kafka.* client settings (the services' file works).")
    Path config;

    @Option(names = {"-b", "--bootstrap"}, paramLabel = "HOST:PORT",
            description = "Kafka bootstrap servers (else kafka.bootstrap.servers / QUEEN_KAFKA_BOOTSTRAP, else " + LOCAL_BOOTSTRAP + ", the local stack).")
    String bootstrap;

    /**
     * Settings for one Kafka client: {@code kafka.*} from file and environment, that client's
     * {@code kafka.consumer.*} / {@code kafka.producer.*} / {@code kafka.admin.*} on top, bootstrap from the flag.
     */
    public Map<String, Object> clientProps(Map<String, String> env, KafkaSettings.Client client) {
        ConfigDef def = CommonSettings.definition().select(CommonSettings.KAFKA_BOOTSTRAP);
        Map<String, String> merged = new HashMap<>(env);
        DatabaseOptions.put(merged, def, CommonSettings.KAFKA_BOOTSTRAP, bootstrap);
        merged.putIfAbsent(def.key(CommonSettings.KAFKA_BOOTSTRAP).env(), LOCAL_BOOTSTRAP);
        return new HashMap<>(KafkaSettings.from(ConfigLoader.load(def, config, merged)).client(client));
    }
}
