package io.queen.timers.routes.auth;

import com.nimbusds.jose.JOSEException;
import com.nimbusds.jose.JWSAlgorithm;
import com.nimbusds.jose.JWSHeader;
import com.nimbusds.jose.JWSVerifier;
import com.nimbusds.jose.KeySourceException;
import com.nimbusds.jose.crypto.factories.DefaultJWSVerifierFactory;
import com.nimbusds.jose.crypto.impl.CriticalHeaderParamsDeferral;
import com.nimbusds.jose.jca.JCAContext;
import com.nimbusds.jose.jwk.Curve;
import com.nimbusds.jose.jwk.ECKey;
import com.nimbusds.jose.jwk.JWK;
import com.nimbusds.jose.jwk.JWKMatcher;
import com.nimbusds.jose.jwk.OctetKeyPair;
import com.nimbusds.jose.jwk.OctetSequenceKey;
import com.nimbusds.jose.jwk.RSAKey;
import com.nimbusds.jose.proc.BadJOSEException;
import com.nimbusds.jose.proc.JWSVerifierFactory;
import com.nimbusds.jose.proc.SecurityContext;
import com.nimbusds.jwt.JWTClaimsSet;
import com.nimbusds.jwt.proc.DefaultJWTProcessor;
import io.queen.timers.client.command.RejectReason;
import io.queen.timers.client.command.WireFormat;
import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.Key;
import java.text.ParseException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Date;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.UUID;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.header.Headers;

/**
 * Proves who wrote a command on a topic with {@code topic.<name>.auth=jwt} (docs/security.md#producer-identity):
 * the {@code queen-auth} header must hold a JWT signed by one of the topic's keys ({@link KeyFile}),
 * with an allowed algorithm (RSA, ECDSA, EdDSA; HS256 only when the topic allows it, and then only with
 * a symmetric key from the file: an RSA public key is never taken as an HMAC secret), {@code exp}
 * and {@code nbf} checked against the RECORD's timestamp with a bounded skew (so a record replayed
 * after a crash gets the same verdict), an {@code iat} no more than the topic's max lifetime before
 * {@code exp}, the topic's {@code aud} (contained) and {@code iss} (equal), a {@code sub} (it becomes
 * the timer's producer_sub), a {@code tenant} claim equal to the topic's tenant (required unless the topic
 * opts out), and no {@code crit} header parameter nimbus does not understand (RFC 7515 4.1.11). Parsing
 * and signature checks are nimbus-jose-jwt's; {@code alg=none} is never accepted. Refusal details name
 * which check failed, never another tenant, audience or key id (they land in audit events others may read).
 * A token whose claim named by auth.admin.claim is JSON true is verified as an admin: it may act on any timer of
 * its tenant (BatchApplier checks ownership).
 * Thread-safe.
 */
public final class TokenVerifier {

    public static final String HEADER = WireFormat.H_AUTH;
    /** The claim binding a token to a tenant (the topic's tenant UUID). */
    static final String TENANT_CLAIM = "tenant";
    /** A header larger than this is refused before it is parsed: no token we issue comes near it. */
    static final int MAX_TOKEN_BYTES = 16 * 1024;
    private static final int CACHED_TOKENS = 256;
    private static final Set<JWSAlgorithm> ASYMMETRIC = Set.of(JWSAlgorithm.RS256, JWSAlgorithm.RS384, JWSAlgorithm.RS512,
            JWSAlgorithm.PS256, JWSAlgorithm.PS384, JWSAlgorithm.PS512, JWSAlgorithm.ES256, JWSAlgorithm.ES384, JWSAlgorithm.ES512,
            JWSAlgorithm.EdDSA, JWSAlgorithm.Ed25519);

    /** Whether a token must carry the {@code tenant} claim ({@code topic.<name>.auth.tenant.claim}). */
    public enum TenantClaim { REQUIRED, OPTIONAL }

    /**
     * How one topic checks its tokens: with which keys, for which claims, within which times.
     */
    public record Rules(String topic, Keys keys, Claims claims, Times times) {
        public Rules {
            java.util.Objects.requireNonNull(keys);
            java.util.Objects.requireNonNull(times);
            if (claims.audience() == null || claims.audience().isBlank() || claims.issuer() == null || claims.issuer().isBlank()) {
                throw new IllegalArgumentException("topic " + topic + ": a jwt topic needs an audience and an issuer");
            }
        }
    }

    /** The topic's verification keys ({@code auth.keys.file}) and whether HS256 tokens are accepted. */
    public record Keys(Path file, boolean allowHs256) {}

    /**
     * What a token must claim. {@code audience} and {@code issuer} are required: without them any token the key signed for
     * another purpose would be accepted here. {@code adminClaim}: null without one (auth.admin.claim unset), so no token
     * acts on another producer's timers.
     */
    public record Claims(String audience, String issuer, TenantClaim tenantClaim, String adminClaim) {
        public Claims {
            java.util.Objects.requireNonNull(tenantClaim);
        }
    }

