package io.queen.timers.cli;

import io.queen.timers.bridge.BridgeSettings;
import io.queen.timers.client.command.WireFormat;
import io.queen.timers.core.config.CommonSettings;
import io.queen.timers.core.config.ConfigDef;
import io.queen.timers.routes.RouteSettings;
import java.util.List;
import java.util.Map;
import picocli.CommandLine.Option;

/** Which timer a command is about, and the command topic it goes to. */
public final class CommandTarget {

    static final String DEFAULT_COMMAND_TOPIC = RouteSettings.DEFAULT_COMMAND_TOPIC;
    /** The producer token's environment variable: the CLI's own (the services verify tokens, they do not send them). */
    static final String AUTH_TOKEN_ENV = "QUEEN_AUTH_TOKEN";

    /** The bridge's settings: where the environment names of the topics are declared. */
    private static final ConfigDef BRIDGE = BridgeSettings.definition();

    @Option(names = {"-q", "--queue"}, required = true, paramLabel = "QUEUE", description = "Destination queue, e.g. orders.reminders.")
    String queue;

    @Option(names = {"-k", "--key"}, required = true, paramLabel = "TIMER_KEY", description = "The timer's key within the queue.")
    String timerKey;

    @Option(names = {"-t", "--topic"}, paramLabel = "TOPIC",
            description = "Command topic (else the first of QUEEN_COMMAND_TOPICS, else " + DEFAULT_COMMAND_TOPIC + ").")
    String topic;

    @Option(names = "--wait", paramLabel = "DURATION", arity = "0..1", fallbackValue = "30s",
            description = "Wait for the bridge's verdict on the audit topic and print it (default wait 30s).")
    String wait;

    @Option(names = "--token", paramLabel = "JWT",
            description = "Producer token, sent in the queen-auth header, for a topic with topic.<name>.auth=jwt (else " + AUTH_TOKEN_ENV + "). "
                    + "Prefer the environment: a flag shows in the process list.")
    String token;

    @Option(names = "--audit-topic", paramLabel = "TOPIC",
            description = "Audit topic for --wait (else QUEEN_AUDIT_TOPIC, else " + CommonSettings.DEFAULT_AUDIT_TOPIC + ").")
    String auditTopic;

    String auditTopic(Map<String, String> env) {
        if (auditTopic != null) {
            return auditTopic;
        }
        String t = env.get(BRIDGE.key(CommonSettings.AUDIT_TOPIC).env());
        return t == null || t.isBlank() ? CommonSettings.DEFAULT_AUDIT_TOPIC : t.trim();
    }

    String topic(Map<String, String> env) {
        if (topic != null) {
            return topic;
        }
        String topics = env.get(BRIDGE.key(RouteSettings.COMMAND_TOPICS).env());
        if (topics != null && !topics.isBlank()) {
            List<String> list = List.of(topics.split(","));
            return list.get(0).trim();
        }
        return DEFAULT_COMMAND_TOPIC;
    }

    /** The token for the queen-auth header, or null when none is given. */
    String token(Map<String, String> env) {
        String t = token != null ? token : env.get(AUTH_TOKEN_ENV);
        return t == null || t.isBlank() ? null : t.trim();
    }

    /** The record key every command for this timer carries (docs/formats.md#record-key). */
    String recordKey() {
        return WireFormat.key(queue, timerKey);
    }
}
