package io.queen.timers.bridge.auth;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.nimbusds.jose.JWSAlgorithm;
import com.nimbusds.jose.JWSHeader;
import com.nimbusds.jose.crypto.MACSigner;
import com.nimbusds.jwt.PlainJWT;
import com.nimbusds.jwt.SignedJWT;
import io.queen.timers.client.command.RejectReason;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.Date;
import java.util.List;
import java.util.UUID;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class TokenVerifierTest {

    static final UUID TENANT = UUID.fromString("00000000-0000-0000-0000-000000000001");
    static final Instant RECORD_AT = Instant.parse("2026-06-01T12:00:00Z");
    static final long TS = RECORD_AT.toEpochMilli();

    @TempDir Path dir;

    TokenVerifier verifier(Path keys, boolean hs256, String audience) {
        return new TokenVerifier(new TokenVerifier.Rules("cmds", keys, hs256, audience, null, Duration.ofSeconds(30)));
    }

    Path jwks(TestTokens.Signer... signers) throws Exception {
        Path f = dir.resolve("keys.jwks");
        TestTokens.writeJwks(f, List.of(signers));
        return f;
    }

    static RecordHeaders header(String token) {
        RecordHeaders h = new RecordHeaders();
        h.add(TokenVerifier.HEADER, token.getBytes(StandardCharsets.UTF_8));
        return h;
    }

    static void assertRefused(AuthResult r, RejectReason reason, String detail) {
        assertThat(r).isInstanceOf(AuthResult.Refused.class);
        assertThat(((AuthResult.Refused) r).reason()).isEqualTo(reason);
        assertThat(((AuthResult.Refused) r).detail()).contains(detail);
    }

    @Test
    void validRsaEcAndEdDsaTokensProveTheirSub() throws Exception {
        TestTokens.Signer rsa = TestTokens.rsa("r1");
        TestTokens.Signer ec = TestTokens.ec("e1");
        TestTokens.Signer ed = TestTokens.ed25519("d1");
        TokenVerifier v = verifier(jwks(rsa, ec, ed), false, null);
        for (TestTokens.Signer s : List.of(rsa, ec, ed)) {
            String token = s.sign(TestTokens.claims("svc-" + s.kid(), RECORD_AT).claim("tenant", TENANT.toString()).build());
            assertThat(v.verify(header(token), TS, TENANT)).as(s.alg().getName()).isEqualTo(new AuthResult.Verified("svc-" + s.kid()));
        }
        assertThat(v.verify(header("Bearer " + rsa.sign(TestTokens.claims("b", RECORD_AT).build())), TS, TENANT))
                .isEqualTo(new AuthResult.Verified("b"));
    }

    @Test
    void pemPublicKeyFileWorksLikeAJwks() throws Exception {
        TestTokens.Signer rsa = TestTokens.rsa("r1");
        Path pem = dir.resolve("key.pem");
        Files.writeString(pem, "-----BEGIN PUBLIC KEY-----\n"
                + java.util.Base64.getMimeEncoder().encodeToString(rsa.publicJwk().toRSAKey().toPublicKey().getEncoded())
                + "\n-----END PUBLIC KEY-----\n");
        assertThat(verifier(pem, false, null).verify(header(rsa.sign(TestTokens.claims("p", RECORD_AT).build())), TS, TENANT))
                .isEqualTo(new AuthResult.Verified("p"));
    }

    @Test
    void expAndNbfAreCheckedAgainstTheRecordTimestampWithBoundedSkew() throws Exception {
        TestTokens.Signer rsa = TestTokens.rsa("r1");
        TokenVerifier v = verifier(jwks(rsa), false, null);
        String expired = rsa.sign(TestTokens.claims("s", RECORD_AT).expirationTime(Date.from(RECORD_AT.minusSeconds(31))).build());
        assertRefused(v.verify(header(expired), TS, TENANT), RejectReason.UNAUTHENTICATED, "expired");
        String withinSkew = rsa.sign(TestTokens.claims("s", RECORD_AT).expirationTime(Date.from(RECORD_AT.minusSeconds(29))).build());
        assertThat(v.verify(header(withinSkew), TS, TENANT)).isInstanceOf(AuthResult.Verified.class);
        String notYet = rsa.sign(TestTokens.claims("s", RECORD_AT).notBeforeTime(Date.from(RECORD_AT.plusSeconds(31))).build());
        assertRefused(v.verify(header(notYet), TS, TENANT), RejectReason.UNAUTHENTICATED, "not valid before");
        // the same record replayed a year later gets the same verdict: the record's time decides, not the clock
        String valid = rsa.sign(TestTokens.claims("s", RECORD_AT).build());
        assertThat(v.verify(header(valid), TS, TENANT)).isInstanceOf(AuthResult.Verified.class);
        String noExp = rsa.sign(new com.nimbusds.jwt.JWTClaimsSet.Builder().subject("s").build());
        assertRefused(v.verify(header(noExp), TS, TENANT), RejectReason.UNAUTHENTICATED, "no exp");
    }

    @Test
    void wronglySignedTokenIsUnauthenticated() throws Exception {
        TestTokens.Signer trusted = TestTokens.rsa("r1");
        TestTokens.Signer impostor = TestTokens.rsa("r1"); // same kid, other key
        TokenVerifier v = verifier(jwks(trusted), false, null);
        assertRefused(v.verify(header(impostor.sign(TestTokens.claims("s", RECORD_AT).build())), TS, TENANT),
                RejectReason.UNAUTHENTICATED, "token rejected");
        String good = trusted.sign(TestTokens.claims("s", RECORD_AT).build());
        String[] parts = good.split("\\.");
        String forgedClaims = com.nimbusds.jose.util.Base64URL.encode(
                TestTokens.claims("admin", RECORD_AT).build().toString()).toString();
        assertRefused(v.verify(header(parts[0] + "." + forgedClaims + "." + parts[2]), TS, TENANT),
                RejectReason.UNAUTHENTICATED, "token rejected");
    }

    @Test
    void algNoneIsAlwaysRejected() throws Exception {
        TokenVerifier v = verifier(jwks(TestTokens.rsa("r1")), true, null);
        String none = new PlainJWT(TestTokens.claims("s", RECORD_AT).build()).serialize();
        assertRefused(v.verify(header(none), TS, TENANT), RejectReason.UNAUTHENTICATED, "token rejected");
    }

    @Test
    void tokenForAnotherTenantIsForbidden() throws Exception {
        TestTokens.Signer rsa = TestTokens.rsa("r1");
        TokenVerifier v = verifier(jwks(rsa), false, null);
        String other = rsa.sign(TestTokens.claims("s", RECORD_AT).claim("tenant", UUID.randomUUID().toString()).build());
        assertRefused(v.verify(header(other), TS, TENANT), RejectReason.FORBIDDEN, "this topic writes for tenant " + TENANT);
        String junk = rsa.sign(TestTokens.claims("s", RECORD_AT).claim("tenant", 7).build());
        assertRefused(v.verify(header(junk), TS, TENANT), RejectReason.FORBIDDEN, "is for tenant");
    }

    @Test
    void audienceIsCheckedWhenConfigured() throws Exception {
        TestTokens.Signer rsa = TestTokens.rsa("r1");
        TokenVerifier v = verifier(jwks(rsa), false, "queen-timers");
        assertRefused(v.verify(header(rsa.sign(TestTokens.claims("s", RECORD_AT).audience("other").build())), TS, TENANT),
                RejectReason.UNAUTHENTICATED, "audience");
        assertThat(v.verify(header(rsa.sign(TestTokens.claims("s", RECORD_AT).audience(List.of("x", "queen-timers")).build())), TS, TENANT))
                .isInstanceOf(AuthResult.Verified.class);
    }

    @Test
    void hs256OnlyWhenAllowedAndNeverWithAnRsaKeyAsTheSecret() throws Exception {
        byte[] secret = "a-shared-secret-of-at-least-32-bytes!!".getBytes(StandardCharsets.UTF_8);
        TestTokens.Signer hs = TestTokens.hs256("h1", secret);
        TestTokens.Signer rsa = TestTokens.rsa("r1");
        Path keys = jwks(hs, rsa);
        String token = hs.sign(TestTokens.claims("s", RECORD_AT).build());
        assertRefused(verifier(keys, false, null).verify(header(token), TS, TENANT), RejectReason.UNAUTHENTICATED, "token rejected");
        assertThat(verifier(keys, true, null).verify(header(token), TS, TENANT)).isEqualTo(new AuthResult.Verified("s"));
        // algorithm confusion: HS256 "signed" with the RSA public key's bytes as the secret
        SignedJWT confused = new SignedJWT(new JWSHeader.Builder(JWSAlgorithm.HS256).keyID("r1").build(), TestTokens.claims("x", RECORD_AT).build());
        confused.sign(new MACSigner(java.util.Arrays.copyOf(rsa.publicJwk().toRSAKey().toPublicKey().getEncoded(), 64)));
        assertRefused(verifier(keys, true, null).verify(header(confused.serialize()), TS, TENANT), RejectReason.UNAUTHENTICATED, "token rejected");
    }

    @Test
    void missingDuplicatedOrGarbageHeaderIsUnauthenticated() throws Exception {
        TestTokens.Signer rsa = TestTokens.rsa("r1");
        TokenVerifier v = verifier(jwks(rsa), false, null);
        assertRefused(v.verify(new RecordHeaders(), TS, TENANT), RejectReason.UNAUTHENTICATED, "has none");
        RecordHeaders twice = header(rsa.sign(TestTokens.claims("s", RECORD_AT).build()));
        twice.add("Queen-Auth", "x".getBytes(StandardCharsets.UTF_8));
        assertRefused(v.verify(twice, TS, TENANT), RejectReason.UNAUTHENTICATED, "more than once");
        assertRefused(v.verify(header("not.a.jwt"), TS, TENANT), RejectReason.UNAUTHENTICATED, "");
        RecordHeaders badUtf8 = new RecordHeaders();
        badUtf8.add(TokenVerifier.HEADER, new byte[] {(byte) 0xff, (byte) 0xfe});
        assertRefused(v.verify(badUtf8, TS, TENANT), RejectReason.UNAUTHENTICATED, "UTF-8");
        assertRefused(v.verify(header("x".repeat(TokenVerifier.MAX_TOKEN_BYTES + 1)), TS, TENANT), RejectReason.UNAUTHENTICATED, "limit");
        assertRefused(v.verify(header(rsa.sign(TestTokens.claims("s", RECORD_AT).build())), -1, TENANT), RejectReason.UNAUTHENTICATED,
                "no timestamp");
    }

    @Test
    void keysRotatedInTheJwksFileAreUsedWithoutARestart() throws Exception {
        TestTokens.Signer old = TestTokens.ec("2026-01");
        TestTokens.Signer next = TestTokens.ec("2026-02");
        Path keys = jwks(old);
        TokenVerifier v = verifier(keys, false, null);
        String byOld = old.sign(TestTokens.claims("s", RECORD_AT).build());
        String byNext = next.sign(TestTokens.claims("s", RECORD_AT).build());
        assertThat(v.verify(header(byOld), TS, TENANT)).isInstanceOf(AuthResult.Verified.class);
        assertRefused(v.verify(header(byNext), TS, TENANT), RejectReason.UNAUTHENTICATED, "token rejected");

        TestTokens.writeJwks(keys, List.of(old, next));   // 1. publish the new key beside the old one
        assertThat(v.verify(header(byNext), TS, TENANT)).isInstanceOf(AuthResult.Verified.class);
        assertThat(v.verify(header(byOld), TS, TENANT)).isInstanceOf(AuthResult.Verified.class);

        TestTokens.writeJwks(keys, List.of(next));        // 2. retire the old key
        assertRefused(v.verify(header(byOld), TS, TENANT), RejectReason.UNAUTHENTICATED, "token rejected");
        assertThat(v.verify(header(byNext), TS, TENANT)).isInstanceOf(AuthResult.Verified.class);

        assertThat(v.keysProblem()).isEmpty();
    }

    @Test
    void aKeyFileBrokenOnReloadRefusesEveryTokenUntilItIsFixed() throws Exception {
        TestTokens.Signer leaked = TestTokens.ec("leaked");
        TestTokens.Signer kept = TestTokens.ec("kept");
        Path keys = jwks(leaked, kept);
        TokenVerifier v = verifier(keys, false, null);
        String byLeaked = leaked.sign(TestTokens.claims("s", RECORD_AT).build());
        String byKept = kept.sign(TestTokens.claims("s", RECORD_AT).build());
        assertThat(v.verify(header(byLeaked), TS, TENANT)).isInstanceOf(AuthResult.Verified.class);

        // the edit that should have removed the leaked key leaves a file that does not parse: neither key verifies
        Files.writeString(keys, "{\"keys\": [ half a file");
        assertRefused(v.verify(header(byLeaked), TS, TENANT), RejectReason.UNAUTHENTICATED, keys.toString());
        assertRefused(v.verify(header(byKept), TS, TENANT), RejectReason.UNAUTHENTICATED, "refused until it is fixed");
        assertThat(v.keysProblem()).get().asString().contains("topic cmds", keys.toString(), "topic.cmds.auth.keys.file", "cannot read it");

        Files.delete(keys);                                 // gone: still closed
        v.refreshKeys();
        assertThat(v.keysProblem()).get().asString().contains("cannot stat it");
        assertRefused(v.verify(header(byKept), TS, TENANT), RejectReason.UNAUTHENTICATED, "refused until it is fixed");

        TestTokens.writeJwks(keys, List.of(kept));          // fixed: the next check reads it again
        assertThat(v.verify(header(byKept), TS, TENANT)).isInstanceOf(AuthResult.Verified.class);
        assertRefused(v.verify(header(byLeaked), TS, TENANT), RejectReason.UNAUTHENTICATED, "token rejected");
        assertThat(v.keysProblem()).isEmpty();
    }

    @Test
    void unreadableKeyFileAtStartNamesTheSetting() {
        assertThatThrownBy(() -> verifier(dir.resolve("missing.jwks"), false, null))
                .hasMessageContaining("topic.cmds.auth.keys.file");
    }
}