    /** How far a token's times may be off the record's timestamp ({@code skew}), and its longest lifetime (exp - iat). */
    public record Times(Duration skew, Duration maxLifetime) {
        public Times {
            java.util.Objects.requireNonNull(skew);
            java.util.Objects.requireNonNull(maxLifetime);
        }
    }

    /** A signature or key failure: one text, so the detail never tells a prober which kids or keys exist. */
    static final String BAD_SIGNATURE = "token rejected: unknown or invalid signing key, or an algorithm this topic does not accept";
    /** nimbus's own policy (it processes b64, defers nothing): the same one its RSA/EC/HMAC verifiers apply. */
    private static final CriticalHeaderParamsDeferral CRIT = new CriticalHeaderParamsDeferral();

    private final Rules rules;
    private final KeyFile keyFile;
    private final Set<JWSAlgorithm> allowed;
    private final DefaultJWTProcessor<SecurityContext> processor = new DefaultJWTProcessor<>();
    /**
     * Tokens whose signature this key set already verified, by their exact text. A producer sends many
     * commands with one token, and a signature check costs 0.05-0.2 ms (RSA, ECDSA) per record; the
     * claims are still checked per record against its own timestamp. Emptied when the key file changes,
     * so a retired key stops verifying at once. PRICE: up to CACHED_TOKENS tokens held in memory.
     */
    private final Map<String, JWTClaimsSet> verified = new LinkedHashMap<>(64, 0.75f, true) {
        @Override
        protected boolean removeEldestEntry(Map.Entry<String, JWTClaimsSet> eldest) {
            return size() > CACHED_TOKENS;
        }
    };
    private long verifiedGeneration;

    /** @throws IllegalArgumentException naming the setting when the key file cannot be read or parsed */
    public TokenVerifier(Rules rules) {
        this.rules = rules;
        try {
            this.keyFile = new KeyFile(rules.keys().file());
        } catch (java.io.IOException | ParseException e) {
            throw new IllegalArgumentException("setting topic." + rules.topic() + ".auth.keys.file = " + rules.keys().file()
                    + ": cannot read verification keys: " + e.getMessage());
        }
        Set<JWSAlgorithm> algs = new HashSet<>(ASYMMETRIC);
        if (rules.keys().allowHs256()) {
            algs.add(JWSAlgorithm.HS256);
        }
        this.allowed = Set.copyOf(algs);
        processor.setJWSKeySelector((header, ctx) -> {
            // checked before any key, for every algorithm (the JDK Ed25519 path included), with its own detail
            if (!CRIT.headerPasses(header)) {
                throw new UnknownCritical(header.getCriticalParams());
            }
            return keysFor(header);
        });
        processor.setJWSVerifierFactory(new Verifiers());
        // exp/nbf/aud/iss are checked below against the record's timestamp, not the wall clock
        processor.setJWTClaimsSetVerifier(null);
    }

    /** How this topic checks its tokens (its clock skew bounds the topic's timestamp window: the bridge's TopicTimestamps). */
    public Rules rules() {
        return rules;
    }

    /** @param timestampMs the record's timestamp; @param tenant the topic's tenant */
    public AuthResult verify(Headers headers, long timestampMs, UUID tenant) {
        String token;
        try {
            token = token(headers);
        } catch (Refusal r) {
            return r.result;
        }
        JWTClaimsSet claims = cached(token);
        Optional<String> broken = keysProblem();
        if (broken.isPresent()) {
            return unauthenticated(broken.get());
        }
        if (claims == null) {
            try {
                claims = processor.process(token, null);
            } catch (ParseException e) {
                return unauthenticated("the " + HEADER + " header is not a JWT: " + e.getMessage());
            } catch (UnknownCritical e) {
                return unauthenticated(e.getMessage());
            } catch (BadJOSEException | JOSEException | RuntimeException e) {
                return unauthenticated(BAD_SIGNATURE);
            }
            synchronized (verified) {
                verified.put(token, claims);
            }
        }
        return check(claims, timestampMs, tenant);
    }

    /** Re-reads the key file if it changed (one stat): a broken file is noticed, and readiness says so, without a record. */
    public void refreshKeys() {
        keyFile.keys();
    }

    /**
     * Why this topic refuses every token now: its key file could not be read or parsed on the last reload.
     * Empty while the keys are usable. Memory only (readiness reads it).
     */
    public Optional<String> keysProblem() {
        String p = keyFile.problem();
        return p == null ? Optional.empty() : Optional.of("topic " + rules.topic() + ": verification key file " + keyFile.path()
                + " (topic." + rules.topic() + ".auth.keys.file) " + p + "; every token of the topic is refused until it is fixed");
    }

