package io.queen.timers.bridge;

import io.queen.timers.core.config.Config;
import io.queen.timers.core.config.ConfigDef;
import io.queen.timers.routes.RouteSettings;
import io.queen.timers.routes.TopicRoutes;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.UUID;

/**
 * Which group a bridge runs and which tenant each of its command topics stands for: what the schema owner binds at
 * `queen-timers migrate` (docs/schema-and-roles.md#database-roles), read from the bridge's own keys exactly as the
 * bridge reads them ({@link RouteSettings#from}), the producer subs and token rules left out (they are the bridge's,
 * not the binding's).
 *
 * @param groupId      {@code bridge.group.id}
 * @param topicTenants each command topic ({@code command.topics}) and its tenant ({@code command.topic.tenants},
 *                     {@code topic.<name>.tenant}, {@code bridge.default.tenant.allowed})
 */
public record BridgeGroupSettings(String groupId, Map<String, UUID> topicTenants) {

    public BridgeGroupSettings {
        topicTenants = Map.copyOf(topicTenants);
    }

    /** The bridge's keys that declare its group and its topics' tenants (with the undeclared topic.<name>.tenant keys). */
    public static ConfigDef definition() {
        return BridgeSettings.definition().select(BridgeSettings.GROUP_ID, RouteSettings.COMMAND_TOPICS, RouteSettings.TOPIC_TENANTS,
                RouteSettings.DEFAULT_TENANT_ALLOWED);
    }

    /** Refuses, in the bridge's own words, what the bridge would refuse at start (a topic that names no tenant, say). */
    public static BridgeGroupSettings from(Config c) {
        Map<String, Object> tenantKeys = new TreeMap<>();
        c.withPrefix(TopicRoutes.PREFIX).forEach((k, v) -> {
            if (k.endsWith(".tenant")) {
                tenantKeys.put(k, v);
            }
        });
        Map<String, UUID> tenants = TopicRoutes.from(new TopicRoutes.Declared(c.list(RouteSettings.COMMAND_TOPICS),
                c.list(RouteSettings.TOPIC_TENANTS), List.of(), tenantKeys, c.bool(RouteSettings.DEFAULT_TENANT_ALLOWED), "")).tenants();
        return new BridgeGroupSettings(c.string(BridgeSettings.GROUP_ID), tenants);
    }
}
