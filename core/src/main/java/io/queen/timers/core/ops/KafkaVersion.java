package io.queen.timers.core.ops;

import io.queen.timers.core.config.ConfigException;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.DescribeFeaturesOptions;
import org.apache.kafka.clients.admin.FinalizedVersionRange;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The Kafka clusters queen-timers runs on (docs/operations.md#compatibility): KRaft clusters whose finalized
 * {@code metadata.version} is 3.9-IV0 (feature level {@value #OLDEST_LEVEL}) or newer, the oldest the compatibility
 * matrix runs (CompatibilityMatrixIT's Kafka 3.9 row). A cluster reports its finalized features to any client
 * ({@code Admin.describeFeatures}, answered from ApiVersions: no ACL needed), so the level is the cluster's effective
 * version, not its binaries': Kafka 4 binaries still at {@code metadata.version} 3.8 are refused too, since they behave
 * as 3.8 until an operator finalizes the upgrade ({@code kafka-features.sh upgrade --release-version 3.9}).
 *
 * <p>A cluster that finalizes no {@code metadata.version} runs in ZooKeeper mode (or is older than 2.7): refused as
 * well. Its version cannot be read, ZooKeeper mode ends with Kafka 3.9, and CI never runs it
 * (docs/decisions.md "Kafka brokers: KRaft at metadata.version 3.9 or newer").
 *
 * <p>Checked at a bridge's, an HTTP API's and a sweeper's start (with its relay), where an answer refuses an older
 * cluster in one sentence naming both versions. A broker that does not answer within {@link #AT_START} does not hold
 * up the start (the services ride out a broker outage, start-up included); the readiness probe ({@link KafkaReadiness})
 * checks at its first answer instead, and stays not ready with the same sentence. PRICE: one ApiVersions round trip at start, up to
 * {@link #AT_START} more when no broker answers.
 */
public final class KafkaVersion {

    /** The feature whose finalized level is a KRaft cluster's version. */
    public static final String FEATURE = "metadata.version";
    /** {@code MetadataVersion.IBP_3_9_IV0.featureLevel()} (kafka-server-common; KafkaVersionTest reads it there). */
    public static final short OLDEST_LEVEL = 21;
    /** The release of {@link #OLDEST_LEVEL}. */
    public static final String OLDEST_RELEASE = "3.9";
    /** How long a start waits for the cluster's features before leaving the check to the readiness probe. */
    public static final Duration AT_START = Duration.ofSeconds(5);

    private static final Logger LOG = LoggerFactory.getLogger(KafkaVersion.class);

    private KafkaVersion() {}

    /**
     * The Kafka release that introduced feature level {@code level} of {@code metadata.version}, as "3.8"; levels from
     * 3.9's on are named by the comparison only ("3.9 or newer"). The levels below 3.9's are history, frozen in Kafka's
     * MetadataVersion (1 = 3.0-IV1 ... 20 = 3.8-IV0); KafkaVersionTest compares this table with that class.
     */
    static String release(short level) {
        if (level >= OLDEST_LEVEL) {
            return OLDEST_RELEASE + " or newer";
        }
        if (level >= 20) {
            return "3.8";
        }
        if (level >= 15) {
            return "3.7";
        }
        if (level >= 12) {
            return "3.6";
        }
        if (level >= 9) {
            return "3.5";
        }
        if (level == 8) {
            return "3.4";
        }
        if (level >= 4) {
            return "3.3";
        }
        return level == 3 ? "3.2" : level == 2 ? "3.1" : "3.0";
    }

    /**
     * Why a cluster that finalized {@code level} of {@code metadata.version} (empty: none) is refused, or empty when it
     * is supported. {@code where} names the cluster (its bootstrap servers).
     */
    static Optional<String> refusal(Optional<Short> level, String where) {
        String supported = "queen-timers needs a KRaft cluster at metadata.version " + OLDEST_RELEASE + "-IV0 (feature level "
                + OLDEST_LEVEL + ", Kafka " + OLDEST_RELEASE + ") or newer (docs/operations.md#compatibility)";
        if (level.isEmpty()) {
            return Optional.of("the Kafka cluster at " + where + " finalizes no metadata.version, so it runs in ZooKeeper mode (or"
                    + " is older than Kafka 2.7) and its version cannot be read: " + supported + "; migrate it to KRaft");
        }
        if (level.get() >= OLDEST_LEVEL) {
            return Optional.empty();
        }
        return Optional.of("the Kafka cluster at " + where + " runs metadata.version " + release(level.get())
                + " (feature level " + level.get() + "): " + supported + "; upgrade the brokers and finalize it with"
                + " `kafka-features.sh upgrade --release-version " + OLDEST_RELEASE + "`");
    }

    /** The finalized level of {@code metadata.version}, empty when the cluster finalizes none. */
    static Optional<Short> finalizedLevel(Admin admin, Duration timeout) throws ExecutionException, InterruptedException,
            TimeoutException {
        Map<String, FinalizedVersionRange> finalized = admin.describeFeatures(new DescribeFeaturesOptions().timeoutMs((int) timeout.toMillis()))
                .featureMetadata().get(timeout.toMillis() + 500, TimeUnit.MILLISECONDS).finalizedFeatures();
        FinalizedVersionRange range = finalized.get(FEATURE);
        return range == null ? Optional.empty() : Optional.of(range.maxVersionLevel());
    }

    /**
     * At {@code service}'s start: throws {@link ConfigException} (a deployment's choice, which waiting would not fix) when
     * the cluster of {@code adminProps} (the process's {@code kafka.*} with {@code kafka.admin.*} on top) answers with a
     * version older than {@link #OLDEST_RELEASE}; returns quietly when it is supported, and with a warning when no broker
     * answers within {@link #AT_START} (the readiness probe checks it then).
     */
    public static void requireAtStart(Map<String, Object> adminProps, String service) {
        Map<String, Object> props = new HashMap<>(adminProps);
        int ms = (int) AT_START.toMillis();
        props.put(AdminClientConfig.REQUEST_TIMEOUT_MS_CONFIG, ms);
        props.put(AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, ms);
        props.putIfAbsent(AdminClientConfig.CLIENT_ID_CONFIG, "queen-timers-" + service + "-version");
        String where = String.valueOf(props.get(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG));
        Optional<Short> level;
        try (Admin admin = Admin.create(props)) {
            level = finalizedLevel(admin, AT_START);
        } catch (ExecutionException | TimeoutException e) {
            LOG.warn("{}: cannot read the Kafka cluster's metadata.version at start ({}); starting, and the readiness probe checks"
                    + " it at its first answer", service, e instanceof ExecutionException ? e.getCause().getMessage() : "no answer within "
                    + AT_START.toSeconds() + " s");
            return;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(service + ": interrupted while reading the Kafka cluster's metadata.version", e);
        }
        Optional<String> refused = refusal(level, where);
        if (refused.isPresent()) {
            throw new ConfigException(service + " refuses to start: " + refused.get());
        }
        LOG.info("{}: the Kafka cluster at {} runs metadata.version feature level {} (supported: {} and newer)", service, where,
                level.get(), OLDEST_LEVEL);
    }
}
