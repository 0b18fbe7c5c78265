package io.queen.timers.routes;

import io.queen.timers.core.config.CommonSettings;
import io.queen.timers.core.config.ConfigDef;
import io.queen.timers.core.config.ConfigException;
import io.queen.timers.routes.auth.TokenVerifier;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;

/**
 * Which tenant and producer sub each command topic stands for (docs/architecture.md#tenants): from configuration,
 * never from a command. Kafka ACLs on the topic decide who may write for that tenant; with
 * {@code topic.<name>.auth=jwt} every command must also carry a signed token, and the producer sub
 * is the token's {@code sub} (docs/security.md#producer-identity).
 */
public record TopicRoutes(Map<String, Route> routes) {

    /** Per-topic settings (undeclared keys under {@code topic.<name>.}, like tenant and producer.sub). */
    static final String AUTH = ".auth";
    static final String AUTH_KEYS_FILE = ".auth.keys.file";
    static final String AUTH_AUDIENCE = ".auth.audience";
    static final String AUTH_ISSUER = ".auth.issuer";
    static final String AUTH_CLOCK_SKEW = ".auth.clock.skew";
    static final String AUTH_ALLOW_HS256 = ".auth.allow.hs256";
    static final String AUTH_MAX_TOKEN_LIFETIME = ".auth.max.token.lifetime";
    static final String AUTH_TENANT_CLAIM = ".auth.tenant.claim";
    /** Longest first, so that {@code .auth} does not claim {@code .auth.keys.file}. */
    static final List<String> AUTH_KEYS = List.of(AUTH_MAX_TOKEN_LIFETIME, AUTH_TENANT_CLAIM, AUTH_KEYS_FILE, AUTH_ALLOW_HS256,
            AUTH_CLOCK_SKEW, AUTH_AUDIENCE, AUTH_ISSUER, AUTH);
    static final Duration DEFAULT_SKEW = Duration.ofSeconds(60);
    static final Duration MAX_SKEW = Duration.ofMinutes(10);
    /** A stolen token replays until its exp: an hour bounds that for tokens whose issuer forgot to. */
    static final Duration DEFAULT_MAX_TOKEN_LIFETIME = Duration.ofHours(1);
    static final Duration MAX_MAX_TOKEN_LIFETIME = Duration.ofDays(7);

    /**
     * {@code producerSub} may be null: no producer sub is recorded. {@code auth} is null when the topic
     * takes no token; otherwise the producer sub comes from the token and {@code producerSub} is null.
     */
    public record Route(UUID tenant, String producerSub, TokenVerifier auth) {}

    public TopicRoutes {
        routes = Map.copyOf(routes);
    }

    /**
     * The settings the routes are made of, as {@link RouteSettings#from} reads them.
     *
     * @param topics         {@code command.topics}
     * @param tenantPairs    {@code command.topic.tenants}, {@code <topic>=<tenant>} items
     * @param subPairs       {@code command.topic.producer.subs}, {@code <topic>=<sub>} items
     * @param perTopic       every undeclared key under {@code topic.}, prefix removed
     * @param defaultAllowed {@code bridge.default.tenant.allowed}
     * @param adminClaim     {@code auth.admin.claim}
     */
    public record Declared(List<String> topics, List<String> tenantPairs, List<String> subPairs, Map<String, Object> perTopic,
            boolean defaultAllowed, String adminClaim) {}

