package io.queen.timers.http.api;

import static io.queen.timers.http.HttpSettingsTest.settings;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.queen.timers.core.config.ConfigException;
import io.queen.timers.http.HttpSettings;
import java.time.Duration;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/**
 * The JDK server's response limit (sun.net.httpserver.maxRspTime) runs while the server still computes an answer, so it
 * must cover the longest one, the 202 pending after api.verdict.timeout; a JVM whose limit cannot is refused at start.
 * HostileCallersIT shows the 202 arriving through a real socket from the process as it ships.
 */
class ResponseLimitTest {

    @Test
    void theLimitCoversTheVerdictTimeoutKafkasAcknowledgementAndTheClientsTake() {
        HttpSettings shipped = settings(Map.of());
        assertThat(ApiServer.longestAnswer(shipped)).isEqualTo(Duration.ofSeconds(46));
        ApiServer.requireResponseLimit(shipped, Optional.of(Duration.ofSeconds(56)));
        ApiServer.requireResponseLimit(shipped, Optional.empty()); // no limit at all: nothing is cut off
        assertThatThrownBy(() -> ApiServer.requireResponseLimit(shipped, Optional.of(Duration.ofSeconds(10))))
                .isInstanceOf(ConfigException.class)
                .hasMessageStartingWith("setting api.verdict.timeout = PT30S cannot be answered here")
                .hasMessageContaining("sun.net.httpserver.maxRspTime").hasMessageContaining("at least 56 s").hasMessageNotContaining("\n");
        HttpSettings longest = settings(Map.of("api.verdict.timeout", "5m"));
        assertThatThrownBy(() -> ApiServer.requireResponseLimit(longest, Optional.of(Duration.ofSeconds(56))))
                .isInstanceOf(ConfigException.class).hasMessageContaining("at least 326 s");
        // with the reads, a statement of PostgreSQL may take the operator's statement timeout (30 s)
        assertThat(ApiServer.longestAnswer(settings(Map.of("api.verdict.timeout", "1s", "api.reads.enabled", "true"))))
                .isEqualTo(Duration.ofSeconds(30));
    }
}
