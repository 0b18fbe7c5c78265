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
            Object sub = perTopic.get(topic + ".producer.sub");
            String producerSub = sub == null || String.valueOf(sub).isBlank() ? null : String.valueOf(sub).trim();
            if (producerSub != null && producerSub.getBytes(StandardCharsets.UTF_8).length > 65535) {
                throw new ConfigException("setting topic." + topic + ".producer.sub is longer than 65535 UTF-8 bytes");
            }
            routes.put(topic, new Route(tenant, producerSub));
        }
        return new TopicRoutes(routes);
    }

    public Route route(String topic) {
        Route r = routes.get(topic);
        if (r == null) {
            throw new IllegalStateException("record from topic " + topic + ", which is not in " + BridgeSettings.COMMAND_TOPICS);
        }
        return r;
    }
}
