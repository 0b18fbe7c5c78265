package io.queen.timers.routes;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.queen.timers.core.config.ConfigException;
import io.queen.timers.core.config.ConfigLoader;
import java.util.HashMap;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.Test;

/** The tenant mapping fails closed, and every mapping has an environment form. Pure configuration: no infrastructure. */
class TopicRoutesTest {

    static final UUID DEFAULT = UUID.fromString("00000000-0000-0000-0000-000000000001");
    static final UUID A = UUID.fromString("6a1f0000-0000-4000-8000-00000000000a");
    static final UUID B = UUID.fromString("6a1f0000-0000-4000-8000-00000000000b");

    @Test
    void oneCommandTopicMayUseTheDefaultTenant() {
        assertThat(routes(Map.of("command.topics", "cmds")).route("cmds")).isEqualTo(new TopicRoutes.Route(DEFAULT, null, null));
    }

    @Test
    void withTwoTopicsATopicThatNamesNoTenantIsAStartUpError() {
        assertThatThrownBy(() -> routes(Map.of("command.topics", "a,b", "topic.a.tenant", A.toString())))
                .isInstanceOf(ConfigException.class).hasMessageContaining("command topic b names no tenant")
                .hasMessageContaining("topic.b.tenant").hasMessageContaining("bridge.default.tenant.allowed");
        TopicRoutes allowed = routes(Map.of("command.topics", "a,b", "topic.a.tenant", A.toString(), "bridge.default.tenant.allowed", "true"));
        assertThat(allowed.route("b").tenant()).isEqualTo(DEFAULT);
        assertThat(allowed.route("a").tenant()).isEqualTo(A);
    }

    @Test
    void anUnknownTopicKeyIsAStartUpErrorNamingIt() {
        assertThatThrownBy(() -> routes(Map.of("command.topics", "orders", "topic.orders.tenantid", A.toString())))
                .isInstanceOf(ConfigException.class).hasMessageContaining("topic.orders.tenantid");
        assertThatThrownBy(() -> routes(Map.of("command.topics", "orders", "topic.ordres.tenant", A.toString())))
                .isInstanceOf(ConfigException.class).hasMessageContaining("topic.ordres.tenant").hasMessageContaining("'ordres'");
    }

    @Test
    void everyMappingHasAnEnvironmentForm() {
        Map<String, String> env = new HashMap<>();
        env.put("QUEEN_COMMAND_TOPICS", "orders.eu,orders.us");
        env.put("QUEEN_COMMAND_TOPIC_TENANTS", "orders.eu=" + A + ", orders.us=" + B);
        env.put("QUEEN_COMMAND_TOPIC_PRODUCER_SUBS", "orders.eu=svc-eu");
        var config = ConfigLoader.load(RouteSettings.definition(), null, env);
        TopicRoutes routes = RouteSettings.from(config).routes();
        assertThat(routes.route("orders.eu")).isEqualTo(new TopicRoutes.Route(A, "svc-eu", null));
        assertThat(routes.route("orders.us")).isEqualTo(new TopicRoutes.Route(B, null, null));
        env.put("QUEEN_BRIDGE_DEFAULT_TENANT_ALLOWED", "true");
        env.put("QUEEN_COMMAND_TOPIC_TENANTS", "orders.eu=" + A);
        assertThat(RouteSettings.from(ConfigLoader.load(RouteSettings.definition(), null, env)).routes().route("orders.us").tenant()).isEqualTo(DEFAULT);
    }

    @Test
    void twoFormsThatDisagreeAreAStartUpError() {
        assertThatThrownBy(() -> routes(Map.of("command.topics", "a", "topic.a.tenant", A.toString(), "command.topic.tenants", "a=" + B)))
                .isInstanceOf(ConfigException.class).hasMessageContaining("maps topic a");
        assertThatThrownBy(() -> routes(Map.of("command.topics", "a", "command.topic.tenants", "b=" + B)))
                .isInstanceOf(ConfigException.class).hasMessageContaining("'b'");
        assertThatThrownBy(() -> routes(Map.of("command.topics", "a", "command.topic.tenants", "a")))
                .isInstanceOf(ConfigException.class).hasMessageContaining("<topic>=<value>");
    }

    private static TopicRoutes routes(Map<String, String> settings) {
        return RouteSettings.from(RouteSettings.definition().parse(settings)).routes();
    }
}