    /** The claims of a token this key set already verified, or null. */
    private JWTClaimsSet cached(String token) {
        keyFile.keys(); // re-reads the file if it changed, which bumps its generation
        synchronized (verified) {
            if (verifiedGeneration != keyFile.generation()) {
                verified.clear();
                verifiedGeneration = keyFile.generation();
            }
            return verified.get(token);
        }
    }

    private AuthResult check(JWTClaimsSet claims, long timestampMs, UUID tenant) {
        if (timestampMs < 0) {
            return unauthenticated("the record has no timestamp to check the token's exp against");
        }
        long skew = rules.times().skew().toMillis();
        Date exp = claims.getExpirationTime();
        if (exp == null) {
            return unauthenticated("token has no exp: tokens without an expiry are refused");
        }
        Date iat = claims.getIssueTime();
        if (iat == null) {
            return unauthenticated("token has no iat: its lifetime cannot be bounded");
        }
        Duration lifetime = Duration.ofMillis(exp.getTime() - iat.getTime());
        if (lifetime.compareTo(rules.times().maxLifetime()) > 0) {
            return unauthenticated("token lifetime (exp - iat) " + lifetime + " exceeds " + rules.times().maxLifetime()
                    + " (topic." + rules.topic() + ".auth.max.token.lifetime)");
        }
        // without this, iat a year ahead with exp an hour later would pass the lifetime bound yet replay for a year
        if (timestampMs < iat.getTime() - skew) {
            return unauthenticated("token issued at " + iat.toInstant() + ", after the record's timestamp "
                    + java.time.Instant.ofEpochMilli(timestampMs) + " (skew " + rules.times().skew() + ")");
        }
        if (timestampMs > exp.getTime() + skew) {
            return unauthenticated("token expired at " + exp.toInstant() + ", before the record's timestamp "
                    + java.time.Instant.ofEpochMilli(timestampMs) + " (skew " + rules.times().skew() + ")");
        }
        Date nbf = claims.getNotBeforeTime();
        if (nbf != null && timestampMs < nbf.getTime() - skew) {
            return unauthenticated("token not valid before " + nbf.toInstant() + ", after the record's timestamp "
                    + java.time.Instant.ofEpochMilli(timestampMs) + " (skew " + rules.times().skew() + ")");
        }
        // the token's own aud/iss are not echoed: they may name another tenant's service
        if (claims.getAudience() == null || !claims.getAudience().contains(rules.claims().audience())) {
            return unauthenticated("token not valid for this topic: its aud is missing or does not include the topic's audience");
        }
        if (!rules.claims().issuer().equals(claims.getIssuer())) {
            return unauthenticated("token not valid for this topic: its iss is missing or is not the topic's issuer");
        }
        Object subject = claims.getClaim("sub");
        if (!(subject instanceof String sub) || sub.isBlank()) {
            return unauthenticated("token has no sub (the producer identity)");
        }
        if (sub.getBytes(StandardCharsets.UTF_8).length > 65535 || sub.indexOf('\0') >= 0) {
            return unauthenticated("token sub is longer than 65535 UTF-8 bytes or holds NUL");
        }
        // getClaims(), not getClaim(): a JSON null is present and refused, never taken as "no claim"
        Map<String, Object> all = claims.getClaims();
        if (!all.containsKey(TENANT_CLAIM)) {
            if (rules.claims().tenantClaim() == TenantClaim.REQUIRED) {
                return forbidden("token not valid for this topic: it has no " + TENANT_CLAIM + " claim (topic." + rules.topic()
                        + ".auth.tenant.claim=required)");
            }
        } else if (!(all.get(TENANT_CLAIM) instanceof String s && sameTenant(s, tenant))) {
            // neither the claimed tenant nor this topic's is named: the event may be read by either
            return forbidden("token not valid for this topic: its " + TENANT_CLAIM + " claim is not this topic's tenant");
        }
        // auth.admin.claim: JSON true only (not "true", not 1), so a claim some issuer fills with other data is no admin flag
        return new AuthResult.Verified(sub, rules.claims().adminClaim() != null && Boolean.TRUE.equals(all.get(rules.claims().adminClaim())));
    }

    private static AuthResult forbidden(String detail) {
        return new AuthResult.Refused(RejectReason.FORBIDDEN, detail);
    }

    private static boolean sameTenant(String claimed, UUID tenant) {
        try {
            return UUID.fromString(claimed.trim()).equals(tenant);
        } catch (IllegalArgumentException e) {
            return false;
        }
    }

