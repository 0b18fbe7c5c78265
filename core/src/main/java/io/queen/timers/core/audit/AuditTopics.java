package io.queen.timers.core.audit;

import io.queen.timers.core.config.CommonSettings;
import io.queen.timers.core.config.ConfigException;
import java.util.Map;
import java.util.UUID;

/**
 * Which topic a tenant's audit events go to. Tenants never share an audit key space (docs/architecture.md#tenants):
 * the default tenant publishes to {@code audit.topic}; any other tenant to
 * {@code tenant.<uuid>.audit.topic}, by default {@code <audit.topic>.<uuid>}. Read by {@link AuditSettings#topics}.
 */
public record AuditTopics(String defaultTopic, Map<UUID, String> configured) {

    static final UUID DEFAULT_TENANT = UUID.fromString(CommonSettings.DEFAULT_TENANT);
    static final String PREFIX = "tenant.";
    static final String SUFFIX = ".audit.topic";

    public AuditTopics {
        configured = Map.copyOf(configured);
    }

    static void put(Map<UUID, String> configured, String id, String value, String setting) {
        UUID tenant;
        try {
            tenant = UUID.fromString(id);
        } catch (IllegalArgumentException e) {
            throw new ConfigException("setting " + setting + ": '" + id + "' is not a tenant UUID");
        }
        String topic = value.trim();
        if (topic.isEmpty()) {
            throw new ConfigException("setting " + setting + ": the audit topic of tenant " + tenant + " must not be empty");
        }
        String before = configured.put(tenant, topic);
        if (before != null && !before.equals(topic)) {
            throw new ConfigException("setting " + setting + " sends tenant " + tenant + " to '" + topic + "', another setting to '" + before + "'");
        }
    }

    public String topicFor(UUID tenant) {
        if (tenant.equals(DEFAULT_TENANT)) {
            return defaultTopic;
        }
        String t = configured.get(tenant);
        return t != null ? t : defaultTopic + "." + tenant;
    }
}
