package io.queen.timers.core.db;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import com.zaxxer.hikari.metrics.micrometer.MicrometerMetricsTrackerFactory;
import io.micrometer.core.instrument.MeterRegistry;
import io.queen.timers.core.config.CommonSettings;
import io.queen.timers.core.config.DatabaseSettings;

/** Builds a process's connection pools from {@link CommonSettings}, with the timeouts of their role. */
public final class DataSources {

    private DataSources() {}

    /** A pool named after the role (also its application_name in pg_stat_activity). */
    public static HikariDataSource create(DatabaseSettings config, SessionTimeouts timeouts) {
        return create(config, timeouts, config.poolSize());
    }

    public static HikariDataSource create(DatabaseSettings config, SessionTimeouts timeouts, int maxPoolSize) {
        return build(config, timeouts, maxPoolSize, 1, 5_000, null);
    }

    /**
     * As {@link #create(DatabaseSettings, SessionTimeouts)}, with the pool's connections (active, idle, pending, total,
     * acquire and usage times) on {@code registry} as {@code hikaricp_*{pool="<role>"}}: a connection that is
     * never given back shows as an active one that stays.
     */
    public static HikariDataSource create(DatabaseSettings config, SessionTimeouts timeouts, MeterRegistry registry) {
        return create(config, timeouts, config.poolSize(), registry);
    }

    public static HikariDataSource create(DatabaseSettings config, SessionTimeouts timeouts, int maxPoolSize, MeterRegistry registry) {
        return build(config, timeouts, maxPoolSize, 1, 5_000, registry);
    }

    /**
     * A pool for readiness probes: no idle connection kept and a short wait for one, because a probe
     * answers quickly or reports; it never waits behind the work it reports on.
     */
    public static HikariDataSource forProbes(DatabaseSettings config, SessionTimeouts timeouts, int maxPoolSize, MeterRegistry registry) {
        return build(config, timeouts, maxPoolSize, 0, 2_000, registry);
    }

    private static HikariDataSource build(DatabaseSettings config, SessionTimeouts timeouts, int maxPoolSize, int minIdle,
            long connectionTimeoutMs, MeterRegistry registry) {
        HikariConfig c = new HikariConfig();
        c.setJdbcUrl(config.url());
        c.setUsername(config.user());
        c.setPassword(config.password());
        c.setMaximumPoolSize(maxPoolSize);
        c.setMinimumIdle(minIdle);
        c.setPoolName(timeouts.role());
        timeouts.applyTo(c);
        // Start even when the database is down: the loops pause and retry (never skip), and
        // /health/ready says why. Failing the constructor would turn an outage into a crash loop.
        c.setInitializationFailTimeout(-1);
        c.setConnectionTimeout(connectionTimeoutMs);
        // Named, never detected: HikariCP reads the driver's default from the pool's first connection, and when that read
        // fails (PostgreSQL ending connections as it restarts) it keeps -1 and every later connection fails to set it
        // ("Transaction isolation level -1 not supported", github.com/brettwooldridge/HikariCP/issues/1944 and /2269): a
        // pool broken for good. The fault harness saw a sweeper started during a restart wait minutes on it. READ
        // COMMITTED is PostgreSQL's default and what every statement here is written for.
        c.setTransactionIsolation("TRANSACTION_READ_COMMITTED");
        if (registry != null) {
            c.setMetricsTrackerFactory(new MicrometerMetricsTrackerFactory(registry));
        }
        return new HikariDataSource(c);
    }
}
