package io.queen.timers.bridge;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.queen.timers.bridge.ingest.IngestSettings;
import io.queen.timers.bridge.wire.RecordLimits;
import io.queen.timers.core.config.ConfigException;
import io.queen.timers.core.config.ConfigLoader;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.Test;

/** The bridge's typed settings: the defaults (docs/configuration.md), environment overrides, one-line errors. */
class BridgeSettingsTest {

    private static Map<String, String> required() {
        Map<String, String> env = new HashMap<>();
        env.put("QUEEN_JDBC_URL", "jdbc:postgresql://db/queen");
        env.put("QUEEN_KAFKA_BOOTSTRAP", "kafka:9092");
        return env;
    }

    @Test
    void defaults() {
        BridgeSettings s = BridgeSettings.from(ConfigLoader.load(BridgeSettings.definition(), null, required()));
        assertThat(s.routing().commandTopics()).containsExactly("queen.timers.commands");
        assertThat(s.ingest().groupId()).isEqualTo("queen-timers-bridge");
        assertThat(s.commands().horizon()).isEqualTo(Duration.ofDays(90));
        assertThat(s.commands().payloadMaxBytes()).isEqualTo(1 << 20);
        assertThat(s.apply().zstdThreshold()).isEqualTo(4096);
        assertThat(s.apply().wakeWithin()).isEqualTo(Duration.ofSeconds(30));
        assertThat(s.ingest().pollTimeout()).isEqualTo(Duration.ofMillis(200));
        assertThat(s.ingest().statements().lockTimeout()).isEqualTo(Duration.ofSeconds(45));
        assertThat(s.ingest().statements().statementTimeout()).isEqualTo(Duration.ofSeconds(60));
        assertThat(s.commands().records()).isEqualTo(new RecordLimits((1 << 20) + 32 * 1024, 64, 32 * 1024));
        assertThat(s.commands().records().bodyMaxBytes()).as("docs/guarantees.md quotes it").isEqualTo(1_118_912);
        assertThat(s.ingest().decompressionMaxBytes()).isEqualTo(32 << 20);
    }

    @Test
    void theDecompressionBudgetIsCountedInTheHeapTheBridgeChecksAtStart() {
        BridgeSettings s = BridgeSettings.from(ConfigLoader.load(BridgeSettings.definition(), null, required()));
        s.checkFitsHeap(256L << 20); // the manifests' heap: 4 x 16 MiB + 32 MiB = 96 MiB, under half of it
        assertThatThrownBy(() -> s.checkFitsHeap(160L << 20)).isInstanceOf(ConfigException.class)
                .hasMessageContaining("bridge.decompression.max.bytes = 33554432").hasMessageContaining("96 MiB");
        Map<String, String> smaller = required();
        smaller.put("QUEEN_BRIDGE_DECOMPRESSION_MAX_BYTES", String.valueOf(9 << 20));
        BridgeSettings.from(ConfigLoader.load(BridgeSettings.definition(), null, smaller)).checkFitsHeap(160L << 20);
        Map<String, String> tooSmall = required();
        tooSmall.put("QUEEN_BRIDGE_DECOMPRESSION_MAX_BYTES", String.valueOf(8 << 20));
        assertThatThrownBy(() -> BridgeSettings.from(ConfigLoader.load(BridgeSettings.definition(), null, tooSmall)))
                .isInstanceOf(ConfigException.class).hasMessageContaining("bridge.decompression.max.bytes");
    }

    @Test
    void theHeaderLimitsAreSettingsCheckedAtStart() {
        Map<String, String> env = required();
        env.put("QUEEN_BRIDGE_RECORD_HEADERS_MAX_COUNT", "16");
        env.put("QUEEN_BRIDGE_RECORD_HEADERS_MAX_BYTES", "4096");
        assertThat(BridgeSettings.from(ConfigLoader.load(BridgeSettings.definition(), null, env)).commands().records())
                .isEqualTo(new RecordLimits((1 << 20) + 32 * 1024, 16, 4096));
        for (String[] bad : new String[][] {{"QUEEN_BRIDGE_RECORD_HEADERS_MAX_COUNT", "-1", "bridge.record.headers.max.count"},
            {"QUEEN_BRIDGE_RECORD_HEADERS_MAX_COUNT", "4097", "bridge.record.headers.max.count"},
            {"QUEEN_BRIDGE_RECORD_HEADERS_MAX_BYTES", "1048577", "bridge.record.headers.max.bytes"}}) {
            Map<String, String> e = required();
            e.put(bad[0], bad[1]);
            assertThatThrownBy(() -> BridgeSettings.from(ConfigLoader.load(BridgeSettings.definition(), null, e)))
                    .isInstanceOf(ConfigException.class).hasMessageContaining(bad[2]);
        }
    }