    private static String token(Headers headers) {
        Header found = null;
        if (headers != null) {
            for (Header h : headers) {
                if (h.key().equalsIgnoreCase(HEADER)) {
                    if (found != null) {
                        throw new Refusal(unauthenticated("the " + HEADER + " header appears more than once"));
                    }
                    found = h;
                }
            }
        }
        if (found == null || found.value() == null || found.value().length == 0) {
            throw new Refusal(unauthenticated("this topic requires a signed token in the " + HEADER + " header, and the record has none"));
        }
        if (found.value().length > MAX_TOKEN_BYTES) {
            throw new Refusal(unauthenticated("the " + HEADER + " header is " + found.value().length + " bytes, limit " + MAX_TOKEN_BYTES));
        }
        String text;
        try {
            text = StandardCharsets.UTF_8.newDecoder().onMalformedInput(CodingErrorAction.REPORT)
                    .onUnmappableCharacter(CodingErrorAction.REPORT).decode(ByteBuffer.wrap(found.value())).toString().strip();
        } catch (CharacterCodingException e) {
            throw new Refusal(unauthenticated("the " + HEADER + " header is not valid UTF-8"));
        }
        return text.regionMatches(true, 0, "Bearer ", 0, 7) ? text.substring(7).strip() : text;
    }

    /** The topic's keys that could have signed a token with this header, as JDK keys, or none if the algorithm is not allowed. */
    private List<Key> keysFor(JWSHeader header) {
        List<Key> out = new ArrayList<>();
        JWSAlgorithm alg = header.getAlgorithm();
        if (!allowed.contains(alg)) {
            return out; // the processor then refuses: "another algorithm expected, or no matching key"
        }
        JWKMatcher matcher = JWKMatcher.forJWSHeader(header);
        // a key without a kid (a PEM file, say) is a candidate for any token of its type
        JWKMatcher anyKid = JWKMatcher.forJWSHeader(new JWSHeader.Builder(header).keyID(null).build());
        if (matcher == null || anyKid == null) {
            return out;
        }
        for (JWK jwk : keyFile.keys()) {
            if (!matcher.matches(jwk) && !(jwk.getKeyID() == null && anyKid.matches(jwk))) {
                continue;
            }
            try {
                if (jwk instanceof RSAKey rsa && JWSAlgorithm.Family.RSA.contains(alg)) {
                    out.add(rsa.toRSAPublicKey());
                } else if (jwk instanceof ECKey ec && JWSAlgorithm.Family.EC.contains(alg)) {
                    out.add(ec.toECPublicKey());
                } else if (jwk instanceof OctetKeyPair okp && Ed25519JdkVerifier.ALGORITHMS.contains(alg)
                        && Curve.Ed25519.equals(okp.getCurve())) {
                    out.add(KeyFile.ed25519(okp));
                } else if (jwk instanceof OctetSequenceKey oct && JWSAlgorithm.HS256.equals(alg)) {
                    out.add(oct.toSecretKey("HmacSHA256"));
                }
            } catch (JOSEException | GeneralSecurityException e) {
                // a key in the file that does not convert cannot have signed anything: skip it
            }
        }
        return out;
    }

    /** nimbus's verifiers, except EdDSA, which goes to the JDK (see {@link Ed25519JdkVerifier}). */
    private static final class Verifiers implements JWSVerifierFactory {
        private final DefaultJWSVerifierFactory delegate = new DefaultJWSVerifierFactory();

        @Override
        public JWSVerifier createJWSVerifier(JWSHeader header, Key key) throws JOSEException {
            if (Ed25519JdkVerifier.ALGORITHMS.contains(header.getAlgorithm()) && key instanceof java.security.PublicKey pk) {
                return new Ed25519JdkVerifier(pk);
            }
            return delegate.createJWSVerifier(header, key);
        }

        @Override
        public Set<JWSAlgorithm> supportedJWSAlgorithms() {
            Set<JWSAlgorithm> s = new HashSet<>(delegate.supportedJWSAlgorithms());
            s.addAll(Ed25519JdkVerifier.ALGORITHMS);
            return s;
        }

        @Override
        public JCAContext getJCAContext() {
            return delegate.getJCAContext();
        }
    }

    private static AuthResult unauthenticated(String detail) {
        return new AuthResult.Refused(RejectReason.UNAUTHENTICATED, detail);
    }

    private static String printable(String s) {
        String t = s.length() > 200 ? s.substring(0, 200) + "…" : s;
        return t.replaceAll("\\p{Cntrl}", "\uFFFD");
    }

    /** A {@code crit} header naming a parameter nimbus does not process: the token is refused before any key is tried. */
    private static final class UnknownCritical extends KeySourceException {
        UnknownCritical(Set<String> crit) {
            super("token rejected: its crit header names parameters this bridge does not understand: "
                    + printable(String.valueOf(crit)));
        }
    }

    /** Control flow: a header that cannot hold a token. */
    private static final class Refusal extends RuntimeException {
        final AuthResult result;

        Refusal(AuthResult result) {
            super(null, null, false, false);
            this.result = result;
        }
    }
}
