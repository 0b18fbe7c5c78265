package io.queen.timers.core.config;

import io.queen.timers.core.text.Secrets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/** Parsed, validated settings. Built by {@link ConfigDef#parse}; immutable. */
public final class Config {

    public static final String KAFKA_PREFIX = "kafka.";

    private final ConfigDef def;
    private final Map<String, Object> values;
    private final Map<String, String> raw;

    Config(ConfigDef def, Map<String, Object> values, Map<String, String> raw) {
        this.def = def;
        this.values = values;
        this.raw = raw;
    }

    public String string(String key) {
        return (String) get(key);
    }

    public int intValue(String key) {
        return (Integer) get(key);
    }

    public long longValue(String key) {
        return (Long) get(key);
    }

    public boolean bool(String key) {
        return (Boolean) get(key);
    }

    public Duration duration(String key) {
        return (Duration) get(key);
    }

    @SuppressWarnings("unchecked")
    public List<String> list(String key) {
        return (List<String>) get(key);
    }

    /**
     * The shared {@code kafka.*} settings with the prefix removed, without any client's overrides
     * ({@link KafkaSettings.Client}): what every client has in common (bootstrap servers, security).
     */
    public Map<String, Object> kafka() {
        return KafkaSettings.from(this).shared();
    }

    /** The settings of one Kafka client: the shared {@code kafka.*}, then its own {@code kafka.<client>.*} on top. */
    public Map<String, Object> kafka(KafkaSettings.Client client) {
        return KafkaSettings.from(this).client(client);
    }

    /** Undeclared keys under {@code prefix} (per-topic settings, for example), prefix removed. */
    public Map<String, Object> withPrefix(String prefix) {
        Map<String, Object> out = new TreeMap<>();
        raw.forEach((k, v) -> {
            if (k.startsWith(prefix)) {
                out.put(k.substring(prefix.length()), v);
            }
        });
        return out;
    }

    public ConfigDef definition() {
        return def;
    }

    private Object get(String key) {
        if (!values.containsKey(key)) {
            throw new IllegalArgumentException("setting not defined: " + key);
        }
        return values.get(key);
    }

    /**
     * Values for a log line, secrets masked (Secrets): PASSWORD settings, a password inside any value
     * (jdbc.url's password=), and every kafka.* key naming a password, secret, key, token or JAAS config.
     */
    @Override
    public String toString() {
        StringBuilder sb = new StringBuilder("{");
        values.forEach((k, v) -> {
            boolean secret = def.key(k).type() == ConfigDef.Type.PASSWORD;
            sb.append(k).append('=').append(secret ? Secrets.MASK : Secrets.mask(String.valueOf(v))).append(", ");
        });
        withPrefix(KAFKA_PREFIX).forEach((k, v) -> { // the shared keys and every client's overrides
            if (values.containsKey(KAFKA_PREFIX + k)) {
                return; // a declared kafka.* key (bootstrap servers) is already printed above
            }
            sb.append(KAFKA_PREFIX).append(k).append('=')
                .append(Secrets.isSecretSetting(k) ? Secrets.MASK : Secrets.mask(String.valueOf(v))).append(", ");
        });
        if (sb.length() > 1) {
            sb.setLength(sb.length() - 2);
        }
        return sb.append('}').toString();
    }
}
