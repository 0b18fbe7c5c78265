package io.queen.timers.core.text;

import static org.assertj.core.api.Assertions.assertThat;

import io.queen.timers.core.config.CommonSettings;
import io.queen.timers.core.config.Config;
import java.util.Map;
import org.junit.jupiter.api.Test;

class SecretsTest {

    @Test
    void passwordsInsideTextAreMasked() {
        assertThat(Secrets.mask("jdbc:postgresql://db:5432/q?user=app&password=hunter2&sslmode=require"))
                .isEqualTo("jdbc:postgresql://db:5432/q?user=app&password=***&sslmode=require");
        assertThat(Secrets.mask("jdbc:postgresql://db/q;PASSWORD=hunter2;ssl=true")).isEqualTo("jdbc:postgresql://db/q;PASSWORD=***;ssl=true");
        assertThat(Secrets.mask("postgres://app:hunter2@db:5432/q")).isEqualTo("postgres://app:***@db:5432/q");
        assertThat(Secrets.mask("org.apache.kafka.common.security.plain.PlainLoginModule required username=\"u\" password=\"hunter2\";"))
                .doesNotContain("hunter2");
        assertThat(Secrets.mask("no secret here")).isEqualTo("no secret here");
    }

    @Test
    void kafkaKeysNamingAPasswordSecretKeyTokenOrJaasAreSecret() {
        for (String k : new String[] {"sasl.jaas.config", "ssl.key.password", "ssl.keystore.password", "ssl.truststore.password",
                "sasl.oauthbearer.token.endpoint.url.secret", "sasl.client.secret", "api.key", "sasl.oauthbearer.assertion.private.key.file",
                "ssl.keystore.key", "sasl.login.token", "x-apikey"}) {
            assertThat(Secrets.isSecretSetting(k)).as(k).isTrue();
        }
        for (String k : new String[] {"bootstrap.servers", "security.protocol", "ssl.keystore.location", "client.id", "sasl.mechanism"}) {
            assertThat(Secrets.isSecretSetting(k)).as(k).isFalse();
        }
    }

    @Test
    void theSettingsLogLineMasksEverySecret() {
        Config c = CommonSettings.definition().parse(Map.of(
                "jdbc.url", "jdbc:postgresql://db/q?user=app&password=hunter2",
                "jdbc.password", "s3cret",
                "kafka.bootstrap.servers", "k:9092",
                "kafka.sasl.jaas.config", "PlainLoginModule required username=\"u\" password=\"p4ss\";",
                "kafka.ssl.key.password", "keypass",
                "kafka.sasl.oauthbearer.client.secret", "cs",
                "kafka.api.token", "tok",
                "kafka.security.protocol", "SASL_SSL"));
        assertThat(c.toString()).doesNotContain("hunter2", "s3cret", "p4ss", "keypass", "=cs", "tok,", "tok}")
                .contains("password=***", "kafka.security.protocol=SASL_SSL", "kafka.sasl.jaas.config=***");
    }
}
