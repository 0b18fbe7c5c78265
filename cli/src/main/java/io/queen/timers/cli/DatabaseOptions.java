package io.queen.timers.cli;

import com.zaxxer.hikari.HikariDataSource;
import io.queen.timers.core.config.CommonSettings;
import io.queen.timers.core.config.ConfigDef;
import io.queen.timers.core.config.ConfigLoader;
import io.queen.timers.core.db.DataSources;
import io.queen.timers.core.config.DatabaseSettings;
import io.queen.timers.core.text.Secrets;
import io.queen.timers.core.db.SessionTimeouts;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.SQLException;
import java.util.HashMap;
import java.util.Map;
import picocli.CommandLine.Option;

/**
 * How an operator tool finds the database: the same properties file and environment variables as
 * the services ({@code --config}, {@code QUEEN_JDBC_URL}, ...), and flags on top of both.
 */
public final class DatabaseOptions {

    @Option(names = "--config", paramLabel = "FILE", description = "Properties file with the services' keys (jdbc.url, ...).")
    Path config;

    @Option(names = "--jdbc-url", paramLabel = "URL", description = "PostgreSQL JDBC URL (else jdbc.url / QUEEN_JDBC_URL).")
    String jdbcUrl;

    @Option(names = "--jdbc-user", paramLabel = "USER", description = "Database user (else jdbc.user / QUEEN_JDBC_USER, default postgres).")
    String jdbcUser;

    @Option(names = "--jdbc-password", paramLabel = "PASSWORD",
            description = "Database password (prefer QUEEN_JDBC_PASSWORD: a flag shows in the process list).")
    String jdbcPassword;

    /** The keys an operator tool reads (`migrate` among them): the database's, nothing else. */
    public static ConfigDef definition() {
        return CommonSettings.definition().select(
                CommonSettings.JDBC_URL, CommonSettings.JDBC_USER, CommonSettings.JDBC_PASSWORD, CommonSettings.JDBC_POOL_SIZE);
    }

    /** The database settings: file, then environment, then these flags. */
    public DatabaseSettings settings(Map<String, String> env) {
        return DatabaseSettings.from(ConfigLoader.load(definition(), config, environment(env)));
    }

    /** {@code env} with these flags on top (each flag wins over its variable) and the tools' pool size as the default. */
    Map<String, String> environment(Map<String, String> env) {
        ConfigDef def = definition();
        Map<String, String> merged = new HashMap<>(env);
        put(merged, def, CommonSettings.JDBC_URL, jdbcUrl);
        put(merged, def, CommonSettings.JDBC_USER, jdbcUser);
        put(merged, def, CommonSettings.JDBC_PASSWORD, jdbcPassword);
        // migrate holds one connection for its advisory lock while Flyway uses up to two more
        merged.putIfAbsent(def.key(CommonSettings.JDBC_POOL_SIZE).env(), "4");
        return merged;
    }

    /** A small pool that has answered once: an unreachable database is one clear line now, not a timeout later. */
    public HikariDataSource open(Map<String, String> env, SessionTimeouts timeouts) {
        DatabaseSettings c = settings(env);
        HikariDataSource ds = DataSources.create(c, timeouts);
        try (Connection probe = ds.getConnection()) {
            return ds;
        } catch (SQLException e) {
            ds.close();
            Throwable root = e;
            while (root.getCause() != null && root.getCause() != root) {
                root = root.getCause();
            }
            throw new UserError("cannot connect to " + Secrets.mask(c.url()) + " as " + c.user()
                    + ": " + root.getMessage());
        }
    }

    static void put(Map<String, String> env, ConfigDef def, String key, String flag) {
        if (flag != null) {
            env.put(def.key(key).env(), flag);
            env.remove(def.key(key).env() + "_FILE"); // the flag wins over both forms of the variable
        }
    }
}