    @Test
    void environmentOverridesUseTheDeclaredNames() {
        Map<String, String> env = required();
        env.put("QUEEN_COMMAND_TOPICS", "a.commands,b.commands");
        // two topics must each name a tenant: the settings read the routes too (TopicRoutes)
        env.put("QUEEN_BRIDGE_DEFAULT_TENANT_ALLOWED", "true");
        env.put("QUEEN_BRIDGE_GROUP_ID", "g2");
        env.put("QUEEN_BRIDGE_HORIZON", "7d");
        BridgeSettings s = BridgeSettings.from(ConfigLoader.load(BridgeSettings.definition(), null, env));
        assertThat(s.routing().commandTopics()).isEqualTo(List.of("a.commands", "b.commands"));
        assertThat(s.ingest().groupId()).isEqualTo("g2");
        assertThat(s.commands().horizon()).isEqualTo(Duration.ofDays(7));
    }

    @Test
    void theIngestLoopIsToldTheBridgeKeysAsOneRecord() {
        Map<String, String> env = required();
        env.put("QUEEN_COMMAND_TOPICS", "a.commands,b.commands");
        env.put("QUEEN_BRIDGE_DEFAULT_TENANT_ALLOWED", "true");   // the settings read the routes too
        env.put("QUEEN_BRIDGE_POLL_TIMEOUT", "350ms");
        env.put("QUEEN_BRIDGE_INGEST_MAX_BYTES", String.valueOf(8 << 20));
        env.put("QUEEN_BRIDGE_BATCH_MAX_RECORDS", "300");
        env.put("QUEEN_BRIDGE_START_POSITION", "latest");
        env.put("QUEEN_DB_RETRY_BACKOFF_MAX", "7s");
        IngestSettings s = BridgeSettings.from(ConfigLoader.load(BridgeSettings.definition(), null, env)).ingestLoop();
        assertThat(s).isEqualTo(new IngestSettings(List.of("a.commands", "b.commands"), Duration.ofMillis(350), 4 << 20, 300,
                Duration.ofSeconds(7), "latest"));
        // unset: a new group's partition that holds records waits rather than starting anywhere
        assertThat(BridgeSettings.from(ConfigLoader.load(BridgeSettings.definition(), null, required())).ingest()
                .startPosition()).isNull();
    }

    @Test
    void aBadValueNamesTheSetting() {
        Map<String, String> env = required();
        env.put("QUEEN_BRIDGE_PAYLOAD_MAX_BYTES", "-1");
        assertThatThrownBy(() -> BridgeSettings.from(ConfigLoader.load(BridgeSettings.definition(), null, env)))
                .isInstanceOf(ConfigException.class).hasMessageContaining("bridge.payload.max.bytes");
    }

    @Test
    void theAuditKeysBesideTheRoutesFailClosedAndHaveAnEnvironmentForm() {
        UUID a = UUID.fromString("6a1f0000-0000-4000-8000-00000000000a");
        for (String bad : List.of("tenant." + a + ".audit.topik", "tenant.not-a-uuid.audit.topic")) {
            Map<String, String> s = new HashMap<>(Map.of("command.topics", "orders", "jdbc.url", "jdbc:postgresql://db/queen",
                    "kafka.bootstrap.servers", "kafka:9092", bad, "x"));
            assertThatThrownBy(() -> BridgeSettings.from(BridgeSettings.definition().parse(s)))
                    .isInstanceOf(ConfigException.class).hasMessageContaining(bad.contains("topik") ? bad : "not-a-uuid");
        }
        Map<String, String> env = required();
        env.put("QUEEN_COMMAND_TOPICS", "orders.eu");
        env.put("QUEEN_AUDIT_TENANT_TOPICS", a + "=audit.eu");
        BridgeSettings s = BridgeSettings.from(ConfigLoader.load(BridgeSettings.definition(), null, env));
        assertThat(s.audit().topics().topicFor(a)).isEqualTo("audit.eu");
    }
}
