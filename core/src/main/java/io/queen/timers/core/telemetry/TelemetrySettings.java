package io.queen.timers.core.telemetry;

import java.util.Locale;
import java.util.Map;
import java.util.Properties;

/**
 * Whether this process traces, read from OpenTelemetry's own standard variables (docs/tracing.md#tracing), not from a
 * {@code queen.*} key: a platform that sets {@code OTEL_*} for every service sets them for this one too.
 *
 * <p>The rule: tracing is ON when {@code OTEL_SDK_DISABLED} is not {@code true} AND one of these says where spans go:
 * {@code OTEL_TRACES_EXPORTER} set to anything but {@code none}, {@code OTEL_EXPORTER_OTLP_TRACES_ENDPOINT} or
 * {@code OTEL_EXPORTER_OTLP_ENDPOINT}. Anything else (none of them, {@code OTEL_TRACES_EXPORTER=none}, or only
 * {@code OTEL_SERVICE_NAME}, which says who we are but not where to send) leaves it OFF: no SDK is built, the API is
 * the no-op one, and the services create no span at all. Each variable may also be given as the Java system property
 * of the same name ({@code -Dotel.traces.exporter=otlp}), which wins, as in the SDK's autoconfigure.
 *
 * @param enabled            whether the SDK is built
 * @param reason             why, in one line (logged at start)
 * @param defaultServiceName the {@code service.name} given when neither OTEL_SERVICE_NAME nor a service.name in
 *                           OTEL_RESOURCE_ATTRIBUTES names one; null when one of them does
 */
public record TelemetrySettings(boolean enabled, String reason, String defaultServiceName) {

    /**
     * The only variables read here, and what for: OpenTelemetry's own, not queen settings, so they are not in a
     * {@code ConfigDef} (a {@code queen.*} key would let the config file say one thing while the SDK, which reads these
     * variables itself, does another). {@code config-docs} prints this list below the settings table, so
     * docs/configuration.md names every variable a service reads. The SDK reads every other {@code OTEL_*} itself.
     */
    public static final Map<String, String> VARIABLES = variables();

    private static Map<String, String> variables() {
        Map<String, String> v = new java.util.LinkedHashMap<>();
        v.put("OTEL_SDK_DISABLED", "`true` turns tracing off, whatever else is set.");
        v.put("OTEL_TRACES_EXPORTER", "Set to anything but `none`, tracing is on; `none` turns it off.");
        v.put("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "Set, tracing is on (unless one of the above turns it off).");
        v.put("OTEL_EXPORTER_OTLP_ENDPOINT", "Set, tracing is on (unless one of the above turns it off).");
        v.put("OTEL_SERVICE_NAME", "Names the process; unset (and no `service.name` in OTEL_RESOURCE_ATTRIBUTES), it is"
                + " `queen-timers-<service>`. Alone it does not turn tracing on.");
        v.put("OTEL_RESOURCE_ATTRIBUTES", "Read only for a `service.name=` in it (as OTEL_SERVICE_NAME).");
        return java.util.Collections.unmodifiableMap(v);
    }

    /** Tracing off, whatever the environment says (tests, the operator subcommands). */
    public static TelemetrySettings off() {
        return new TelemetrySettings(false, "tracing off", null);
    }

    /** From this JVM's environment and system properties; {@code service} names the process (bridge, sweeper). */
    public static TelemetrySettings fromEnvironment(String service) {
        return from(System.getenv(), System.getProperties(), service);
    }

    /** The rule above over {@code env} and {@code props}. */
    public static TelemetrySettings from(Map<String, String> env, Properties props, String service) {
        String serviceName = "queen-timers-" + service;
        String resource = value(env, props, "otel.resource.attributes");
        boolean named = value(env, props, "otel.service.name") != null
                || (resource != null && resource.matches("(^|.*,)\\s*service\\.name\\s*=.*"));
        String defaultName = named ? null : serviceName;
        if ("true".equals(lower(value(env, props, "otel.sdk.disabled")))) {
            return new TelemetrySettings(false, "tracing off: OTEL_SDK_DISABLED=true", defaultName);
        }
        String exporter = lower(value(env, props, "otel.traces.exporter"));
        if (exporter != null) {
            return "none".equals(exporter)
                    ? new TelemetrySettings(false, "tracing off: OTEL_TRACES_EXPORTER=none", defaultName)
                    : new TelemetrySettings(true, "tracing on: OTEL_TRACES_EXPORTER=" + exporter, defaultName);
        }
        for (String key : new String[] {"otel.exporter.otlp.traces.endpoint", "otel.exporter.otlp.endpoint"}) {
            String endpoint = value(env, props, key);
            if (endpoint != null) {
                return new TelemetrySettings(true, "tracing on: " + envName(key) + "=" + endpoint, defaultName);
            }
        }
        return new TelemetrySettings(false, "tracing off: no OTEL_TRACES_EXPORTER, OTEL_EXPORTER_OTLP_TRACES_ENDPOINT or"
                + " OTEL_EXPORTER_OTLP_ENDPOINT", defaultName);
    }

    /** The system property {@code key}, else its variable (OTEL_X_Y, one of {@link #VARIABLES}); blank counts as unset. */
    private static String value(Map<String, String> env, Properties props, String key) {
        String name = envName(key);
        if (!VARIABLES.containsKey(name)) {
            throw new IllegalArgumentException(name + " is read but not listed in VARIABLES (config-docs prints that list)");
        }
        String v = props.getProperty(key);
        if (v == null || v.isBlank()) {
            v = env.get(name);
        }
        return v == null || v.isBlank() ? null : v.trim();
    }

    private static String envName(String key) {
        return key.replace('.', '_').toUpperCase(Locale.ROOT);
    }

    private static String lower(String v) {
        return v == null ? null : v.toLowerCase(Locale.ROOT);
    }
}
