package io.queen.timers.core.db;

import static org.assertj.core.api.Assertions.assertThat;

import com.zaxxer.hikari.HikariDataSource;
import io.queen.timers.core.config.CommonSettings;
import io.queen.timers.core.config.Config;
import io.queen.timers.core.config.DatabaseSettings;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * The pools name their transaction isolation. Left to detection, HikariCP reads the driver's default from the pool's first
 * connection; when PostgreSQL ends that connection mid-read (a restart), it keeps -1 and every later connection fails with
 * "Transaction isolation level -1 not supported" (HikariCP issues 1944, 2269): the fault harness saw a sweeper started during
 * a restart wait on such a pool for two minutes. A named level is never detected, so that state cannot arise.
 */
class DataSourcesTest {

    @Test
    void everyPoolNamesReadCommittedInsteadOfDetectingIt() {
        Config config = CommonSettings.definition().parse(Map.of(
                "jdbc.url", "jdbc:postgresql://127.0.0.1:1/none", "jdbc.user", "u", "jdbc.password", "p",
                "kafka.bootstrap.servers", "127.0.0.1:1"));
        try (HikariDataSource work = DataSources.create(DatabaseSettings.from(config), SessionTimeouts.OPERATOR, 1, null);
                HikariDataSource probes = DataSources.forProbes(DatabaseSettings.from(config), SessionTimeouts.OPERATOR, 1, null)) {
            assertThat(work.getTransactionIsolation()).isEqualTo("TRANSACTION_READ_COMMITTED");
            assertThat(probes.getTransactionIsolation()).isEqualTo("TRANSACTION_READ_COMMITTED");
        }
    }
}
