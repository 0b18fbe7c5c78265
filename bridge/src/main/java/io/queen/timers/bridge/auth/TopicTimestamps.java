package io.queen.timers.bridge.auth;

import io.queen.timers.core.config.ConfigException;
import io.queen.timers.core.retry.Backoff;
import io.queen.timers.core.text.Printable;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.Config;
import org.apache.kafka.clients.admin.ConfigEntry;
import org.apache.kafka.clients.admin.DescribeConfigsOptions;
import org.apache.kafka.common.KafkaFuture;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.config.TopicConfig;
import org.apache.kafka.common.errors.RetriableException;
import org.apache.kafka.common.errors.UnknownTopicOrPartitionException;
import org.apache.kafka.common.record.TimestampType;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Time a token can be checked against: a jwt topic's tokens are checked at the RECORD's timestamp,
 * which under {@code message.timestamp.type=CreateTime} the producer chooses: back-dated, an expired token
 * passes forever; forward-dated, a command slides past {@code bridge.horizon}. So the broker must stamp the
 * time ({@code LogAppendTime}) or bound what a producer may write ({@code message.timestamp.before.max.ms} and
 * {@code .after.max.ms}, Kafka 3.6+, both within the topic's {@code auth.clock.skew}). Read from the broker with
 * the Admin client: the bridge refuses to start otherwise ({@link #requireSafe}), and the ingest loop reads
 * again on every assignment and periodically ({@link #check}), pausing an unsafe topic's partitions (its
 * records are never rejected, they wait) while {@link #problems()} keeps the bridge not ready.
 * A broker without the two bounds (before 3.6) counts as unbounded. Thread-safe.
 */
public final class TopicTimestamps implements AutoCloseable {

    private static final Logger LOG = LoggerFactory.getLogger(TopicTimestamps.class);
    static final String TYPE = TopicConfig.MESSAGE_TIMESTAMP_TYPE_CONFIG;
    static final String BEFORE = TopicConfig.MESSAGE_TIMESTAMP_BEFORE_MAX_MS_CONFIG;
    static final String AFTER = TopicConfig.MESSAGE_TIMESTAMP_AFTER_MAX_MS_CONFIG;
    private static final Duration REQUEST_TIMEOUT = Duration.ofSeconds(10);

    private final Admin admin;
    private final Map<String, Duration> skews;
    private final String bootstrap;
    /** The jwt topics found unsafe at the last reading, and why (readiness reads it from any thread). */
    private final Map<String, String> unsafe = new ConcurrentHashMap<>();

    /**
     * @param admin     built from the bridge's {@code kafka.*} settings; closed with this
     * @param skews     every jwt topic and its {@code auth.clock.skew}
     * @param bootstrap the bootstrap servers, for the command line a refusal prints
     */
    public TopicTimestamps(Admin admin, Map<String, Duration> skews, String bootstrap) {
        this.admin = admin;
        this.skews = Map.copyOf(skews);
        this.bootstrap = bootstrap;
    }

    public Set<String> topics() {
        return skews.keySet();
    }

    /**
     * At start: every jwt topic must exist and be safe, else a {@link ConfigException} naming each topic and the
     * kafka-configs command that fixes it. A broker that does not answer is waited for (each try bounded by 10 s)
     * for at most {@code timeout} (0 = indefinitely), as start-up waits for the database.
     */
    public void requireSafe(Duration timeout) {
        long deadline = System.nanoTime() + timeout.toNanos();
        Backoff.Waits waits = new Backoff(Duration.ofMillis(100), Duration.ofSeconds(5)).waits();
        while (true) {
            try {
                Map<String, String> found = read(true);
                if (!found.isEmpty()) {
                    throw new ConfigException("the bridge does not start: " + String.join("; ", found.values()));
                }
                return;
            } catch (KafkaUnavailable e) {
                if (!timeout.isZero() && System.nanoTime() - deadline >= 0) {
                    throw new IllegalStateException("cannot read the timestamp settings of the jwt topics " + topics()
                            + " (setting startup.timeout = " + timeout + "): " + e.getMessage(), e);
                }
                Duration wait = waits.next();
                LOG.warn("cannot read the timestamp settings of the jwt topics {} ({}); retrying in {} ms", topics(), e.getMessage(),
                        wait.toMillis());
                try {
                    Thread.sleep(wait.toMillis());
                } catch (InterruptedException ie) {
                    Thread.currentThread().interrupt();
                    throw new IllegalStateException("interrupted while reading the jwt topics' timestamp settings", ie);
                }
            }
        }
    }

    /**
     * Reads every jwt topic's settings again; returns the unsafe topics (also kept for {@link #problems()}) and logs
     * each change. A topic whose settings cannot be read (the broker away, the topic deleted) keeps its last state.
     *
     * @throws KafkaUnavailable when the broker does not answer: nothing is changed
     */
    public Set<String> check() {
        Map<String, String> found = read(false);
        for (String topic : skews.keySet()) {
            String now = found.get(topic);
            String before = now == null ? unsafe.remove(topic) : unsafe.put(topic, now);
            if (now != null && !now.equals(before)) {
                LOG.error("{}; its partitions are PAUSED (no record is read, none rejected) until it is fixed", now);
            } else if (now == null && before != null) {
                LOG.warn("topic {} has safe record timestamps again; its partitions resume", topic);
            }
        }
        return Set.copyOf(unsafe.keySet());
    }

    /** Empty when every jwt topic's timestamps can be trusted (as last read); otherwise each unsafe topic and its fix. Memory only. */
    public Optional<String> problems() {
        if (unsafe.isEmpty()) {
            return Optional.empty();
        }
        return Optional.of(String.join("; ", new TreeMap<>(unsafe).values()));
    }

    /** Topic → why unsafe; a topic missing (only with {@code missingIsUnsafe}) is unsafe too. */
    private Map<String, String> read(boolean missingIsUnsafe) {
        List<ConfigResource> resources = new ArrayList<>();
        skews.keySet().forEach(t -> resources.add(new ConfigResource(ConfigResource.Type.TOPIC, t)));
        Map<ConfigResource, KafkaFuture<Config>> futures = admin.describeConfigs(resources,
                new DescribeConfigsOptions().timeoutMs((int) REQUEST_TIMEOUT.toMillis())).values();
        Map<String, String> out = new TreeMap<>();
        for (ConfigResource r : resources) {
            String topic = r.name();
            Config config;
            try {
                config = futures.get(r).get(REQUEST_TIMEOUT.toMillis() + 1000, TimeUnit.MILLISECONDS);
            } catch (ExecutionException e) {
                if (e.getCause() instanceof UnknownTopicOrPartitionException) {
                    if (missingIsUnsafe) {
                        out.put(topic, "jwt topic " + topic + " does not exist; create it with its timestamps stamped by the broker: "
                                + "kafka-topics.sh --bootstrap-server " + bootstrap + " --create --topic " + topic
                                + " --config " + TYPE + "=LogAppendTime (with your partitions and replication factor)");
                    }
                    continue; // deleted since: its partitions are not assigned, nothing to hold
                }
                if (e.getCause() instanceof RetriableException) {
                    throw new KafkaUnavailable(Printable.line(String.valueOf(e.getCause().getMessage())), e.getCause());
                }
                // not authorized to describe it, or another permanent error: its timestamps cannot be trusted
                out.put(topic, "cannot read the settings of jwt topic " + topic + " (" + Printable.line(String.valueOf(e.getCause()))
                        + "): the bridge needs DescribeConfigs on it to know that its record timestamps can be trusted");
                continue;
            } catch (TimeoutException e) {
                throw new KafkaUnavailable("no answer within " + REQUEST_TIMEOUT.toMillis() + " ms", e);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new KafkaUnavailable("interrupted", e);
            }
            judge(topic, config, skews.get(topic), bootstrap).ifPresent(p -> out.put(topic, p));
        }
        return out;
    }

    /**
     * Why {@code topic}'s record timestamps cannot be trusted with its tokens, with the command line that fixes it;
     * empty when the broker stamps them or bounds them within {@code skew}. A bound this broker does not know is unbounded.
     */
    static Optional<String> judge(String topic, Config config, Duration skew, String bootstrap) {
        String type = value(config, TYPE);
        if (TimestampType.LOG_APPEND_TIME.name.equalsIgnoreCase(type)) {
            return Optional.empty();
        }
        long skewMs = skew.toMillis();
        Long before = longValue(config, BEFORE);
        Long after = longValue(config, AFTER);
        if (before != null && after != null && before <= skewMs && after <= skewMs) {
            return Optional.empty();
        }
        return Optional.of("jwt topic " + topic + " lets producers choose their record timestamps, at which its tokens' exp, nbf and iat"
                + " are checked (" + TYPE + "=" + (type == null ? "CreateTime" : type) + ", " + BEFORE + "=" + shown(before) + ", "
                + AFTER + "=" + shown(after) + "; both must be at most topic." + topic + ".auth.clock.skew = " + skewMs + " ms"
                + " unless the broker stamps the time); fix: kafka-configs.sh --bootstrap-server " + bootstrap
                + " --alter --entity-type topics --entity-name " + topic + " --add-config " + TYPE + "=LogAppendTime");
    }

    private static String shown(Long v) {
        return v == null ? "(unknown to this broker: unbounded)" : v == Long.MAX_VALUE ? v + " (unbounded)" : String.valueOf(v);
    }

    private static String value(Config config, String name) {
        ConfigEntry e = config.get(name);
        return e == null || e.value() == null ? null : e.value().trim();
    }

    private static Long longValue(Config config, String name) {
        String v = value(config, name);
        try {
            return v == null ? null : Long.parseLong(v);
        } catch (NumberFormatException e) {
            return null;
        }
    }

    @Override
    public void close() {
        admin.close(Duration.ofSeconds(2));
    }

    /** The broker did not answer (or answered "try again"): nothing is known, nothing changes. */
    public static final class KafkaUnavailable extends RuntimeException {
        KafkaUnavailable(String message, Throwable cause) {
            super(message, cause);
        }
    }
}
