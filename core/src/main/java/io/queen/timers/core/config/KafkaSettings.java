package io.queen.timers.core.config;

import java.util.Map;
import java.util.TreeMap;

/**
 * The {@code kafka.*} keys of a process, prefix removed: undeclared, they pass through to the Kafka clients (bootstrap
 * servers, SASL, TLS). {@link #shared()} is what every client has in common; {@link #client} adds one client's overrides.
 *
 * @param all every {@code kafka.*} key, prefix removed, the clients' overrides ({@code consumer.*} ...) included
 */
public record KafkaSettings(Map<String, Object> all) {

    public static final String PREFIX = "kafka.";

    /**
     * The Kafka clients of the processes, each with its own override prefix under {@code kafka.}:
     * {@code kafka.consumer.*} (the bridge's consumer and its probe, the CLI's readers),
     * {@code kafka.producer.*} (the audit relay's producer, the CLI's command sender) and
     * {@code kafka.admin.*} (readiness, the bridge's topic-settings reader). Each key there wins over
     * the shared {@code kafka.*} of the same name for that client only, so the relay can authenticate
     * as a principal the bridge's consumer is not. No Kafka client setting begins with one of these
     * words, so the split is unambiguous; the price is that these three words are reserved.
     */
    public enum Client {
        CONSUMER("consumer."), PRODUCER("producer."), ADMIN("admin.");

        private final String infix;

        Client(String infix) {
            this.infix = infix;
        }

        /** The full prefix of this client's overrides, {@code kafka.consumer.} say. */
        public String prefix() {
            return PREFIX + infix;
        }

        /** The prefix after {@code kafka.}: {@code consumer.} say. */
        public String infix() {
            return infix;
        }
    }

    public KafkaSettings {
        all = Map.copyOf(all);
    }

    public static KafkaSettings from(Config config) {
        return new KafkaSettings(config.withPrefix(PREFIX));
    }

    /** The shared settings, without any client's overrides: what every client has in common. */
    public Map<String, Object> shared() {
        Map<String, Object> out = new TreeMap<>(all);
        out.keySet().removeIf(KafkaSettings::isClientOverride);
        return out;
    }

    /** The settings of one Kafka client: the shared {@code kafka.*}, then its own {@code kafka.<client>.*} on top. */
    public Map<String, Object> client(Client client) {
        Map<String, Object> out = shared();
        all.forEach((k, v) -> {
            if (k.startsWith(client.infix)) {
                out.put(k.substring(client.infix.length()), v);
            }
        });
        return out;
    }

    static boolean isClientOverride(String kafkaKey) {
        for (Client c : Client.values()) {
            if (kafkaKey.startsWith(c.infix)) {
                return true;
            }
        }
        return false;
    }

    /** Never the values: a kafka.* key may hold a password or a JAAS config. */
    @Override
    public String toString() {
        return "KafkaSettings" + all.keySet();
    }
}
