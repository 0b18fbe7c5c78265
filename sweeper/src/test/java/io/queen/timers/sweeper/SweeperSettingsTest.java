package io.queen.timers.sweeper;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.queen.timers.core.config.CommonSettings;
import io.queen.timers.core.config.ConfigException;
import io.queen.timers.core.config.ConfigLoader;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The defaults (docs/configuration.md#sweeper-settings), environment overrides, and one-line errors naming the setting. */
class SweeperSettingsTest {

    private static Map<String, String> required() {
        Map<String, String> env = new HashMap<>();
        env.put("QUEEN_JDBC_URL", "jdbc:postgresql://db/queen");
        env.put("QUEEN_KAFKA_BOOTSTRAP", "kafka:9092");
        return env;
    }

    /** A dated figure ages in a key's doc (config-docs, --help); docs/configuration.md's measured-defaults table keeps them. */
    @Test
    void noSweeperKeyDocCarriesADatedMeasurement() {
        java.util.regex.Pattern dated = java.util.regex.Pattern.compile("\\b20\\d\\d-\\d\\d-\\d\\d\\b|\\w+Bench\\b");
        assertThat(SweeperSettings.definition().keys())
                .filteredOn(k -> k.name().startsWith("sweeper.") || k.name().startsWith("recurring."))
                .isNotEmpty()
                .allSatisfy(k -> assertThat(dated.matcher(k.doc()).find()).as("%s's doc: %s", k.name(), k.doc()).isFalse());
    }

    @Test
    void defaultsAreTheDesignsStartingPointsExceptTheTwoFireBenchMeasured() {
        SweeperSettings s = SweeperSettings.from(ConfigLoader.load(SweeperSettings.definition(), null, required()));
        assertThat(s.claim().batchSize()).isEqualTo(512);   // first default 200; 512 = 64 shards x 8 (see SweeperSettings)
        assertThat(s.loops().workers()).isEqualTo(2);
        assertThat(s.claim().lease()).isEqualTo(Duration.ofSeconds(30));
        assertThat(s.claim().perTenantPerShard()).isEqualTo(8);
        // on as shipped (docs/sweeper.md#the-fire-budget): protection that is off protects nobody
        assertThat(s.claim().tenantFiresPerSecond()).isEqualTo(1000);
        assertThat(s.retry().maxAttempts()).isEqualTo(5);
        assertThat(s.claim().maxFireBytes()).isEqualTo(8 * 1024 * 1024);
        assertThat(s.retry().backoffBase()).isEqualTo(Duration.ofSeconds(1));
        assertThat(s.retry().backoffMax()).isEqualTo(Duration.ofSeconds(60));
        assertThat(s.retry().transientBackoff()).isEqualTo(Duration.ofSeconds(1));
        assertThat(s.loops().sleepMin()).isEqualTo(Duration.ofMillis(5));
        assertThat(s.loops().sleepNear()).isEqualTo(Duration.ofSeconds(1));
        assertThat(s.loops().idleMax()).isEqualTo(Duration.ofSeconds(30));
        assertThat(s.cleanup().enabled()).isTrue();
        assertThat(s.cleanup().interval()).isEqualTo(Duration.ofMinutes(10));
        assertThat(s.cleanup().idle()).isEqualTo(Duration.ofDays(7));
    }

    @Test
    void environmentOverridesUseDerivedNames() {
        Map<String, String> env = required();
        env.put("QUEEN_SWEEPER_BATCH_SIZE", "500");
        env.put("QUEEN_SWEEPER_LEASE", "10s");
        env.put("QUEEN_CLEANUP_ENABLED", "false");
        SweeperSettings s = SweeperSettings.from(ConfigLoader.load(SweeperSettings.definition(), null, env));
        assertThat(s.claim().batchSize()).isEqualTo(500);
        assertThat(s.claim().lease()).isEqualTo(Duration.ofSeconds(10));
        assertThat(s.cleanup().enabled()).isFalse();
        assertThat(SweeperSettings.definition().key(CommonSettings.JDBC_URL).env()).isEqualTo("QUEEN_JDBC_URL");
    }

    @Test
    void anIdleSleepAsLongAsTheStallBoundIsRefused() {
        Map<String, String> env = required();
        env.put("QUEEN_SWEEPER_IDLE_MAX", "2m");
        assertThatThrownBy(() -> SweeperSettings.from(ConfigLoader.load(SweeperSettings.definition(), null, env)))
                .isInstanceOf(ConfigException.class).hasMessageContaining("sweeper.idle.max").hasMessageContaining("health.stall.after");
        env.put("QUEEN_HEALTH_STALL_AFTER", "5m");
        assertThat(SweeperSettings.from(ConfigLoader.load(SweeperSettings.definition(), null, env)).loops().idleMax()).isEqualTo(Duration.ofMinutes(2));
    }

    @Test
    void badValuesAreOneLineNamingTheSetting() {
        Map<String, String> env = required();
        env.put("QUEEN_SWEEPER_BATCH_SIZE", "0");
        assertThatThrownBy(() -> ConfigLoader.load(SweeperSettings.definition(), null, env))
                .isInstanceOf(ConfigException.class).hasMessageContaining("sweeper.batch.size");
        Map<String, String> env2 = required();
        env2.put("QUEEN_SWEEPER_BACKOFF_BASE", "2m");
        assertThatThrownBy(() -> SweeperSettings.from(ConfigLoader.load(SweeperSettings.definition(), null, env2)))
                .isInstanceOf(ConfigException.class).hasMessageContaining("sweeper.backoff.base");
    }

    /** Issue 47, point 3: a setting the owner's bounds refuse at every call is refused at start, each named with its bound. */
    @Test
    void aSettingBeyondTheOwnersBoundsIsRefusedNamingBoth() {
        Map<String, String> env = required();
        env.put("QUEEN_SWEEPER_MAX_ATTEMPTS", "3");
        env.put("QUEEN_RECURRING_MAX_CONSECUTIVE_DEAD_LETTERS", "2");
        env.put("QUEEN_SWEEPER_TRANSIENT_BACKOFF", "5m");
        env.put("QUEEN_SWEEPER_LEASE", "10m");
        SweeperSettings s = SweeperSettings.from(ConfigLoader.load(SweeperSettings.definition(), null, env));
        OwnerBounds defaults = new OwnerBounds(true, Duration.ofHours(1), Duration.ofMinutes(1), Duration.ofMinutes(10), Duration.ofDays(1), 5, 3);
        assertThatThrownBy(() -> s.checkOwnerBounds(defaults)).isInstanceOf(ConfigException.class)
                .hasMessageContaining("sweeper.max.attempts = 3 is below min_attempts = 5")
                .hasMessageContaining("recurring.max.consecutive.dead.letters = 2 is below min_dead_letters_in_row = 3")
                .hasMessageContaining("UPDATE queen.timer_settings")
                .hasMessageNotContaining("sweeper.transient.backoff").hasMessageNotContaining("sweeper.lease");
        // a login that may change the bounds (the owner, a superuser) is held only to those that bind every caller
        s.checkOwnerBounds(new OwnerBounds(false, Duration.ofHours(1), Duration.ofMinutes(1), Duration.ofMinutes(10), Duration.ofDays(1), 5, 3));
        assertThatThrownBy(() -> s.checkOwnerBounds(new OwnerBounds(false, Duration.ofMinutes(5), Duration.ofMinutes(1), Duration.ofSeconds(1),
                Duration.ofSeconds(1), 50, 30))).isInstanceOf(ConfigException.class)
                .hasMessageContaining("sweeper.lease = PT10M exceeds max_lease = PT5M").hasMessageNotContaining("max_attempts");
        assertThatThrownBy(() -> SweeperSettings.from(ConfigLoader.load(SweeperSettings.definition(), null, required()))
                .checkOwnerBounds(new OwnerBounds(true, Duration.ofHours(1), Duration.ofDays(30), Duration.ofMillis(100), Duration.ofSeconds(30), 5, 3)))
                .isInstanceOf(ConfigException.class)
                .hasMessageContaining("cleanup.idle = PT168H is below min_cleanup_idle = PT720H")
                .hasMessageContaining("sweeper.transient.backoff = PT1S exceeds max_transient_backoff = PT0.1S")
                .hasMessageContaining("sweeper.backoff.max = PT1M exceeds max_backoff = PT30S");
    }
}
