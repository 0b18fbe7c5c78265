package io.queen.timers.core.audit;

import io.queen.timers.core.config.CommonSettings;
import io.queen.timers.core.config.Config;
import io.queen.timers.core.config.ConfigException;
import java.util.HashMap;
import java.util.Map;
import java.util.UUID;

/**
 * Which topic a tenant's audit events go to. Tenants never share an audit key space (docs/architecture.md#tenants):
 * the default tenant publishes to {@code audit.topic}; any other tenant to
 * {@code tenant.<uuid>.audit.topic}, by default {@code <audit.topic>.<uuid>}.
 */
public record AuditTopics(String defaultTopic, Map<UUID, String> configured) {

    static final UUID DEFAULT_TENANT = UUID.fromString(CommonSettings.DEFAULT_TENANT);
    private static final String SUFFIX = ".audit.topic";

    public AuditTopics {
        configured = Map.copyOf(configured);
    }

    public static AuditTopics from(Config config) {
        Map<UUID, String> configured = new HashMap<>();
        config.withPrefix("tenant.").forEach((k, v) -> {
            if (k.endsWith(SUFFIX)) {
                String id = k.substring(0, k.length() - SUFFIX.length());
                UUID tenant;
                try {
                    tenant = UUID.fromString(id);
                } catch (IllegalArgumentException e) {
                    throw new ConfigException("setting tenant." + k + ": '" + id + "' is not a tenant UUID");
                }
                String topic = String.valueOf(v).trim();
                if (topic.isEmpty()) {
                    throw new ConfigException("setting tenant." + k + " must not be empty");
                }
                configured.put(tenant, topic);
            }
        });
        return new AuditTopics(config.string(CommonSettings.AUDIT_TOPIC), configured);
    }

    public String topicFor(UUID tenant) {
        if (tenant.equals(DEFAULT_TENANT)) {
            return defaultTopic;
        }
        String t = configured.get(tenant);
        return t != null ? t : defaultTopic + "." + tenant;
    }
}