    /**
     * The routes of {@code command.topics}, failing closed: every key under {@code topic.} must be
     * {@code topic.<a command topic>.tenant} or {@code .producer.sub} (a typo is a start-up error naming
     * the key, never a mapping silently not applied), and with more than one command topic each must
     * name its tenant unless {@code bridge.default.tenant.allowed} says the default tenant is meant.
     * The list settings {@code command.topic.tenants} / {@code command.topic.producer.subs}
     * ({@code <topic>=<value>,...}) are the same mappings in a form the environment can carry.
     */
    public static TopicRoutes from(Declared config) {
        List<String> topics = config.topics();
        Map<String, String> tenants = new HashMap<>();
        Map<String, String> subs = new HashMap<>();
        pairs(config.tenantPairs(), RouteSettings.TOPIC_TENANTS, topics, tenants);
        pairs(config.subPairs(), RouteSettings.TOPIC_PRODUCER_SUBS, topics, subs);
        Map<String, Object> perTopic = new HashMap<>();
        config.perTopic().forEach((k, v) -> {
            String name = PREFIX + k;
            String authKey = AUTH_KEYS.stream().filter(k::endsWith).findFirst().orElse(null);
            if (authKey != null) {
                String topic = k.substring(0, k.length() - authKey.length());
                if (!topics.contains(topic)) {
                    throw new ConfigException("setting " + name + " names topic '" + topic + "', which is not in "
                            + RouteSettings.COMMAND_TOPICS + " " + topics);
                }
                perTopic.put(k, v);
                return;
            }
            Map<String, String> into = k.endsWith(TENANT) ? tenants : k.endsWith(PRODUCER_SUB) ? subs : null;
            if (into == null) {
                throw new ConfigException("unknown setting " + name + ": a command topic takes only " + PREFIX + "<topic>" + TENANT
                        + ", " + PREFIX + "<topic>" + PRODUCER_SUB + " and " + PREFIX + "<topic>" + AUTH + "*" + " " + AUTH_KEYS);
            }
            String topic = k.substring(0, k.length() - (into == tenants ? TENANT : PRODUCER_SUB).length());
            put(into, topic, String.valueOf(v), name, topics);
        });
        boolean defaultAllowed = topics.size() == 1 || config.defaultAllowed();
        Map<String, Route> routes = new HashMap<>();
        for (String topic : topics) {
            String tenantText = tenants.get(topic);
            if (tenantText == null && !defaultAllowed) {
                throw new ConfigException("command topic " + topic + " names no tenant: set " + PREFIX + topic + TENANT + " (or "
                        + RouteSettings.TOPIC_TENANTS + "), or " + RouteSettings.DEFAULT_TENANT_ALLOWED
                        + "=true if every topic without one is meant for the default tenant");
            }
            UUID tenant;
            try {
                tenant = UUID.fromString((tenantText == null ? CommonSettings.DEFAULT_TENANT : tenantText).trim());
            } catch (IllegalArgumentException e) {
                throw new ConfigException("setting " + PREFIX + topic + TENANT + " = '" + tenantText + "' is not a tenant UUID");
            }
            String sub = subs.get(topic);
            String producerSub = sub == null || sub.isBlank() ? null : sub.trim();
            if (producerSub != null && producerSub.getBytes(StandardCharsets.UTF_8).length > 65535) {
                throw new ConfigException("setting " + PREFIX + topic + PRODUCER_SUB + " is longer than 65535 UTF-8 bytes");
            }
            TokenVerifier auth = auth(perTopic, topic, config.adminClaim().trim());
            if (auth != null && producerSub != null) {
                throw new ConfigException("settings topic." + topic + ".auth=jwt and topic." + topic + ".producer.sub contradict each other: "
                        + "with a token, the producer sub is the token's sub; remove topic." + topic + ".producer.sub");
            }
            routes.put(topic, new Route(tenant, producerSub, auth));
        }
        return new TopicRoutes(routes);
    }

    /** Where each command topic's own keys live: {@code topic.<name>.tenant}, {@code .producer.sub}, {@code .auth*}. */
    public static final String PREFIX = "topic.";
    private static final String TENANT = ".tenant";
    private static final String PRODUCER_SUB = ".producer.sub";

    /** {@code <topic>=<value>} items of a list setting into {@code into}. */
    private static void pairs(List<String> items, String key, List<String> topics, Map<String, String> into) {
        for (String item : items) {
            int eq = item.lastIndexOf('=');
            if (eq <= 0) {
                throw new ConfigException("setting " + key + ": '" + item + "' is not <topic>=<value>");
            }
            put(into, item.substring(0, eq).trim(), item.substring(eq + 1).trim(), key, topics);
        }
    }

    private static void put(Map<String, String> into, String topic, String value, String setting, List<String> topics) {
        if (!topics.contains(topic)) {
            throw new ConfigException("setting " + setting + " names topic '" + topic + "', which is not in "
                    + RouteSettings.COMMAND_TOPICS + " " + topics);
        }
        String before = into.put(topic, value.trim());
        if (before != null && !before.equals(value.trim())) {
            throw new ConfigException("setting " + setting + " maps topic " + topic + " to '" + value.trim()
                    + "', another setting to '" + before + "'");
        }
    }

