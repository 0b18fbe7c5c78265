package io.queen.timers.core.config;

import java.io.IOException;
import java.io.Reader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Locale;
import java.util.Map;
import java.util.Properties;

/**
 * Reads settings: the properties file (if any), then the environment on top. A declared key is
 * overridden by its own variable ({@link ConfigDef.Key#env()}); any other {@code QUEEN_KAFKA_X_Y}
 * becomes {@code kafka.x.y} (Kafka client keys use dots only, so '_' maps back to '.' without
 * ambiguity), which is how an operator sets SASL or TLS for the clients from the environment.
 */
public final class ConfigLoader {

    static final String KAFKA_ENV_PREFIX = "QUEEN_KAFKA_";

    private ConfigLoader() {}

    public static Config load(ConfigDef def, Path file, Map<String, String> env) {
        Map<String, String> raw = new HashMap<>();
        if (file != null) {
            if (!Files.isReadable(file)) {
                throw new ConfigException("config file " + file + " does not exist or is not readable");
            }
            Properties p = new Properties();
            try (Reader r = Files.newBufferedReader(file, StandardCharsets.UTF_8)) {
                p.load(r);
            } catch (IOException e) {
                throw new ConfigException("cannot read config file " + file + ": " + e.getMessage());
            }
            p.stringPropertyNames().forEach(k -> raw.put(k, p.getProperty(k)));
        }
        Map<String, String> declaredEnv = new HashMap<>();
        for (ConfigDef.Key k : def.keys()) {
            declaredEnv.put(k.env(), k.name());
            String v = env.get(k.env());
            if (v != null) {
                raw.put(k.name(), v);
            }
        }
        env.forEach((name, value) -> {
            if (name.startsWith(KAFKA_ENV_PREFIX) && !declaredEnv.containsKey(name)) {
                String key = name.substring(KAFKA_ENV_PREFIX.length()).toLowerCase(Locale.ROOT).replace('_', '.');
                raw.put(Config.KAFKA_PREFIX + key, value);
            }
        });
        return def.parse(raw);
    }

    /** The usual call: {@code --config FILE} (or null) and the process environment. */
    public static Config load(ConfigDef def, Path file) {
        return load(def, file, System.getenv());
    }
}
