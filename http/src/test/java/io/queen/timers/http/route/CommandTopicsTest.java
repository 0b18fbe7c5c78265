package io.queen.timers.http.route;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.queen.timers.bridge.BridgeSettings;
import io.queen.timers.bridge.TopicRoutes;
import io.queen.timers.core.config.ConfigException;
import io.queen.timers.http.HttpSettings;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** A request must name exactly one topic: the served topics are one per tenant and at most one without a token. */
class CommandTopicsTest {

    static TopicRoutes routes(Map<String, String> extra) {
        Map<String, String> s = new HashMap<>(Map.of("jdbc.url", "jdbc:postgresql://x/y", "kafka.bootstrap.servers", "x:1"));
        s.putAll(extra);
        return BridgeSettings.routes(HttpSettings.definition().parse(s));
    }

    @Test
    void twoTopicsWithoutATokenAreAStartUpErrorUnlessOneIsServed() throws Exception {
        TopicRoutes r = routes(Map.of("command.topics", "a,b", "command.topic.tenants",
                "a=00000000-0000-0000-0000-00000000000a,b=00000000-0000-0000-0000-00000000000b"));
        assertThatThrownBy(() -> new CommandTopics(r, List.of())).isInstanceOf(ConfigException.class).hasMessageContaining("without a token");
        assertThat(new CommandTopics(r, List.of("b")).resolve(null, 0).topic()).isEqualTo("b");
    }

    @Test
    void twoTopicsOfOneTenantOrAnUnknownTopicAreAStartUpError() {
        TopicRoutes r = routes(Map.of("command.topics", "a,b", "bridge.default.tenant.allowed", "true"));
        assertThatThrownBy(() -> new CommandTopics(r, List.of())).isInstanceOf(ConfigException.class).hasMessageContaining("both belong to tenant");
        assertThatThrownBy(() -> new CommandTopics(r, List.of("c"))).isInstanceOf(ConfigException.class).hasMessageContaining("'c'");
    }

    @Test
    void aTokenOnAServerWithoutJwtTopicsIsRefusedNotIgnored() {
        CommandTopics t = new CommandTopics(routes(Map.of("command.topics", "a")), List.of());
        assertThatThrownBy(() -> t.resolve("x.y.z", 0)).isInstanceOf(CommandTopics.Refused.class);
    }
}
