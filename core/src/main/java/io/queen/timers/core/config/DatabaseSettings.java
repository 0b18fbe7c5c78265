package io.queen.timers.core.config;

import io.queen.timers.core.text.Secrets;

/**
 * Where a process's connections go and as whom: {@code jdbc.*} of {@link CommonSettings}, the one place they are read.
 * A tool that selects only the URL and the credentials (the CLI's database options) gets the pool size's default.
 *
 * @param url      {@link CommonSettings#JDBC_URL}
 * @param user     {@link CommonSettings#JDBC_USER}
 * @param password {@link CommonSettings#JDBC_PASSWORD}, never printed
 * @param poolSize {@link CommonSettings#JDBC_POOL_SIZE}
 */
public record DatabaseSettings(String url, String user, String password, int poolSize) {

    public static DatabaseSettings from(Config config) {
        int pool = config.definition().key(CommonSettings.JDBC_POOL_SIZE) != null
                ? config.intValue(CommonSettings.JDBC_POOL_SIZE)
                : Integer.parseInt(CommonSettings.definition().key(CommonSettings.JDBC_POOL_SIZE).defaultValue());
        return new DatabaseSettings(config.string(CommonSettings.JDBC_URL), config.string(CommonSettings.JDBC_USER),
                config.string(CommonSettings.JDBC_PASSWORD), pool);
    }

    /** The password masked, as in every log line; a password inside the URL too. */
    @Override
    public String toString() {
        return "DatabaseSettings[url=" + Secrets.mask(url) + ", user=" + user + ", password=" + Secrets.MASK + ", poolSize=" + poolSize + "]";
    }
}
