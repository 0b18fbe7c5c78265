package io.queen.timers.stack;

import io.queen.timers.core.config.Config;
import io.queen.timers.core.config.ConfigDef;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Properties;
import java.util.UUID;
import java.util.stream.Collectors;

/**
 * The settings of one service, written the way its settings record reads them: each declared key by the constant its
 * definition names it with ({@code BridgeSettings.GROUP_ID}, {@code CommonSettings.JDBC_POOL_SIZE}) and a value of the
 * key's type ({@link Duration} for a duration, {@code int} for an int, a list for a list), checked when it is set; the
 * keys a definition leaves open ({@code topic.<name>.*}, {@code kafka.*}) by their own methods. {@link #config()} parses
 * them with the definition, as the service itself does at start, into the {@link Config} its {@code from} reads;
 * {@link #properties()} is the same as a {@code --config} file, for a service in a process of its own.
 *
 * <p>PRICE: the value is checked against the key's type, not against the key's own range; a value out of range fails at
 * {@link #config()}, with the service's own message, as it would fail at start.
 */
public final class ServiceSettings {

    /** The prefix of the per-topic keys ({@code topic.<name>.tenant}, {@code topic.<name>.auth...}) the bridge and the API read. */
    public static final String TOPIC_PREFIX = "topic.";

    private final ConfigDef definition;
    private final Map<String, String> values = new LinkedHashMap<>();

    private ServiceSettings(ConfigDef definition) {
        this.definition = definition;
    }

    /** No setting yet: every key at its default. */
    public static ServiceSettings of(ConfigDef definition) {
        return new ServiceSettings(definition);
    }

    /** A copy, to change without changing this one. */
    public ServiceSettings copy() {
        ServiceSettings c = new ServiceSettings(definition);
        c.values.putAll(values);
        return c;
    }

    /**
     * Sets the declared {@code key} to {@code value}: a {@link String} (or {@link UUID}) for a string or password, an
     * {@link Integer} for an int, a {@link Long} or {@link Integer} for a long, a {@link Boolean}, a {@link Duration}, a
     * {@link Collection} for a list. Null removes the setting (the key is at its default again).
     */
    public ServiceSettings set(String key, Object value) {
        ConfigDef.Key k = definition.key(key);
        if (k == null) {
            throw new IllegalArgumentException("no setting " + key + " in this service's definition"
                    + (key.startsWith(TOPIC_PREFIX) ? " (a topic's key: use topic(name, key, value))"
                    : key.startsWith(Config.KAFKA_PREFIX) ? " (a Kafka client's key: use kafka(key, value))" : ""));
        }
        if (value == null) {
            values.remove(key);
            return this;
        }
        values.put(key, text(k, value));
        return this;
    }

    /**
     * Sets the declared {@code key} to {@code text} as a properties file or a command line spells it: for a value a
     * person typed (a benchmark's flag), checked by the definition at {@link #config()}.
     */
    public ServiceSettings setText(String key, String text) {
        if (definition.key(key) == null) {
            return set(key, text); // the same refusal, with its hint
        }
        values.put(key, text);
        return this;
    }

    /** {@code topic.<topic>.<key>} (the tenant, producer sub and token rules of one command topic). */
    public ServiceSettings topic(String topic, String key, Object value) {
        values.put(TOPIC_PREFIX + topic + "." + key, plain(value));
        return this;
    }

    /** {@code kafka.<key>}: a Kafka client setting every client of the service takes ({@code session.timeout.ms}, ...). */
    public ServiceSettings kafka(String key, Object value) {
        values.put(Config.KAFKA_PREFIX + key, plain(value));
        return this;
    }

    /** The text set for {@code key} (as a file would hold it), or null when it is at its default. */
    public String get(String key) {
        return values.get(key);
    }

    /** Parsed and checked by the service's definition, as the service reads its settings at start. */
    public Config config() {
        return definition.parse(values);
    }

    /** The settings as a {@code --config} file holds them (only what is set; the rest is at its default). */
    public Map<String, String> properties() {
        return Map.copyOf(values);
    }

    /** Writes {@link #properties()} to {@code file}, for {@code queen-timers <service> --config file}. */
    public Path writeTo(Path file) {
        Properties p = new Properties();
        p.putAll(values);
        try (Writer w = Files.newBufferedWriter(file, StandardCharsets.UTF_8)) {
            p.store(w, "queen-timers stack");
        } catch (IOException e) {
            throw new UncheckedIOException("cannot write " + file, e);
        }
        return file;
    }

    @Override
    public String toString() {
        return config().toString(); // secrets masked, as a service's start line prints them
    }

    private static String text(ConfigDef.Key k, Object value) {
        String expected = switch (k.type()) {
            case STRING, PASSWORD -> value instanceof String || value instanceof UUID ? null : "String";
            case INT -> value instanceof Integer ? null : "Integer";
            case LONG -> value instanceof Long || value instanceof Integer ? null : "Long";
            case BOOLEAN -> value instanceof Boolean ? null : "Boolean";
            case DURATION -> value instanceof Duration ? null : "Duration";
            case LIST -> value instanceof Collection<?> ? null : "Collection";
        };
        if (expected != null) {
            throw new IllegalArgumentException("setting " + k.name() + " takes a " + expected + ", not a " + value.getClass().getSimpleName());
        }
        return plain(value);
    }

    private static String plain(Object value) {
        if (value instanceof Duration d) {
            return d.toNanos() % 1_000_000 == 0 ? d.toMillis() + "ms" : d.toString();
        }
        if (value instanceof Collection<?> c) {
            return c.stream().map(ServiceSettings::plain).collect(Collectors.joining(","));
        }
        return String.valueOf(value);
    }
}
