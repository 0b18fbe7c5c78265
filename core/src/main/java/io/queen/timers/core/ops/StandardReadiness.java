package io.queen.timers.core.ops;

import com.zaxxer.hikari.HikariDataSource;
import io.micrometer.core.instrument.MeterRegistry;
import io.queen.timers.core.config.CommonSettings;
import io.queen.timers.core.config.KafkaSettings;
import io.queen.timers.core.health.Health;
import io.queen.timers.core.health.ReadinessCheck;
import java.time.Clock;
import io.queen.timers.core.db.DataSources;
import io.queen.timers.core.db.SessionTimeouts;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

/**
 * The checks every service's /health/ready has in common: the database (reachable, schema current)
 * and Kafka (reachable), built from the process's own settings. They are probed on a thread of their own
 * every {@link #PROBE_EVERY} and the answers kept in memory: a readiness request reads the last answer
 * and never waits for a dependency. An answer older than {@link #STALE_AFTER} (the probe itself hangs)
 * is a problem of its own. The database is probed through a pool of one connection of its own, so a
 * service whose pool is exhausted by work still answers its probe, and a probe never takes a connection
 * the work needs. Every probe gives its connection back whatever fails, so the probe answers "ready"
 * again at its first round after the database is back (at most {@link #PROBE_EVERY} plus the probe).
 */
public final class StandardReadiness implements AutoCloseable {

    private static final Duration KAFKA_TIMEOUT = Duration.ofSeconds(3);
    static final Duration PROBE_EVERY = Duration.ofSeconds(5);
    static final Duration STALE_AFTER = Duration.ofSeconds(30);

    private final HikariDataSource probePool;
    private final KafkaReadiness kafka;
    private final Cached database;
    private final Cached kafkaCached;
    private final ScheduledExecutorService prober;

    /** {@code registry}: where the probe pool's connection counts go ({@code hikaricp_*{pool="<process>-readiness"}}). */
    public StandardReadiness(CommonSettings config, String processName, Clock clock, MeterRegistry registry) {
        this.probePool = DataSources.forProbes(config.database(),
                new SessionTimeouts(processName + "-readiness", Duration.ofSeconds(5), Duration.ofSeconds(2), Duration.ofSeconds(10)), 1, registry);
        this.kafka = new KafkaReadiness(config.kafka(KafkaSettings.Client.ADMIN), KAFKA_TIMEOUT, registry);
        this.database = new Cached(new DatabaseReadiness(probePool), clock);
        this.kafkaCached = new Cached(kafka, clock);
        this.prober = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, processName + "-readiness-probe");
            t.setDaemon(true);
            return t;
        });
        prober.scheduleWithFixedDelay(() -> {
            database.probe();
            kafkaCached.probe();
        }, 0, PROBE_EVERY.toMillis(), TimeUnit.MILLISECONDS);
    }

    /** Adds the cached database and Kafka checks to {@code health}. */
    public void registerWith(Health health) {
        health.add(database);
        health.add(kafkaCached);
    }

    public List<ReadinessCheck> checks() {
        return List.of(database, kafkaCached);
    }

    @Override
    public void close() {
        prober.shutdownNow();
        kafka.close();
        probePool.close();
    }

    /** The last answer of a probing check, and when it was given. */
    private static final class Cached implements ReadinessCheck {
        private final ReadinessCheck probe;
        private final Clock clock;
        private volatile Optional<String> answer = Optional.of("not probed yet");
        private volatile Instant answeredAt;

        Cached(ReadinessCheck probe, Clock clock) {
            this.probe = probe;
            this.clock = clock;
            this.answeredAt = clock.instant();
        }

        void probe() {
            Optional<String> a;
            try {
                a = probe.problem();
            } catch (RuntimeException e) {
                a = Optional.of(e.toString());
            }
            answer = a;
            answeredAt = clock.instant();
        }

        @Override
        public String name() {
            return probe.name();
        }

        @Override
        public Optional<String> problem() {
            Instant at = answeredAt;
            if (Duration.between(at, clock.instant()).compareTo(STALE_AFTER) > 0) {
                return Optional.of("the probe has not answered since " + at + (answer.isPresent() ? "; last answer: " + answer.get() : ""));
            }
            return answer;
        }
    }
}