    private static TokenVerifier auth(Map<String, Object> perTopic, String topic, String adminClaim) {
        String mode = text(perTopic, topic + AUTH);
        if (mode == null || mode.equalsIgnoreCase("none")) {
            return null;
        }
        if (!mode.equalsIgnoreCase("jwt")) {
            throw new ConfigException("setting topic." + topic + AUTH + " = '" + mode + "' is not one of [none, jwt]");
        }
        String file = required(perTopic, topic, AUTH_KEYS_FILE, "a JWKS file, or PEM public keys");
        // without both, a token the same key signed for any other service or purpose would be accepted here
        String audience = required(perTopic, topic, AUTH_AUDIENCE, "the aud every token of this topic must contain");
        String issuer = required(perTopic, topic, AUTH_ISSUER, "the iss every token of this topic must carry");
        Duration skew = duration(perTopic, topic, AUTH_CLOCK_SKEW, DEFAULT_SKEW, Duration.ZERO, MAX_SKEW);
        Duration maxLifetime = duration(perTopic, topic, AUTH_MAX_TOKEN_LIFETIME, DEFAULT_MAX_TOKEN_LIFETIME, Duration.ofSeconds(1),
                MAX_MAX_TOKEN_LIFETIME);
        String claimText = text(perTopic, topic + AUTH_TENANT_CLAIM);
        TokenVerifier.TenantClaim tenantClaim;
        try {
            tenantClaim = claimText == null ? TokenVerifier.TenantClaim.REQUIRED
                    : TokenVerifier.TenantClaim.valueOf(claimText.toUpperCase(java.util.Locale.ROOT));
        } catch (IllegalArgumentException e) {
            throw new ConfigException("setting topic." + topic + AUTH_TENANT_CLAIM + " = '" + claimText + "' is not one of [required, optional]");
        }
        String hs = text(perTopic, topic + AUTH_ALLOW_HS256);
        if (hs != null && !hs.equalsIgnoreCase("true") && !hs.equalsIgnoreCase("false")) {
            throw new ConfigException("setting topic." + topic + AUTH_ALLOW_HS256 + " = '" + hs + "' is not true or false");
        }
        try {
            return new TokenVerifier(new TokenVerifier.Rules(topic, new TokenVerifier.Keys(Path.of(file), "true".equalsIgnoreCase(hs)),
                    new TokenVerifier.Claims(audience, issuer, tenantClaim, adminClaim.isEmpty() ? null : adminClaim),
                    new TokenVerifier.Times(skew, maxLifetime)));
        } catch (IllegalArgumentException e) {
            throw new ConfigException(e.getMessage());
        }
    }

    private static String required(Map<String, Object> perTopic, String topic, String suffix, String what) {
        String v = text(perTopic, topic + suffix);
        if (v == null) {
            throw new ConfigException("setting topic." + topic + AUTH + "=jwt needs topic." + topic + suffix + " (" + what + ")");
        }
        return v;
    }

    private static Duration duration(Map<String, Object> perTopic, String topic, String suffix, Duration dflt, Duration min, Duration max) {
        String t = text(perTopic, topic + suffix);
        if (t == null) {
            return dflt;
        }
        Duration d;
        try {
            d = ConfigDef.parseDuration(t);
        } catch (RuntimeException e) {
            throw new ConfigException("setting topic." + topic + suffix + " = '" + t + "' is not a duration: " + e.getMessage());
        }
        if (d.compareTo(min) < 0 || d.compareTo(max) > 0) {
            throw new ConfigException("setting topic." + topic + suffix + " = " + d + " is out of range: allowed " + min + " .. " + max);
        }
        return d;
    }

    private static String text(Map<String, Object> perTopic, String key) {
        Object v = perTopic.get(key);
        return v == null || String.valueOf(v).isBlank() ? null : String.valueOf(v).trim();
    }

    /** Re-reads every changed key file of a jwt topic (one stat each); the ingest loop calls it every cycle. */
    public void refreshKeys() {
        routes.values().stream().filter(r -> r.auth() != null).forEach(r -> r.auth().refreshKeys());
    }

    /** True when some topic checks tokens (then readiness has an {@code auth-keys} line). */
    public boolean checksTokens() {
        return routes.values().stream().anyMatch(r -> r.auth() != null);
    }

    /** Each jwt topic and its {@code auth.clock.skew}: the widest record-timestamp window its broker config may allow. */
    public Map<String, Duration> jwtSkews() {
        Map<String, Duration> out = new java.util.TreeMap<>();
        routes.forEach((topic, r) -> {
            if (r.auth() != null) {
                out.put(topic, r.auth().rules().times().skew());
            }
        });
        return out;
    }

    /** The jwt topics whose key file is broken, one line each; empty when every key file is usable. Memory only. */
    public Optional<String> keyProblems() {
        List<String> problems = routes.values().stream().filter(r -> r.auth() != null)
                .flatMap(r -> r.auth().keysProblem().stream()).sorted().toList();
        return problems.isEmpty() ? Optional.empty() : Optional.of(String.join("; ", problems));
    }

    /** The tenant of each command topic (registered in the database at start: queen.bridge_topics). */
    public Map<String, UUID> tenants() {
        Map<String, UUID> out = new java.util.TreeMap<>();
        routes.forEach((topic, r) -> out.put(topic, r.tenant()));
        return out;
    }

    public Route route(String topic) {
        Route r = routes.get(topic);
        if (r == null) {
            throw new IllegalStateException("record from topic " + topic + ", which is not in " + RouteSettings.COMMAND_TOPICS);
        }
        return r;
    }
}
