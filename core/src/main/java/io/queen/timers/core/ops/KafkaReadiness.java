package io.queen.timers.core.ops;

import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.binder.kafka.KafkaClientMetrics;
import io.queen.timers.core.health.ReadinessCheck;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClient;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.DescribeClusterOptions;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Ready when the Kafka cluster answers {@code describeCluster} within a short timeout and its version is supported
 * ({@link KafkaVersion}, read once at the first answer: a too old cluster keeps the process not ready). One Admin
 * client per process, opened with the same {@code kafka.*} settings as the other clients (SASL/TLS),
 * closed with the process.
 */
public final class KafkaReadiness implements ReadinessCheck, AutoCloseable {

    private static final Logger LOG = LoggerFactory.getLogger(KafkaReadiness.class);

    private final Admin admin;
    private final Duration timeout;
    private final KafkaClientMetrics metrics;
    private final String where;
    /** Why the cluster's version is refused (empty: supported); null until a broker first answered. */
    private volatile Optional<String> version;

    /** @param kafkaProps the process's Kafka client settings ({@code Config.kafka()}), bootstrap included */
    public KafkaReadiness(Map<String, Object> kafkaProps, Duration timeout) {
        this(kafkaProps, timeout, null);
    }

    /** As above, the Admin client's own meters ({@code kafka_admin_client_*}) on {@code registry} when not null. */
    public KafkaReadiness(Map<String, Object> kafkaProps, Duration timeout, MeterRegistry registry) {
        Map<String, Object> props = new HashMap<>(kafkaProps);
        int ms = (int) timeout.toMillis();
        props.put(AdminClientConfig.REQUEST_TIMEOUT_MS_CONFIG, ms);
        props.put(AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, ms);
        props.putIfAbsent(AdminClientConfig.CLIENT_ID_CONFIG, "queen-timers-readiness");
        AdminClient client = AdminClient.create(props);   // KafkaClientMetrics takes the AdminClient type, not Admin
        this.admin = client;
        this.timeout = timeout;
        this.where = String.valueOf(props.get(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG));
        this.metrics = registry == null ? null : new KafkaClientMetrics(client);
        if (metrics != null) {
            metrics.bindTo(registry);
        }
    }

    @Override
    public String name() {
        return "kafka";
    }

    @Override
    public Optional<String> problem() {
        try {
            admin.describeCluster(new DescribeClusterOptions().timeoutMs((int) timeout.toMillis()))
                    .clusterId().get(timeout.toMillis() + 500, TimeUnit.MILLISECONDS);
            if (version == null) { // once, at the first answer: the start may not have had one (KafkaVersion)
                version = KafkaVersion.refusal(KafkaVersion.finalizedLevel(admin, timeout), where);
                version.ifPresent(v -> LOG.error("not ready until the cluster is upgraded: {}", v));
            }
            return version;
        } catch (ExecutionException e) {
            return Optional.of("unreachable: " + e.getCause().getMessage());
        } catch (TimeoutException e) {
            return Optional.of("no answer within " + timeout.toMillis() + " ms");
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return Optional.of("interrupted");
        }
    }

    @Override
    public void close() {
        if (metrics != null) {
            metrics.close();
        }
        admin.close(Duration.ofSeconds(2));
    }
}
