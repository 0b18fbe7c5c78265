package io.queen.timers.core.ops;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Optional;
import org.apache.kafka.server.common.MetadataVersion;
import org.junit.jupiter.api.Test;

/**
 * Which Kafka clusters a service refuses ({@link KafkaVersion}), decided from the finalized metadata.version level, and
 * the level table checked against Kafka's own MetadataVersion (kafka-server-common, on the test classpath through the
 * testkit's broker). The refusal against real brokers: CompatibilityMatrixIT (module e2e).
 */
class KafkaVersionTest {

    @Test
    void theOldestLevelIsKafkas3_9_IV0() {
        assertThat(KafkaVersion.OLDEST_LEVEL).isEqualTo(MetadataVersion.IBP_3_9_IV0.featureLevel());
        assertThat(MetadataVersion.IBP_3_9_IV0.version()).startsWith(KafkaVersion.OLDEST_RELEASE + "-");
    }

    @Test
    void everyLevelBelow3_9IsNamedByItsRelease() {
        for (MetadataVersion v : MetadataVersion.values()) {
            if (v.featureLevel() < KafkaVersion.OLDEST_LEVEL && v.featureLevel() > 0) {
                String release = v.version().substring(0, v.version().indexOf('-'));
                assertThat(KafkaVersion.release(v.featureLevel())).as(v.version()).isEqualTo(release);
            }
        }
    }

    @Test
    void a3_9OrNewerClusterIsSupported() {
        assertThat(KafkaVersion.refusal(Optional.of(MetadataVersion.IBP_3_9_IV0.featureLevel()), "b:9092")).isEmpty();
        assertThat(KafkaVersion.refusal(Optional.of(MetadataVersion.latestProduction().featureLevel()), "b:9092")).isEmpty();
    }

    @Test
    void a3_8ClusterIsRefusedInOneSentenceNamingBothVersions() {
        Optional<String> refused = KafkaVersion.refusal(Optional.of(MetadataVersion.IBP_3_8_IV0.featureLevel()), "b:9092");
        assertThat(refused).hasValueSatisfying(m -> assertThat(m)
                .contains("the Kafka cluster at b:9092 runs metadata.version 3.8 (feature level 20)")
                .contains("needs a KRaft cluster at metadata.version 3.9-IV0 (feature level 21, Kafka 3.9) or newer")
                .contains("kafka-features.sh upgrade --release-version 3.9")
                .doesNotContain("\n"));
    }

    @Test
    void aClusterWithoutMetadataVersionIsZooKeeperModeAndRefused() {
        assertThat(KafkaVersion.refusal(Optional.empty(), "zk:9092")).hasValueSatisfying(m -> assertThat(m)
                .contains("finalizes no metadata.version", "ZooKeeper mode", "migrate it to KRaft"));
    }
}
