package io.queen.timers.routes.auth;

import com.nimbusds.jose.JOSEException;
import com.nimbusds.jose.JWSAlgorithm;
import com.nimbusds.jose.JWSHeader;
import com.nimbusds.jose.JWSSigner;
import com.nimbusds.jose.crypto.ECDSASigner;
import com.nimbusds.jose.crypto.MACSigner;
import com.nimbusds.jose.crypto.RSASSASigner;
import com.nimbusds.jose.jca.JCAContext;
import com.nimbusds.jose.jwk.Curve;
import com.nimbusds.jose.jwk.ECKey;
import com.nimbusds.jose.jwk.JWK;
import com.nimbusds.jose.jwk.JWKSet;
import com.nimbusds.jose.jwk.OctetKeyPair;
import com.nimbusds.jose.jwk.OctetSequenceKey;
import com.nimbusds.jose.jwk.RSAKey;
import com.nimbusds.jose.util.Base64URL;
import com.nimbusds.jwt.JWTClaimsSet;
import com.nimbusds.jwt.SignedJWT;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyPair;
import java.security.KeyPairGenerator;
import java.security.Signature;
import java.security.interfaces.ECPrivateKey;
import java.security.interfaces.ECPublicKey;
import java.security.interfaces.RSAPublicKey;
import java.security.spec.ECGenParameterSpec;
import java.time.Instant;
import java.util.Arrays;
import java.util.Date;
import java.util.List;
import java.util.Set;
import java.util.UUID;

/** Signing keys and tokens for tests: real RSA, EC P-256 and Ed25519 key pairs, JWKS files of their public halves. */
public final class TestTokens {

    /** A signing key pair with its public JWK (kid set). */
    public record Signer(String kid, JWSAlgorithm alg, JWSSigner signer, JWK publicJwk) {

        public String sign(JWTClaimsSet claims) {
            return sign(claims, Set.of());
        }

        /** Signed with a {@code crit} header naming {@code critical} (each also set as a header parameter). */
        public String sign(JWTClaimsSet claims, Set<String> critical) {
            try {
                JWSHeader.Builder header = new JWSHeader.Builder(alg).keyID(kid);
                if (!critical.isEmpty()) {
                    header.criticalParams(critical);
                    critical.forEach(p -> header.customParam(p, "x"));
                }
                SignedJWT jwt = new SignedJWT(header.build(), claims);
                jwt.sign(signer);
                return jwt.serialize();
            } catch (JOSEException e) {
                throw new IllegalStateException(e);
            }
        }
    }

    private TestTokens() {}

    public static Signer rsa(String kid) throws Exception {
        KeyPairGenerator g = KeyPairGenerator.getInstance("RSA");
        g.initialize(2048);
        KeyPair kp = g.generateKeyPair();
        return new Signer(kid, JWSAlgorithm.RS256, new RSASSASigner(kp.getPrivate()),
                new RSAKey.Builder((RSAPublicKey) kp.getPublic()).keyID(kid).build());
    }

    public static Signer ec(String kid) throws Exception {
        KeyPairGenerator g = KeyPairGenerator.getInstance("EC");
        g.initialize(new ECGenParameterSpec("secp256r1"));
        KeyPair kp = g.generateKeyPair();
        return new Signer(kid, JWSAlgorithm.ES256, new ECDSASigner((ECPrivateKey) kp.getPrivate()),
                new ECKey.Builder(Curve.P_256, (ECPublicKey) kp.getPublic()).keyID(kid).build());
    }

    /** Ed25519 signed by the JDK (nimbus's own Ed25519 signer needs Tink). */
    public static Signer ed25519(String kid) throws Exception {
        KeyPair kp = KeyPairGenerator.getInstance("Ed25519").generateKeyPair();
        byte[] enc = kp.getPublic().getEncoded();
        JWK pub = new OctetKeyPair.Builder(Curve.Ed25519, Base64URL.encode(Arrays.copyOfRange(enc, enc.length - 32, enc.length)))
                .keyID(kid).build();
        JWSSigner signer = new JWSSigner() {
            private final JCAContext jca = new JCAContext();

            @Override
            public Base64URL sign(JWSHeader header, byte[] signingInput) throws JOSEException {
                try {
                    Signature s = Signature.getInstance("Ed25519");
                    s.initSign(kp.getPrivate());
                    s.update(signingInput);
                    return Base64URL.encode(s.sign());
                } catch (Exception e) {
                    throw new JOSEException(e.getMessage(), e);
                }
            }

            @Override
            public Set<JWSAlgorithm> supportedJWSAlgorithms() {
                return Set.of(JWSAlgorithm.EdDSA);
            }

            @Override
            public JCAContext getJCAContext() {
                return jca;
            }
        };
        return new Signer(kid, JWSAlgorithm.EdDSA, signer, pub);
    }

    public static Signer hs256(String kid, byte[] secret) throws Exception {
        return new Signer(kid, JWSAlgorithm.HS256, new MACSigner(secret), new OctetSequenceKey.Builder(secret).keyID(kid).build());
    }

    /** The audience and issuer the tests' jwt topics are configured with (topic.<name>.auth.audience, .auth.issuer). */
    public static final String AUDIENCE = "queen-timers-test";
    public static final String ISSUER = "https://issuer.test";

    /**
     * A valid claim set for a topic of {@link #AUDIENCE}, {@link #ISSUER} and {@code tenant} (no tenant claim when null):
     * sub, 10 minutes either side of {@code at}.
     */
    public static JWTClaimsSet.Builder claims(String sub, Instant at, UUID tenant) {
        JWTClaimsSet.Builder b = new JWTClaimsSet.Builder().subject(sub).issueTime(Date.from(at.minusSeconds(600)))
                .notBeforeTime(Date.from(at.minusSeconds(600))).expirationTime(Date.from(at.plusSeconds(600)))
                .audience(AUDIENCE).issuer(ISSUER);
        return tenant == null ? b : b.claim("tenant", tenant.toString());
    }

    /** Writes the public keys of {@code signers} as a JWKS file (atomically: a rotation never shows a half file). */
    public static void writeJwks(Path file, List<Signer> signers) throws IOException {
        String json = new JWKSet(signers.stream().map(Signer::publicJwk).toList()).toString(false);
        Path tmp = Files.createTempFile(file.getParent(), "jwks", ".tmp");
        Files.writeString(tmp, json, StandardCharsets.UTF_8);
        Files.move(tmp, file, java.nio.file.StandardCopyOption.REPLACE_EXISTING, java.nio.file.StandardCopyOption.ATOMIC_MOVE);
    }
}
