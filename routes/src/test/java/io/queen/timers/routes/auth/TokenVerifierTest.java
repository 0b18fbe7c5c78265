package io.queen.timers.routes.auth;

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

    TokenVerifier verifier(Path keys, boolean hs256) {
        return verifier(keys, hs256, TokenVerifier.TenantClaim.REQUIRED);
    }

    TokenVerifier verifier(Path keys, boolean hs256, TokenVerifier.TenantClaim tenantClaim) {
        return new TokenVerifier(new TokenVerifier.Rules("cmds", new TokenVerifier.Keys(keys, hs256),
                new TokenVerifier.Claims(TestTokens.AUDIENCE, TestTokens.ISSUER, tenantClaim, null),
                new TokenVerifier.Times(Duration.ofSeconds(30), Duration.ofHours(1))));
    }

    /** A token valid for the topic of {@link #verifier}: its audience, issuer and tenant. */
    static com.nimbusds.jwt.JWTClaimsSet.Builder claims(String sub) {
        return TestTokens.claims(sub, RECORD_AT, TENANT);
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
        TokenVerifier v = verifier(jwks(rsa, ec, ed), false);
        for (TestTokens.Signer s : List.of(rsa, ec, ed)) {
            String token = s.sign(claims("svc-" + s.kid()).build());
            assertThat(v.verify(header(token), TS, TENANT)).as(s.alg().getName()).isEqualTo(new AuthResult.Verified("svc-" + s.kid()));
        }
        assertThat(v.verify(header("Bearer " + rsa.sign(claims("b").build())), TS, TENANT))
                .isEqualTo(new AuthResult.Verified("b"));
    }

    @Test
    void pemPublicKeyFileWorksLikeAJwks() throws Exception {
        TestTokens.Signer rsa = TestTokens.rsa("r1");
        Path pem = dir.resolve("key.pem");
        Files.writeString(pem, "-----BEGIN PUBLIC KEY-----\n"
                + java.util.Base64.getMimeEncoder().encodeToString(rsa.publicJwk().toRSAKey().toPublicKey().getEncoded())
                + "\n-----END PUBLIC KEY-----\n");
        assertThat(verifier(pem, false).verify(header(rsa.sign(claims("p").build())), TS, TENANT))
                .isEqualTo(new AuthResult.Verified("p"));
    }

    @Test
    void expAndNbfAreCheckedAgainstTheRecordTimestampWithBoundedSkew() throws Exception {
        TestTokens.Signer rsa = TestTokens.rsa("r1");
        TokenVerifier v = verifier(jwks(rsa), false);
        String expired = rsa.sign(claims("s").expirationTime(Date.from(RECORD_AT.minusSeconds(31))).build());
        assertRefused(v.verify(header(expired), TS, TENANT), RejectReason.UNAUTHENTICATED, "expired");
        String withinSkew = rsa.sign(claims("s").expirationTime(Date.from(RECORD_AT.minusSeconds(29))).build());
        assertThat(v.verify(header(withinSkew), TS, TENANT)).isInstanceOf(AuthResult.Verified.class);
        String notYet = rsa.sign(claims("s").notBeforeTime(Date.from(RECORD_AT.plusSeconds(31))).build());
        assertRefused(v.verify(header(notYet), TS, TENANT), RejectReason.UNAUTHENTICATED, "not valid before");
        // the same record replayed a year later gets the same verdict: the record's time decides, not the clock
        String valid = rsa.sign(claims("s").build());
        assertThat(v.verify(header(valid), TS, TENANT)).isInstanceOf(AuthResult.Verified.class);
        String noExp = rsa.sign(claims("s").expirationTime(null).build());
        assertRefused(v.verify(header(noExp), TS, TENANT), RejectReason.UNAUTHENTICATED, "no exp");
    }

    @Test
    void wronglySignedTokenIsUnauthenticated() throws Exception {
        TestTokens.Signer trusted = TestTokens.rsa("r1");
        TestTokens.Signer impostor = TestTokens.rsa("r1"); // same kid, other key
        TokenVerifier v = verifier(jwks(trusted), false);
        assertRefused(v.verify(header(impostor.sign(claims("s").build())), TS, TENANT),
                RejectReason.UNAUTHENTICATED, "token rejected");
        String good = trusted.sign(claims("s").build());
        String[] parts = good.split("\\.");
        String forgedClaims = com.nimbusds.jose.util.Base64URL.encode(
                claims("admin").build().toString()).toString();
        assertRefused(v.verify(header(parts[0] + "." + forgedClaims + "." + parts[2]), TS, TENANT),
                RejectReason.UNAUTHENTICATED, "token rejected");
    }

    @Test
    void algNoneIsAlwaysRejected() throws Exception {
        TokenVerifier v = verifier(jwks(TestTokens.rsa("r1")), true);
        String none = new PlainJWT(claims("s").build()).serialize();
        assertRefused(v.verify(header(none), TS, TENANT), RejectReason.UNAUTHENTICATED, "token rejected");
    }

    @Test
    void tokenForAnotherTenantIsForbiddenWithoutNamingEitherTenant() throws Exception {
        TestTokens.Signer rsa = TestTokens.rsa("r1");
        TokenVerifier v = verifier(jwks(rsa), false);
        UUID otherTenant = UUID.randomUUID();
        AuthResult r = v.verify(header(rsa.sign(claims("s").claim("tenant", otherTenant.toString()).build())), TS, TENANT);
        assertRefused(r, RejectReason.FORBIDDEN, "token not valid for this topic");
        assertThat(((AuthResult.Refused) r).detail()).doesNotContain(otherTenant.toString(), TENANT.toString());
        String junk = rsa.sign(claims("s").claim("tenant", 7).build());
        assertRefused(v.verify(header(junk), TS, TENANT), RejectReason.FORBIDDEN, "tenant claim is not this topic's tenant");
    }

    @Test
    void aNullTenantClaimIsARefusalNotAbsenceEvenWhenTheClaimIsOptional() throws Exception {
        TestTokens.Signer rsa = TestTokens.rsa("r1");
        Path keys = jwks(rsa);
        String nullTenant = rsa.sign(claims("s").claim("tenant", null).serializeNullClaims(true).build());
        assertThat(nullTenant).satisfies(t -> assertThat(com.nimbusds.jwt.SignedJWT.parse(t).getJWTClaimsSet().getClaims()).containsKey("tenant"));
        for (TokenVerifier.TenantClaim mode : TokenVerifier.TenantClaim.values()) {
            assertRefused(verifier(keys, false, mode).verify(header(nullTenant), TS, TENANT), RejectReason.FORBIDDEN,
                    "tenant claim is not this topic's tenant");
        }
    }

    @Test
    void aTokenWithoutATenantClaimIsForbiddenUnlessTheTopicOptsOut() throws Exception {
        TestTokens.Signer rsa = TestTokens.rsa("r1");
        Path keys = jwks(rsa);
        String noTenant = rsa.sign(TestTokens.claims("s", RECORD_AT, null).build());
        assertRefused(verifier(keys, false).verify(header(noTenant), TS, TENANT), RejectReason.FORBIDDEN, "has no tenant claim");
        assertThat(verifier(keys, false, TokenVerifier.TenantClaim.OPTIONAL).verify(header(noTenant), TS, TENANT))
                .isEqualTo(new AuthResult.Verified("s"));
        // opting out of the claim does not let another tenant's token in
        String other = rsa.sign(claims("s").claim("tenant", UUID.randomUUID().toString()).build());
        assertRefused(verifier(keys, false, TokenVerifier.TenantClaim.OPTIONAL).verify(header(other), TS, TENANT),
                RejectReason.FORBIDDEN, "not this topic's tenant");
    }

    @Test
    void audienceIsRequiredAndMustBeContained() throws Exception {
        TestTokens.Signer rsa = TestTokens.rsa("r1");
        TokenVerifier v = verifier(jwks(rsa), false);
        AuthResult other = v.verify(header(rsa.sign(claims("s").audience("other-tenants-service").build())), TS, TENANT);
        assertRefused(other, RejectReason.UNAUTHENTICATED, "aud");
        assertThat(((AuthResult.Refused) other).detail()).doesNotContain("other-tenants-service", TestTokens.AUDIENCE);
        assertRefused(v.verify(header(rsa.sign(claims("s").audience((String) null).build())), TS, TENANT),
                RejectReason.UNAUTHENTICATED, "aud is missing");
        assertThat(v.verify(header(rsa.sign(claims("s").audience(List.of("x", TestTokens.AUDIENCE)).build())), TS, TENANT))
                .isInstanceOf(AuthResult.Verified.class);
    }

    @Test
    void issuerIsRequiredAndMustBeEqual() throws Exception {
        TestTokens.Signer rsa = TestTokens.rsa("r1");
        TokenVerifier v = verifier(jwks(rsa), false);
        AuthResult wrong = v.verify(header(rsa.sign(claims("s").issuer("https://other-issuer.test").build())), TS, TENANT);
        assertRefused(wrong, RejectReason.UNAUTHENTICATED, "iss");
        assertThat(((AuthResult.Refused) wrong).detail()).doesNotContain("other-issuer", TestTokens.ISSUER);
        assertRefused(v.verify(header(rsa.sign(claims("s").issuer(null).build())), TS, TENANT), RejectReason.UNAUTHENTICATED, "iss");
    }

    @Test
    void aRulesWithoutAudienceOrIssuerCannotBeBuilt() {
        Path keys = dir.resolve("keys.jwks");
        TokenVerifier.Keys k = new TokenVerifier.Keys(keys, false);
        TokenVerifier.Times times = new TokenVerifier.Times(Duration.ZERO, Duration.ofHours(1));
        assertThatThrownBy(() -> new TokenVerifier.Rules("cmds", k, new TokenVerifier.Claims(null, TestTokens.ISSUER,
                TokenVerifier.TenantClaim.REQUIRED, null), times)).isInstanceOf(IllegalArgumentException.class).hasMessageContaining("audience");
        assertThatThrownBy(() -> new TokenVerifier.Rules("cmds", k, new TokenVerifier.Claims(TestTokens.AUDIENCE, " ",
                TokenVerifier.TenantClaim.REQUIRED, null), times)).isInstanceOf(IllegalArgumentException.class).hasMessageContaining("issuer");
    }

    @Test
    void aCritHeaderNamingAParameterNotUnderstoodIsRefusedForEveryAlgorithm() throws Exception {
        TestTokens.Signer rsa = TestTokens.rsa("r1");
        TestTokens.Signer ed = TestTokens.ed25519("d1");
        TokenVerifier v = verifier(jwks(rsa, ed), false);
        for (TestTokens.Signer s : List.of(rsa, ed)) {
            assertRefused(v.verify(header(s.sign(claims("s").build(), java.util.Set.of("exp-policy"))), TS, TENANT),
                    RejectReason.UNAUTHENTICATED, "crit header names parameters this bridge does not understand: [exp-policy]");
            assertThat(v.verify(header(s.sign(claims("s").build())), TS, TENANT)).as(s.alg().getName()).isInstanceOf(AuthResult.Verified.class);
        }
    }

    @Test
    void theJdkEd25519VerifierAppliesTheCritPolicyItself() throws Exception {
        java.security.KeyPair kp = java.security.KeyPairGenerator.getInstance("Ed25519").generateKeyPair();
        Ed25519JdkVerifier verifier = new Ed25519JdkVerifier(kp.getPublic());
        JWSHeader crit = new JWSHeader.Builder(JWSAlgorithm.EdDSA).criticalParams(java.util.Set.of("exp-policy"))
                .customParam("exp-policy", "x").build();
        java.security.Signature sig = java.security.Signature.getInstance("Ed25519");
        sig.initSign(kp.getPrivate());
        byte[] input = "a.b".getBytes(StandardCharsets.US_ASCII);
        sig.update(input);
        com.nimbusds.jose.util.Base64URL signature = com.nimbusds.jose.util.Base64URL.encode(sig.sign());
        assertThat(verifier.verify(new JWSHeader(JWSAlgorithm.EdDSA), input, signature)).isTrue();
        assertThat(verifier.verify(crit, input, signature)).isFalse();
    }

    @Test
    void aTokenLivingLongerThanTheMaxLifetimeOrWithoutIatIsRefused() throws Exception {
        TestTokens.Signer rsa = TestTokens.rsa("r1");
        TokenVerifier v = verifier(jwks(rsa), false);
        // valid at the record's time, but issued for a year: a stolen copy would replay for that long
        String yearLong = rsa.sign(claims("s").issueTime(Date.from(RECORD_AT.minusSeconds(60)))
                .expirationTime(Date.from(RECORD_AT.plus(Duration.ofDays(365)))).build());
        assertRefused(v.verify(header(yearLong), TS, TENANT), RejectReason.UNAUTHENTICATED, "auth.max.token.lifetime");
        String justOver = rsa.sign(claims("s").issueTime(Date.from(RECORD_AT.minusSeconds(60)))
                .expirationTime(Date.from(RECORD_AT.minusSeconds(60).plus(Duration.ofHours(1)).plusSeconds(1))).build());
        assertRefused(v.verify(header(justOver), TS, TENANT), RejectReason.UNAUTHENTICATED, "lifetime");
        String exactlyAnHour = rsa.sign(claims("s").issueTime(Date.from(RECORD_AT.minusSeconds(60)))
                .expirationTime(Date.from(RECORD_AT.minusSeconds(60).plus(Duration.ofHours(1)))).build());
        assertThat(v.verify(header(exactlyAnHour), TS, TENANT)).isInstanceOf(AuthResult.Verified.class);
        // an hour-long token issued a year ahead: within the bound, but it must not be usable until then
        String future = rsa.sign(claims("s").issueTime(Date.from(RECORD_AT.plus(Duration.ofDays(365))))
                .notBeforeTime(null).expirationTime(Date.from(RECORD_AT.plus(Duration.ofDays(365)).plusSeconds(3600))).build());
        assertRefused(v.verify(header(future), TS, TENANT), RejectReason.UNAUTHENTICATED, "after the record's timestamp");
        String noIat = rsa.sign(claims("s").issueTime(null).build());
        assertRefused(v.verify(header(noIat), TS, TENANT), RejectReason.UNAUTHENTICATED, "no iat");
    }

    @Test
    void signatureAndKeyRefusalsNeverNameAKeyId() throws Exception {
        TestTokens.Signer trusted = TestTokens.rsa("trusted-2026");
        TokenVerifier v = verifier(jwks(trusted), false);
        for (TestTokens.Signer stranger : List.of(TestTokens.rsa("probe-kid"), TestTokens.rsa("trusted-2026"))) {
            AuthResult r = v.verify(header(stranger.sign(claims("s").build())), TS, TENANT);
            assertRefused(r, RejectReason.UNAUTHENTICATED, "unknown or invalid signing key");
            assertThat(((AuthResult.Refused) r).detail()).doesNotContain("probe-kid", "trusted-2026");
        }
    }

    @Test
    void hs256OnlyWhenAllowedAndNeverWithAnRsaKeyAsTheSecret() throws Exception {
        byte[] secret = "a-shared-secret-of-at-least-32-bytes!!".getBytes(StandardCharsets.UTF_8);
        TestTokens.Signer hs = TestTokens.hs256("h1", secret);
        TestTokens.Signer rsa = TestTokens.rsa("r1");
        Path keys = jwks(hs, rsa);
        String token = hs.sign(claims("s").build());
        assertRefused(verifier(keys, false).verify(header(token), TS, TENANT), RejectReason.UNAUTHENTICATED, "token rejected");
        assertThat(verifier(keys, true).verify(header(token), TS, TENANT)).isEqualTo(new AuthResult.Verified("s"));
        // algorithm confusion: HS256 "signed" with the RSA public key's bytes as the secret
        SignedJWT confused = new SignedJWT(new JWSHeader.Builder(JWSAlgorithm.HS256).keyID("r1").build(), claims("x").build());
        confused.sign(new MACSigner(java.util.Arrays.copyOf(rsa.publicJwk().toRSAKey().toPublicKey().getEncoded(), 64)));
        assertRefused(verifier(keys, true).verify(header(confused.serialize()), TS, TENANT), RejectReason.UNAUTHENTICATED, "token rejected");
    }

    @Test
    void missingDuplicatedOrGarbageHeaderIsUnauthenticated() throws Exception {
        TestTokens.Signer rsa = TestTokens.rsa("r1");
        TokenVerifier v = verifier(jwks(rsa), false);
        assertRefused(v.verify(new RecordHeaders(), TS, TENANT), RejectReason.UNAUTHENTICATED, "has none");
        RecordHeaders twice = header(rsa.sign(claims("s").build()));
        twice.add("Queen-Auth", "x".getBytes(StandardCharsets.UTF_8));
        assertRefused(v.verify(twice, TS, TENANT), RejectReason.UNAUTHENTICATED, "more than once");
        assertRefused(v.verify(header("not.a.jwt"), TS, TENANT), RejectReason.UNAUTHENTICATED, "");
        RecordHeaders badUtf8 = new RecordHeaders();
        badUtf8.add(TokenVerifier.HEADER, new byte[] {(byte) 0xff, (byte) 0xfe});
        assertRefused(v.verify(badUtf8, TS, TENANT), RejectReason.UNAUTHENTICATED, "UTF-8");
        assertRefused(v.verify(header("x".repeat(TokenVerifier.MAX_TOKEN_BYTES + 1)), TS, TENANT), RejectReason.UNAUTHENTICATED, "limit");
        assertRefused(v.verify(header(rsa.sign(claims("s").build())), -1, TENANT), RejectReason.UNAUTHENTICATED,
                "no timestamp");
    }

    @Test
    void keysRotatedInTheJwksFileAreUsedWithoutARestart() throws Exception {
        TestTokens.Signer old = TestTokens.ec("2026-01");
        TestTokens.Signer next = TestTokens.ec("2026-02");
        Path keys = jwks(old);
        TokenVerifier v = verifier(keys, false);
        String byOld = old.sign(claims("s").build());
        String byNext = next.sign(claims("s").build());
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
        TokenVerifier v = verifier(keys, false);
        String byLeaked = leaked.sign(claims("s").build());
        String byKept = kept.sign(claims("s").build());
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
        assertThatThrownBy(() -> verifier(dir.resolve("missing.jwks"), false))
                .hasMessageContaining("topic.cmds.auth.keys.file");
    }
}
