package io.queen.timers.http;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.queen.timers.core.config.ConfigException;
import java.time.Duration;
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
        assertThat(settings(Map.of()).listen().bindAddress()).isEqualTo("127.0.0.1");
        assertThat(settings(Map.of("api.bind.address", "localhost")).listen().bindAddress()).isEqualTo("localhost");
        assertThat(settings(Map.of("api.bind.address", "::1")).listen().bindAddress()).isEqualTo("::1");
        assertThatThrownBy(() -> settings(Map.of("api.bind.address", "0.0.0.0")))
                .isInstanceOf(ConfigException.class)
                .hasMessageStartingWith("setting api.bind.address = 0.0.0.0 is not a loopback address, and command topic open takes"
                        + " commands without a token")
                .hasMessageContaining("api.unauthenticated.remote.allowed=true").hasMessageNotContaining("\n");
        assertThat(settings(Map.of("api.bind.address", "0.0.0.0", "api.unauthenticated.remote.allowed", "true")).listen().bindAddress())
                .isEqualTo("0.0.0.0");
    }

    @Test
    void oneTenantsShareMustLeaveThreadsToTheOthers() {
        assertThatThrownBy(() -> settings(Map.of("api.senders", "16")))
                .isInstanceOf(ConfigException.class).hasMessageStartingWith("setting api.senders = 16 must be less than api.threads = 16");
        assertThat(settings(Map.of("api.senders", "15")).limits().senders()).isEqualTo(15);
    }

    @Test
    void eachKeyIsReadIntoItsConcernByName() {
        HttpSettings s = settings(Map.ofEntries(Map.entry("api.max.body.bytes", "5000"), Map.entry("api.max.ops", "7"),
                Map.entry("api.rate.limit", "11"), Map.entry("api.rate.burst", "13"), Map.entry("api.threads", "17"),
                Map.entry("api.senders", "3"), Map.entry("api.max.connections", "19"), Map.entry("api.verdict.timeout", "2s"),
                Map.entry("api.header.timeout", "3s"), Map.entry("api.idle.timeout", "4s"), Map.entry("api.request.timeout", "5s"),
                Map.entry("api.reads.enabled", "true"), Map.entry("api.cookies.secure", "never"), Map.entry("api.port", "0")));
        assertThat(s.limits()).isEqualTo(new HttpSettings.Limits(5000, 7, 11, 13, 17, 3, 19));
        assertThat(s.timeouts()).isEqualTo(new HttpSettings.Timeouts(Duration.ofSeconds(2), Duration.ofSeconds(3), Duration.ofSeconds(4),
                Duration.ofSeconds(5)));
        assertThat(s.operator()).isEqualTo(new HttpSettings.Operator(true, false, "never"));
        assertThat(s.listen().port()).isZero();
        assertThat(s.topics().commandTopics()).isEmpty();
        assertThat(s.topics().routing().routes().routes()).containsOnlyKeys("open");
    }

    @Test
    void theKeystorePasswordIsNeverPrinted() {
        HttpSettings s = settings(Map.of("api.tls.keystore.file", "/k.p12", "api.tls.keystore.password", "hunter2-secret"));
        assertThat(s.listen().tlsKeyStorePassword()).isEqualTo("hunter2-secret");
        assertThat(s.toString()).contains("tls=true").doesNotContain("hunter2-secret");
        assertThat(s.listen().toString()).doesNotContain("hunter2-secret");
    }
}
