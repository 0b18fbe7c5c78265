package io.queen.timers.core.ops;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import io.queen.timers.core.config.CommonSettings;
import io.queen.timers.core.config.Config;
import io.queen.timers.core.db.SessionTimeouts;
import java.time.Duration;
import java.util.List;

/**
 * The checks every service's /health/ready has in common: the database (reachable, schema current)
 * and Kafka (reachable), built from the process's own settings. The database is probed through a
 * pool of two connections of its own (Flyway reads the schema version with two), so a service whose pool is exhausted by work still answers
 * its probe, and a probe never takes a connection the work needs.
 */
public final class StandardReadiness implements AutoCloseable {

    private static final Duration KAFKA_TIMEOUT = Duration.ofSeconds(3);

    private final HikariDataSource probePool;
    private final KafkaReadiness kafka;
    private final DatabaseReadiness database;

    public StandardReadiness(Config config, String processName) {
        HikariConfig c = new HikariConfig();
        c.setJdbcUrl(config.string(CommonSettings.JDBC_URL));
        c.setUsername(config.string(CommonSettings.JDBC_USER));
        c.setPassword(config.string(CommonSettings.JDBC_PASSWORD));
        c.setMaximumPoolSize(2); // Flyway's info() holds two connections at once
        c.setMinimumIdle(0);
        c.setConnectionTimeout(2_000);
        c.setInitializationFailTimeout(-1);
        c.setPoolName(processName + "-readiness");
        // a probe answers quickly or reports; it never waits behind the work it reports on
        new SessionTimeouts(processName + "-readiness", Duration.ofSeconds(5), Duration.ofSeconds(2), Duration.ofSeconds(10)).applyTo(c);
        this.probePool = new HikariDataSource(c);
        this.database = new DatabaseReadiness(probePool);
        this.kafka = new KafkaReadiness(config.kafka(), KAFKA_TIMEOUT);
    }

    public List<ReadinessCheck> checks() {
        return List.of(database, kafka);
    }

    @Override
    public void close() {
        kafka.close();
        probePool.close();
    }
}
