package io.queen.timers.stack;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.queen.timers.core.config.CommonSettings;
import io.queen.timers.core.config.Config;
import io.queen.timers.core.config.ConfigException;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The settings builder: a value of the key's type is read back by the definition as set; anything else is refused at once. */
class ServiceSettingsTest {

    private static ServiceSettings settings() {
        return ServiceSettings.of(CommonSettings.definition())
                .set(CommonSettings.JDBC_URL, "jdbc:postgresql://127.0.0.1:5432/q")
                .set(CommonSettings.KAFKA_BOOTSTRAP, "127.0.0.1:9092");
    }

    @Test
    void typedValuesAreReadBackAsSet() {
        Config c = settings().set(CommonSettings.JDBC_POOL_SIZE, 4).set(CommonSettings.DB_ROLE_CHECK, false)
                .set(CommonSettings.DB_RETRY_BACKOFF_MAX, Duration.ofMillis(250)).set(CommonSettings.STARTUP_TIMEOUT, Duration.ofNanos(1_500))
                .kafka("session.timeout.ms", 6000).topic("t", "tenant", "x").config();
        assertThat(c.intValue(CommonSettings.JDBC_POOL_SIZE)).isEqualTo(4);
        assertThat(c.bool(CommonSettings.DB_ROLE_CHECK)).isFalse();
        assertThat(c.duration(CommonSettings.DB_RETRY_BACKOFF_MAX)).isEqualTo(Duration.ofMillis(250));
        assertThat(c.duration(CommonSettings.STARTUP_TIMEOUT)).isEqualTo(Duration.ofNanos(1_500));
        assertThat(c.kafka()).containsEntry("session.timeout.ms", "6000");
        assertThat(c.withPrefix(ServiceSettings.TOPIC_PREFIX)).containsEntry("t.tenant", "x");
    }

    @Test
    void aValueOfAnotherTypeOrAnUndeclaredKeyIsRefusedWhenSet() {
        assertThatThrownBy(() -> settings().set(CommonSettings.JDBC_POOL_SIZE, "4")).isInstanceOf(IllegalArgumentException.class)
                .hasMessage("setting jdbc.pool.size takes a Integer, not a String");
        assertThatThrownBy(() -> settings().set(CommonSettings.DB_RETRY_BACKOFF_MAX, 250)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("takes a Duration");
        assertThatThrownBy(() -> settings().set("topic.t.tenant", "x")).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("use topic(name, key, value)");
        assertThatThrownBy(() -> settings().set("no.such.key", List.of())).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("no setting no.such.key");
    }

    @Test
    void aValueOutOfRangeFailsAsTheServiceWouldAtStart() {
        assertThatThrownBy(() -> settings().set(CommonSettings.JDBC_POOL_SIZE, 1).config()).isInstanceOf(ConfigException.class)
                .hasMessageContaining(CommonSettings.JDBC_POOL_SIZE);
    }

    @Test
    void nullPutsAKeyBackToItsDefaultAndACopyIsIndependent() {
        ServiceSettings s = settings().set(CommonSettings.JDBC_POOL_SIZE, 4);
        ServiceSettings copy = s.copy().set(CommonSettings.JDBC_POOL_SIZE, null);
        assertThat(s.get(CommonSettings.JDBC_POOL_SIZE)).isEqualTo("4");
        assertThat(copy.config().intValue(CommonSettings.JDBC_POOL_SIZE))
                .isEqualTo(Integer.parseInt(CommonSettings.definition().key(CommonSettings.JDBC_POOL_SIZE).defaultValue()));
    }
}
