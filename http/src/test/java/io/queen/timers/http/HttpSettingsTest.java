package io.queen.timers.http;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.queen.timers.core.config.ConfigException;
import java.util.HashMap;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The API's settings refuse, at start and in one line naming them, a combination that cannot hold. */
public class HttpSettingsTest {

    /** The API's settings from the few keys it needs (one open topic) and {@code extra}. */
    public static HttpSettings settings(Map<String, String> extra) {
        Map<String, String> s = new HashMap<>(Map.of("jdbc.url", "jdbc:postgresql://x/y", "kafka.bootstrap.servers", "x:1",
                "command.topics", "open", "command.topic.tenants", "open=00000000-0000-0000-0000-00000000000a"));
        s.putAll(extra);
        return HttpSettings.from(HttpSettings.definition().parse(s));
    }

    @Test
    void aTopicWithoutAuthIsServedBeyondLoopbackOnlyWhenTheSettingSaysSo() {
        assertThat(settings(Map.of()).bindAddress()).isEqualTo("127.0.0.1");
        assertThat(settings(Map.of("api.bind.address", "localhost")).bindAddress()).isEqualTo("localhost");
        assertThat(settings(Map.of("api.bind.address", "::1")).bindAddress()).isEqualTo("::1");
        assertThatThrownBy(() -> settings(Map.of("api.bind.address", "0.0.0.0")))
                .isInstanceOf(ConfigException.class)
                .hasMessageStartingWith("setting api.bind.address = 0.0.0.0 is not a loopback address, and command topic open takes"
                        + " commands without a token")
                .hasMessageContaining("api.unauthenticated.remote.allowed=true").hasMessageNotContaining("\n");
        assertThat(settings(Map.of("api.bind.address", "0.0.0.0", "api.unauthenticated.remote.allowed", "true")).bindAddress())
                .isEqualTo("0.0.0.0");
    }

    @Test
    void oneTenantsShareMustLeaveThreadsToTheOthers() {
        assertThatThrownBy(() -> settings(Map.of("api.senders", "16")))
                .isInstanceOf(ConfigException.class).hasMessageStartingWith("setting api.senders = 16 must be less than api.threads = 16");
        assertThat(settings(Map.of("api.senders", "15")).senders()).isEqualTo(15);
    }
}
