package io.queen.timers.core.config;

import static io.queen.timers.core.config.ConfigDef.Type.LIST;

import java.util.HashMap;
import java.util.Map;
import java.util.UUID;

/**
 * Which topic a tenant's audit events go to. Tenants never share an audit key space (docs/architecture.md#tenants):
 * the default tenant publishes to {@code audit.topic}; any other tenant to
 * {@code tenant.<uuid>.audit.topic}, by default {@code <audit.topic>.<uuid>}. Read by {@link #from}. The audit relay
 * publishes by it and the HTTP API and the CLI's {@code audit tail} read by it, so it is here, among the settings several
 * processes share, and not with the relay.
 */
public record AuditTopics(String defaultTopic, Map<UUID, String> configured) {

    public static final String TENANT_TOPICS = "audit.tenant.topics";

    static final UUID DEFAULT_TENANT = UUID.fromString(CommonSettings.DEFAULT_TENANT);
    static final String PREFIX = "tenant.";
    static final String SUFFIX = ".audit.topic";

    public AuditTopics {
        configured = Map.copyOf(configured);
    }

    /** {@link #TENANT_TOPICS}; the {@code tenant.<uuid>.audit.topic} keys are open-ended, read by {@link #from}. */
    public static ConfigDef definition() {
        return new ConfigDef()
                .define(TENANT_TOPICS, LIST, "", null,
                        "Audit topics of non-default tenants as <tenant uuid>=<topic>,...: the same mapping as "
                                + "tenant.<uuid>.audit.topic, in a form the environment can carry.");
    }

    /**
     * From {@code tenant.<uuid>.audit.topic} keys and the list form {@code audit.tenant.topics}
     * ({@code <uuid>=<topic>,...}, which the environment can carry). Any other {@code tenant.*} key is a
     * start-up error naming it: a misspelt mapping would send a tenant's events to the default name.
     */
    public static AuditTopics from(Config config) {
        Map<UUID, String> configured = new HashMap<>();
        config.withPrefix(PREFIX).forEach((k, v) -> {
            if (config.definition().key(PREFIX + k) != null) {
                return;   // a declared setting that shares the prefix (the bridge's tenant.max.pending), not a mapping
            }
            if (!k.endsWith(SUFFIX)) {
                throw new ConfigException("unknown setting " + PREFIX + k + ": a tenant takes only " + PREFIX + "<uuid>" + SUFFIX);
            }
            put(configured, k.substring(0, k.length() - SUFFIX.length()), String.valueOf(v), PREFIX + k);
        });
        for (String item : config.list(TENANT_TOPICS)) {
            int eq = item.indexOf('=');
            if (eq <= 0) {
                throw new ConfigException("setting " + TENANT_TOPICS + ": '" + item + "' is not <tenant uuid>=<topic>");
            }
            put(configured, item.substring(0, eq).trim(), item.substring(eq + 1), TENANT_TOPICS);
        }
        return new AuditTopics(config.string(CommonSettings.AUDIT_TOPIC), configured);
    }

    private static void put(Map<UUID, String> configured, String id, String value, String setting) {
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
