package io.queen.timers.bridge;

import io.queen.timers.bridge.auth.TokenVerifier;
import io.queen.timers.core.config.CommonSettings;
import io.queen.timers.core.config.Config;
import io.queen.timers.core.config.ConfigDef;
import io.queen.timers.core.config.ConfigException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;

/**
 * Which tenant and producer sub each command topic stands for (DESIGN §3.3): from configuration,
 * never from a command. Kafka ACLs on the topic decide who may write for that tenant; with
 * {@code topic.<name>.auth=jwt} every command must also carry a signed token, and the producer sub
 * is the token's {@code sub} (README "Producer identity").
 */
public record TopicRoutes(Map<String, Route> routes) {

    /** Per-topic settings (undeclared keys under {@code topic.<name>.}, like tenant and producer.sub). */
    static final String AUTH = ".auth";
    static final String AUTH_KEYS_FILE = ".auth.keys.file";
    static final String AUTH_AUDIENCE = ".auth.audience";
    static final String AUTH_ISSUER = ".auth.issuer";
    static final String AUTH_CLOCK_SKEW = ".auth.clock.skew";
    static final String AUTH_ALLOW_HS256 = ".auth.allow.hs256";
    static final Duration DEFAULT_SKEW = Duration.ofSeconds(60);
    static final Duration MAX_SKEW = Duration.ofMinutes(10);

    /**
     * {@code producerSub} may be null: no producer sub is recorded. {@code auth} is null when the topic
     * takes no token; otherwise the producer sub comes from the token and {@code producerSub} is null.
     */
    public record Route(UUID tenant, String producerSub, TokenVerifier auth) {}

    public TopicRoutes {
        routes = Map.copyOf(routes);
    }

    public static TopicRoutes from(Config config) {
        List<String> topics = config.list(BridgeSettings.COMMAND_TOPICS);
        Map<String, Object> perTopic = config.withPrefix("topic.");
        Map<String, Route> routes = new HashMap<>();
        for (String topic : topics) {
            Object tenantText = perTopic.getOrDefault(topic + ".tenant", CommonSettings.DEFAULT_TENANT);
            UUID tenant;
            try {
                tenant = UUID.fromString(String.valueOf(tenantText).trim());
            } catch (IllegalArgumentException e) {
                throw new ConfigException("setting topic." + topic + ".tenant = '" + tenantText + "' is not a tenant UUID");
            }
            String producerSub = text(perTopic, topic + ".producer.sub");
            if (producerSub != null && producerSub.getBytes(StandardCharsets.UTF_8).length > 65535) {
                throw new ConfigException("setting topic." + topic + ".producer.sub is longer than 65535 UTF-8 bytes");
            }
            TokenVerifier auth = auth(perTopic, topic);
            if (auth != null && producerSub != null) {
                throw new ConfigException("settings topic." + topic + ".auth=jwt and topic." + topic + ".producer.sub contradict each other: "
                        + "with a token, the producer sub is the token's sub; remove topic." + topic + ".producer.sub");
            }
            routes.put(topic, new Route(tenant, producerSub, auth));
        }
        return new TopicRoutes(routes);
    }

    private static TokenVerifier auth(Map<String, Object> perTopic, String topic) {
        String mode = text(perTopic, topic + AUTH);
        if (mode == null || mode.equalsIgnoreCase("none")) {
            return null;
        }
        if (!mode.equalsIgnoreCase("jwt")) {
            throw new ConfigException("setting topic." + topic + AUTH + " = '" + mode + "' is not one of [none, jwt]");
        }
        String file = text(perTopic, topic + AUTH_KEYS_FILE);
        if (file == null) {
            throw new ConfigException("setting topic." + topic + AUTH + "=jwt needs topic." + topic + AUTH_KEYS_FILE
                    + " (a JWKS file, or PEM public keys)");
        }
        Duration skew = DEFAULT_SKEW;
        String skewText = text(perTopic, topic + AUTH_CLOCK_SKEW);
        if (skewText != null) {
            try {
                skew = ConfigDef.parseDuration(skewText);
            } catch (RuntimeException e) {
                throw new ConfigException("setting topic." + topic + AUTH_CLOCK_SKEW + " = '" + skewText + "' is not a duration: " + e.getMessage());
            }
            if (skew.isNegative() || skew.compareTo(MAX_SKEW) > 0) {
                throw new ConfigException("setting topic." + topic + AUTH_CLOCK_SKEW + " = " + skew + " is out of range: allowed PT0S .. " + MAX_SKEW);
            }
        }
        String hs = text(perTopic, topic + AUTH_ALLOW_HS256);
        if (hs != null && !hs.equalsIgnoreCase("true") && !hs.equalsIgnoreCase("false")) {
            throw new ConfigException("setting topic." + topic + AUTH_ALLOW_HS256 + " = '" + hs + "' is not true or false");
        }
        try {
            return new TokenVerifier(new TokenVerifier.Rules(topic, Path.of(file), "true".equalsIgnoreCase(hs),
                    text(perTopic, topic + AUTH_AUDIENCE), text(perTopic, topic + AUTH_ISSUER), skew));
        } catch (IllegalArgumentException e) {
            throw new ConfigException(e.getMessage());
        }
    }

    private static String text(Map<String, Object> perTopic, String key) {
        Object v = perTopic.get(key);
        return v == null || String.valueOf(v).isBlank() ? null : String.valueOf(v).trim();
    }

    public Route route(String topic) {
        Route r = routes.get(topic);
        if (r == null) {
            throw new IllegalStateException("record from topic " + topic + ", which is not in " + BridgeSettings.COMMAND_TOPICS);
        }
        return r;
    }
}
