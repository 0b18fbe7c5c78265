package io.queen.timers.bridge;

import io.queen.timers.core.config.CommonSettings;
import io.queen.timers.core.config.Config;
import io.queen.timers.core.config.ConfigException;
import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;

/**
 * Which tenant and producer sub each command topic stands for (docs/architecture.md#tenants): from configuration,
 * never from a command. Kafka ACLs on the topic decide who may write for that tenant.
 */
public record TopicRoutes(Map<String, Route> routes) {

    /** {@code producerSub} may be null: no producer sub is recorded. */
    public record Route(UUID tenant, String producerSub) {}

    public TopicRoutes {
        routes = Map.copyOf(routes);
    }

    /**
     * The routes of {@code command.topics}, failing closed: every key under {@code topic.} must be
     * {@code topic.<a command topic>.tenant} or {@code .producer.sub} (a typo is a start-up error naming
     * the key, never a mapping silently not applied), and with more than one command topic each must
     * name its tenant unless {@code bridge.default.tenant.allowed} says the default tenant is meant.
     * The list settings {@code command.topic.tenants} / {@code command.topic.producer.subs}
     * ({@code <topic>=<value>,...}) are the same mappings in a form the environment can carry.
     */
    public static TopicRoutes from(Config config) {
        List<String> topics = config.list(BridgeSettings.COMMAND_TOPICS);
        Map<String, String> tenants = new HashMap<>();
        Map<String, String> subs = new HashMap<>();
        pairs(config, BridgeSettings.TOPIC_TENANTS, topics, tenants);
        pairs(config, BridgeSettings.TOPIC_PRODUCER_SUBS, topics, subs);
        config.withPrefix(PREFIX).forEach((k, v) -> {
            String name = PREFIX + k;
            Map<String, String> into = k.endsWith(TENANT) ? tenants : k.endsWith(PRODUCER_SUB) ? subs : null;
            if (into == null) {
                throw new ConfigException("unknown setting " + name + ": a command topic takes only " + PREFIX + "<topic>" + TENANT
                        + " and " + PREFIX + "<topic>" + PRODUCER_SUB);
            }
            String topic = k.substring(0, k.length() - (into == tenants ? TENANT : PRODUCER_SUB).length());
            put(into, topic, String.valueOf(v), name, topics);
        });
        boolean defaultAllowed = topics.size() == 1 || config.bool(BridgeSettings.DEFAULT_TENANT_ALLOWED);
        Map<String, Route> routes = new HashMap<>();
        for (String topic : topics) {
            String tenantText = tenants.get(topic);
            if (tenantText == null && !defaultAllowed) {
                throw new ConfigException("command topic " + topic + " names no tenant: set " + PREFIX + topic + TENANT + " (or "
                        + BridgeSettings.TOPIC_TENANTS + "), or " + BridgeSettings.DEFAULT_TENANT_ALLOWED
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
            routes.put(topic, new Route(tenant, producerSub));
        }
        return new TopicRoutes(routes);
    }

    private static final String PREFIX = "topic.";
    private static final String TENANT = ".tenant";
    private static final String PRODUCER_SUB = ".producer.sub";

    /** {@code <topic>=<value>} items of a list setting into {@code into}. */
    private static void pairs(Config config, String key, List<String> topics, Map<String, String> into) {
        for (String item : config.list(key)) {
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
                    + BridgeSettings.COMMAND_TOPICS + " " + topics);
        }
        String before = into.put(topic, value.trim());
        if (before != null && !before.equals(value.trim())) {
            throw new ConfigException("setting " + setting + " maps topic " + topic + " to '" + value.trim()
                    + "', another setting to '" + before + "'");
        }
    }

    public Route route(String topic) {
        Route r = routes.get(topic);
        if (r == null) {
            throw new IllegalStateException("record from topic " + topic + ", which is not in " + BridgeSettings.COMMAND_TOPICS);
        }
        return r;
    }
}
