package io.queen.timers.bridge.auth;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.apache.kafka.clients.admin.Config;
import org.apache.kafka.clients.admin.ConfigEntry;
import org.junit.jupiter.api.Test;

/** Which broker settings make a jwt topic's record timestamps trustworthy (the broker cases: BridgeSecurityEndToEndIT). */
class TopicTimestampsTest {

    static final Duration SKEW = Duration.ofSeconds(60);

    @Test
    void logAppendTimeIsSafeWhateverTheBounds() {
        assertThat(TopicTimestamps.judge("t", config(Map.of("message.timestamp.type", "LogAppendTime")), SKEW, "b:9092")).isEmpty();
    }

    @Test
    void createTimeIsSafeOnlyWithBothBoundsWithinTheSkew() {
        assertThat(TopicTimestamps.judge("t", createTime("60000", "0"), SKEW, "b:9092")).isEmpty();
        assertThat(TopicTimestamps.judge("t", createTime("60001", "0"), SKEW, "b:9092")).get().asString()
                .contains("jwt topic t", "message.timestamp.before.max.ms=60001", "topic.t.auth.clock.skew = 60000 ms",
                        "kafka-configs.sh --bootstrap-server b:9092 --alter --entity-type topics --entity-name t"
                                + " --add-config message.timestamp.type=LogAppendTime");
        assertThat(TopicTimestamps.judge("t", createTime("0", String.valueOf(Long.MAX_VALUE)), SKEW, "b:9092")).get().asString()
                .contains("message.timestamp.after.max.ms=" + Long.MAX_VALUE + " (unbounded)");
    }

    /** A broker before Kafka 3.6 knows neither bound (only message.timestamp.difference.max.ms): unbounded, unsafe. */
    @Test
    void aBrokerWithoutTheBoundsIsUnboundedUnlessItStampsTheTime() {
        Config old = config(Map.of("message.timestamp.type", "CreateTime", "message.timestamp.difference.max.ms", "1000"));
        assertThat(TopicTimestamps.judge("t", old, SKEW, "b:9092")).get().asString()
                .contains("message.timestamp.before.max.ms=(unknown to this broker: unbounded)");
    }

    private static Config createTime(String before, String after) {
        return config(Map.of("message.timestamp.type", "CreateTime", "message.timestamp.before.max.ms", before,
                "message.timestamp.after.max.ms", after));
    }

    private static Config config(Map<String, String> entries) {
        List<ConfigEntry> list = new ArrayList<>();
        entries.forEach((k, v) -> list.add(new ConfigEntry(k, v)));
        return new Config(list);
    }
}
