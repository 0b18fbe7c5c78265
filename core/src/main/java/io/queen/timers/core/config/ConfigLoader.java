package io.queen.timers.core.config;

import java.io.IOException;
import java.io.Reader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import io.queen.timers.core.text.Secrets;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Locale;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.producer.ProducerConfig;

/**
 * Reads settings: the properties file (if any), then the environment on top. A declared key is
 * overridden by its own variable ({@link ConfigDef.Key#env()}); any other {@code QUEEN_KAFKA_X_Y}
 * becomes {@code kafka.x.y} (Kafka client keys use dots only, so '_' maps back to '.' without
 * ambiguity), which is how an operator sets SASL or TLS for the clients from the environment.
 *
 * <p>A secret may instead be read from a file named by the same variable with {@code _FILE} appended
 * ({@code QUEEN_JDBC_PASSWORD_FILE=/run/secrets/db}, the convention of Docker and Kubernetes secrets): every
 * {@link ConfigDef.Type#PASSWORD} key, and every {@code kafka.*} key that {@link Secrets#isSecretSetting}
 * calls a secret ({@code QUEEN_KAFKA_SASL_JAAS_CONFIG_FILE}, {@code QUEEN_KAFKA_PRODUCER_SSL_KEYSTORE_KEY_FILE}).
 * So a password need not sit in the environment, where {@code /proc/<pid>/environ}, a crash report or
 * {@code docker inspect} shows it. The file's trailing line breaks are dropped (an editor's or
 * {@code echo}'s newline is not part of a password); the content is never logged. Setting both the
 * variable (not empty) and its {@code _FILE} form is an error: which one wins would be a guess.
 */
public final class ConfigLoader {

    static final String KAFKA_ENV_PREFIX = "QUEEN_KAFKA_";
    static final String FILE_SUFFIX = "_FILE";

    /**
     * Kafka client settings whose own name ends in {@code .file} (an OAuth assertion file, say): their
     * variable stays a pass-through setting, never a secret read from a file.
     */
    private static final Set<String> KAFKA_CLIENT_KEYS = kafkaClientKeys();

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
            if (k.type() == ConfigDef.Type.PASSWORD) {
                declaredEnv.put(k.env() + FILE_SUFFIX, k.name());
                String secretFile = env.get(k.env() + FILE_SUFFIX);
                if (secretFile != null) {
                    raw.put(k.name(), secretFromFile(k.env(), secretFile, v != null && !v.isEmpty()));
                }
            }
        }
        env.forEach((name, value) -> {
            if (name.startsWith(KAFKA_ENV_PREFIX) && !declaredEnv.containsKey(name)) {
                String key = kafkaKey(name);
                String secret = name.endsWith(FILE_SUFFIX) ? kafkaKey(name.substring(0, name.length() - FILE_SUFFIX.length())) : null;
                if (secret != null && Secrets.isSecretSetting(secret) && !KAFKA_CLIENT_KEYS.contains(clientKey(key))) {
                    String plain = name.substring(0, name.length() - FILE_SUFFIX.length());
                    String inline = env.get(plain);
                    raw.put(Config.KAFKA_PREFIX + secret, secretFromFile(plain, value, inline != null && !inline.isEmpty()));
                } else {
                    raw.put(Config.KAFKA_PREFIX + key, value);
                }
            }
        });
        return def.parse(raw);
    }

    /** {@code QUEEN_KAFKA_SASL_JAAS_CONFIG} → {@code sasl.jaas.config} (after the {@code kafka.} prefix). */
    private static String kafkaKey(String envName) {
        return envName.substring(KAFKA_ENV_PREFIX.length()).toLowerCase(Locale.ROOT).replace('_', '.');
    }

    /** {@code consumer.sasl.jaas.config} → {@code sasl.jaas.config}: the Kafka client's name of an override. */
    private static String clientKey(String key) {
        for (KafkaSettings.Client c : KafkaSettings.Client.values()) {
            String infix = c.infix();
            if (key.startsWith(infix)) {
                return key.substring(infix.length());
            }
        }
        return key;
    }

    /**
     * The secret in {@code path} (named by {@code variable + "_FILE"}), trailing CR/LF dropped. Errors name the
     * variable and the path, never any content.
     */
    static String secretFromFile(String variable, String path, boolean variableAlsoSet) {
        if (variableAlsoSet) {
            throw new ConfigException("both " + variable + " and " + variable + FILE_SUFFIX + " are set: set one");
        }
        String text;
        try {
            text = Files.readString(Path.of(path), StandardCharsets.UTF_8);
        } catch (IOException | RuntimeException e) {
            throw new ConfigException(variable + FILE_SUFFIX + " names " + path + ", which cannot be read ("
                    + e.getClass().getSimpleName() + ")");
        }
        int end = text.length();
        while (end > 0 && (text.charAt(end - 1) == '\n' || text.charAt(end - 1) == '\r')) {
            end--;
        }
        return text.substring(0, end);
    }

    private static Set<String> kafkaClientKeys() {
        Set<String> names = new HashSet<>(ConsumerConfig.configNames());
        names.addAll(ProducerConfig.configNames());
        names.addAll(AdminClientConfig.configNames());
        return names;
    }

    /** The usual call: {@code --config FILE} (or null) and the process environment. */
    public static Config load(ConfigDef def, Path file) {
        return load(def, file, System.getenv());
    }
}
