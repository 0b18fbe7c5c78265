package io.queen.timers.http.route;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.nimbusds.jose.JWSHeader;
import com.nimbusds.jwt.JWTClaimsSet;
import com.nimbusds.jwt.SignedJWT;
import io.queen.timers.core.config.ConfigException;
import io.queen.timers.http.HttpSettings;
import io.queen.timers.routes.RouteSettings;
import io.queen.timers.routes.TopicRoutes;
import io.queen.timers.routes.auth.TestTokens;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.Test;

/** A request must name exactly one topic: the served topics are one per tenant and at most one without a token. */
class CommandTopicsTest {

    static TopicRoutes routes(Map<String, String> extra) {
        Map<String, String> s = new HashMap<>(Map.of("jdbc.url", "jdbc:postgresql://x/y", "kafka.bootstrap.servers", "x:1"));
        s.putAll(extra);
        return RouteSettings.from(HttpSettings.definition().parse(s)).routes();
    }

    @Test
    void twoTopicsWithoutATokenAreAStartUpErrorUnlessOneIsServed() throws Exception {
        TopicRoutes r = routes(Map.of("command.topics", "a,b", "command.topic.tenants",
                "a=00000000-0000-0000-0000-00000000000a,b=00000000-0000-0000-0000-00000000000b"));
        assertThatThrownBy(() -> new CommandTopics(r, List.of())).isInstanceOf(ConfigException.class).hasMessageContaining("without a token");
        assertThat(new CommandTopics(r, List.of("b")).resolve(null, 0).topic()).isEqualTo("b");
    }

    @Test
    void twoTopicsOfOneTenantOrAnUnknownTopicAreAStartUpError() {
        TopicRoutes r = routes(Map.of("command.topics", "a,b", "bridge.default.tenant.allowed", "true"));
        assertThatThrownBy(() -> new CommandTopics(r, List.of())).isInstanceOf(ConfigException.class).hasMessageContaining("both belong to tenant");
        assertThatThrownBy(() -> new CommandTopics(r, List.of("c"))).isInstanceOf(ConfigException.class).hasMessageContaining("'c'");
    }

    @Test
    void aTokenIsVerifiedAgainstTheOneTopicItsOwnClaimsNameWhateverItsKid() throws Exception {
        TestTokens.Signer signer = TestTokens.ec("k1");
        Path keys = Files.createTempDirectory("topics-keys").resolve("keys.jwks");
        TestTokens.writeJwks(keys, List.of(signer));
        UUID a = UUID.fromString("00000000-0000-0000-0000-00000000000a");
        UUID b = UUID.fromString("00000000-0000-0000-0000-00000000000b");
        UUID c = UUID.fromString("00000000-0000-0000-0000-00000000000c");
        Map<String, String> s = new HashMap<>(Map.of("command.topics", "a,b,c", "command.topic.tenants", "a=" + a + ",b=" + b + ",c=" + c));
        for (String t : List.of("a", "b", "c")) { // one key file, issuer and audience for all three: only the tenant tells them apart
            s.putAll(Map.of("topic." + t + ".auth", "jwt", "topic." + t + ".auth.keys.file", keys.toString(),
                    "topic." + t + ".auth.audience", TestTokens.AUDIENCE, "topic." + t + ".auth.issuer", TestTokens.ISSUER));
        }
        CommandTopics topics = new CommandTopics(routes(s), List.of());
        Instant now = Instant.now();
        String withoutKid = withoutKid(signer, TestTokens.claims("svc", now, b).build());
        assertThat(topics.candidates(withoutKid)).containsExactly("b");
        assertThat(topics.resolve(withoutKid, now.toEpochMilli()).topic()).isEqualTo("b");
        // a tenant not served: one check tells a valid token (403) from a forged one (401), not one per topic
        UUID other = UUID.randomUUID();
        assertThat(topics.candidates(signer.sign(TestTokens.claims("svc", now, other).build()))).hasSize(1);
        assertThatThrownBy(() -> topics.resolve(signer.sign(TestTokens.claims("svc", now, other).build()), now.toEpochMilli()))
                .isInstanceOfSatisfying(CommandTopics.Refused.class, r -> assertThat(r.status).isEqualTo(403));
        // another audience, or no JWT at all: no topic's keys are tried
        assertThat(topics.candidates(signer.sign(TestTokens.claims("svc", now, b).audience("elsewhere").build()))).isEmpty();
        assertThat(topics.candidates("not.a.jwt")).isEmpty();
        assertThat(topics.candidates("x".repeat(CommandTopics.MAX_TOKEN_CHARS + 1))).isEmpty();
    }

    static String withoutKid(TestTokens.Signer signer, JWTClaimsSet claims) throws Exception {
        SignedJWT jwt = new SignedJWT(new JWSHeader.Builder(signer.alg()).build(), claims);
        jwt.sign(signer.signer());
        return jwt.serialize();
    }

    @Test
    void aTokenOnAServerWithoutJwtTopicsIsRefusedNotIgnored() {
        CommandTopics t = new CommandTopics(routes(Map.of("command.topics", "a")), List.of());
        assertThatThrownBy(() -> t.resolve("x.y.z", 0)).isInstanceOf(CommandTopics.Refused.class);
    }
}
