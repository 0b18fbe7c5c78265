package io.queen.timers.core.db;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import io.queen.timers.core.config.CommonSettings;
import io.queen.timers.core.config.Config;

/** Builds the process's one connection pool from {@link CommonSettings}. */
public final class DataSources {

    private DataSources() {}

    public static HikariDataSource create(Config config, String poolName) {
        HikariConfig c = new HikariConfig();
        c.setJdbcUrl(config.string(CommonSettings.JDBC_URL));
        c.setUsername(config.string(CommonSettings.JDBC_USER));
        c.setPassword(config.string(CommonSettings.JDBC_PASSWORD));
        c.setMaximumPoolSize(config.intValue(CommonSettings.JDBC_POOL_SIZE));
        c.setMinimumIdle(1);
        c.setPoolName(poolName);
        // Start even when the database is down: the loops pause and retry (never skip), and
        // /health/ready says why. Failing the constructor would turn an outage into a crash loop.
        c.setInitializationFailTimeout(-1);
        c.setConnectionTimeout(5_000);
        return new HikariDataSource(c);
    }
}
