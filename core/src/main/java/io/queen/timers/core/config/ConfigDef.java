package io.queen.timers.core.config;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * The settings a process understands, in the manner of Kafka's {@code ConfigDef}: every key has a
 * name, a type, a default (null = required), a validator, a documentation string and the
 * environment variable that overrides it. {@link #parse(Map)} checks them all at start, so a bad
 * setting is one line naming the key and the allowed range, never a failure an hour later.
 *
 * <p>Keys under {@code kafka.} are not declared here: they pass through to the Kafka clients
 * ({@link Config#kafka()}).
 */
public final class ConfigDef {

    public enum Type { STRING, INT, LONG, BOOLEAN, DURATION, LIST, PASSWORD }

    /** Checks one parsed value; throws {@link ConfigException} naming the key. */
    @FunctionalInterface
    public interface Validator {
        void ensureValid(String key, Object value);
    }

    public record Key(String name, Type type, String defaultValue, Validator validator, String env, String doc) {
        public boolean required() {
            return defaultValue == null;
        }
    }

    private final Map<String, Key> keys = new LinkedHashMap<>();

    /** Declares a key whose environment variable is derived: {@code QUEEN_} + upper-case name, '.' and '-' as '_'. */
    public ConfigDef define(String name, Type type, String defaultValue, Validator validator, String doc) {
        return define(name, type, defaultValue, validator, envName(name), doc);
    }

    public ConfigDef define(String name, Type type, String defaultValue, Validator validator, String env, String doc) {
        if (keys.containsKey(name)) {
            throw new IllegalArgumentException("setting defined twice: " + name);
        }
        keys.put(name, new Key(name, type, defaultValue, validator, env, doc));
        return this;
    }

    /** Adds every key of {@code other} (for example the shared keys of {@link CommonSettings}). */
    public ConfigDef include(ConfigDef other) {
        other.keys.values().forEach(k -> define(k.name(), k.type(), k.defaultValue(), k.validator(), k.env(), k.doc()));
        return this;
    }

    /** A definition with only the named keys of this one (a tool that needs the database but not Kafka, say). */
    public ConfigDef select(String... names) {
        ConfigDef out = new ConfigDef();
        for (String n : names) {
            Key k = keys.get(n);
            if (k == null) {
                throw new IllegalArgumentException("setting not defined: " + n);
            }
            out.define(k.name(), k.type(), k.defaultValue(), k.validator(), k.env(), k.doc());
        }
        return out;
    }

    public Collection<Key> keys() {
        return Collections.unmodifiableCollection(keys.values());
    }

    public Key key(String name) {
        return keys.get(name);
    }

    /** Parses and validates {@code raw} (file values already overridden by the environment). */
    public Config parse(Map<String, String> raw) {
        Map<String, Object> values = new LinkedHashMap<>();
        for (Key k : keys.values()) {
            String text = raw.getOrDefault(k.name(), k.defaultValue());
            if (text == null) {
                throw new ConfigException("missing required setting " + k.name() + " (env " + k.env() + "): " + k.doc());
            }
            Object value = convert(k, text.trim());
            if (k.validator() != null) {
                k.validator().ensureValid(k.name(), value);
            }
            values.put(k.name(), value);
        }
        return new Config(this, values, Map.copyOf(raw));
    }

    static String envName(String key) {
        return "QUEEN_" + key.toUpperCase(Locale.ROOT).replace('.', '_').replace('-', '_');
    }

    private static Object convert(Key k, String text) {
        try {
            return switch (k.type()) {
                case STRING, PASSWORD -> text;
                case INT -> Integer.parseInt(text);
                case LONG -> Long.parseLong(text);
                case BOOLEAN -> switch (text.toLowerCase(Locale.ROOT)) {
                    case "true" -> Boolean.TRUE;
                    case "false" -> Boolean.FALSE;
                    default -> throw new IllegalArgumentException("not true or false");
                };
                case DURATION -> parseDuration(text);
                case LIST -> text.isEmpty() ? List.of()
                        : Arrays.stream(text.split(",")).map(String::trim).filter(s -> !s.isEmpty()).toList();
            };
        } catch (RuntimeException e) {
            throw new ConfigException("setting " + k.name() + " = '" + (k.type() == Type.PASSWORD ? "***" : text)
                    + "' is not a valid " + k.type().name().toLowerCase(Locale.ROOT) + ": " + e.getMessage());
        }
    }

    /** "250ms", "30s", "10m", "2h", "7d", or ISO-8601 ("PT30S"). */
    public static Duration parseDuration(String text) {
        if (text.startsWith("P") || text.startsWith("p")) {
            return Duration.parse(text);
        }
        String t = text.toLowerCase(Locale.ROOT);
        int i = 0;
        while (i < t.length() && Character.isDigit(t.charAt(i))) {
            i++;
        }
        if (i == 0) {
            throw new IllegalArgumentException("expected a number followed by ms, s, m, h or d");
        }
        long n = Long.parseLong(t.substring(0, i));
        return switch (t.substring(i)) {
            case "ms" -> Duration.ofMillis(n);
            case "s" -> Duration.ofSeconds(n);
            case "m" -> Duration.ofMinutes(n);
            case "h" -> Duration.ofHours(n);
            case "d" -> Duration.ofDays(n);
            default -> throw new IllegalArgumentException("unit must be ms, s, m, h or d");
        };
    }

    // ---- validators ------------------------------------------------------------------------

    public static Validator atLeast(long min) {
        return between(min, Long.MAX_VALUE);
    }

    public static Validator between(long min, long max) {
        return (key, value) -> {
            long v = ((Number) value).longValue();
            if (v < min || v > max) {
                throw new ConfigException("setting " + key + " = " + v + " is out of range: allowed "
                        + (max == Long.MAX_VALUE ? ">= " + min : min + " .. " + max));
            }
        };
    }

    public static Validator durationBetween(Duration min, Duration max) {
        return (key, value) -> {
            Duration d = (Duration) value;
            if (d.compareTo(min) < 0 || d.compareTo(max) > 0) {
                throw new ConfigException("setting " + key + " = " + d + " is out of range: allowed " + min + " .. " + max);
            }
        };
    }

    public static Validator nonEmpty() {
        return (key, value) -> {
            boolean empty = value instanceof String s ? s.isBlank() : value instanceof List<?> l && l.isEmpty();
            if (empty) {
                throw new ConfigException("setting " + key + " must not be empty");
            }
        };
    }

    public static Validator oneOf(String... allowed) {
        List<String> list = new ArrayList<>(List.of(allowed));
        return (key, value) -> {
            if (!list.contains(value)) {
                throw new ConfigException("setting " + key + " = '" + value + "' is not one of " + list);
            }
        };
    }
}
