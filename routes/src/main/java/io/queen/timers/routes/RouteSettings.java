package io.queen.timers.routes;

import static io.queen.timers.core.config.ConfigDef.Type.BOOLEAN;
import static io.queen.timers.core.config.ConfigDef.Type.LIST;
import static io.queen.timers.core.config.ConfigDef.Type.STRING;
import static io.queen.timers.core.config.ConfigDef.nonEmpty;

import io.queen.timers.core.config.Config;
import io.queen.timers.core.config.ConfigDef;
import io.queen.timers.core.config.ConfigException;
import java.util.List;

/**
 * The command topics and who each stands for, as the bridge and the HTTP API both read them: {@code command.topics},
 * each topic's tenant and producer sub, and the token rules of {@code topic.<name>.auth*} (docs/security.md#producer-identity).
 * One definition and one reading for both processes, so a config file that serves both is read the same by each, and
 * the API checks a token exactly as the bridge will.
 *
 * @param commandTopics {@link #COMMAND_TOPICS}, in the order given
 * @param routes        each command topic's tenant, producer sub and token rules ({@link TopicRoutes#from})
 */
public record RouteSettings(List<String> commandTopics, TopicRoutes routes) {

    public static final String COMMAND_TOPICS = "command.topics";
    /** The default of {@link #COMMAND_TOPICS}, a constant so the CLI's help can name it. */
    public static final String DEFAULT_COMMAND_TOPIC = "queen.timers.commands";
    public static final String TOPIC_TENANTS = "command.topic.tenants";
    public static final String TOPIC_PRODUCER_SUBS = "command.topic.producer.subs";
    public static final String DEFAULT_TENANT_ALLOWED = "bridge.default.tenant.allowed";
    public static final String AUTH_ADMIN_CLAIM = "auth.admin.claim";
    /** JWT claims that carry something else: never an admin flag. */
    static final List<String> NOT_ADMIN_CLAIMS = List.of("sub", "iss", "aud", "exp", "nbf", "iat", "jti", "tenant");

    public RouteSettings {
        commandTopics = List.copyOf(commandTopics);
    }

    public static ConfigDef definition() {
        return new ConfigDef()
                .define(COMMAND_TOPICS, LIST, DEFAULT_COMMAND_TOPIC, nonEmpty(), "QUEEN_COMMAND_TOPICS",
                        "Comma-separated Kafka topics carrying commands. Each maps to one tenant (topic.<name>.tenant, "
                                + "or command.topic.tenants) and optionally one producer sub (topic.<name>.producer.sub, or command.topic.producer.subs).")
                .define(TOPIC_TENANTS, LIST, "", null,
                        "The tenant of each command topic as <topic>=<tenant uuid>,...: the same mapping as topic.<name>.tenant, "
                                + "in a form the environment can carry. A topic mapped twice to different tenants is a start-up error.")
                .define(TOPIC_PRODUCER_SUBS, LIST, "", null,
                        "The producer sub of each command topic as <topic>=<sub>,... (no commas in a sub): "
                                + "the same mapping as topic.<name>.producer.sub, in a form the environment can carry.")
                .define(DEFAULT_TENANT_ALLOWED, BOOLEAN, "false", null,
                        "With more than one command topic, a topic that names no tenant is a start-up error unless this is true; "
                                + "then it writes as the default tenant. One command topic may always use the default tenant.")
                .define(AUTH_ADMIN_CLAIM, STRING, "", (key, value) -> {
                            if (NOT_ADMIN_CLAIMS.contains(String.valueOf(value).trim())) {
                                throw new ConfigException("setting " + key + " = '" + value + "' names a claim that means something else");
                            }
                        },
                        "On topics with auth=jwt: the name of a token claim that, when it is JSON true, lets the token reschedule or"
                                + " cancel (or schedule over) any timer of its tenant, not only those its sub scheduled (else rejected"
                                + " not_owner). Empty: no token is an admin. Topics with auth=none promise no ownership either way.");
    }

    /**
     * The command topics' routes ({@link TopicRoutes#from}) from {@code command.topics}, the list forms
     * {@code command.topic.tenants} / {@code command.topic.producer.subs}, every undeclared {@code topic.*} key,
     * {@code bridge.default.tenant.allowed} and {@code auth.admin.claim}.
     */
    public static RouteSettings from(Config c) {
        return new RouteSettings(c.list(COMMAND_TOPICS), TopicRoutes.from(new TopicRoutes.Declared(c.list(COMMAND_TOPICS),
                c.list(TOPIC_TENANTS), c.list(TOPIC_PRODUCER_SUBS), c.withPrefix(TopicRoutes.PREFIX), c.bool(DEFAULT_TENANT_ALLOWED),
                c.string(AUTH_ADMIN_CLAIM))));
    }
}
