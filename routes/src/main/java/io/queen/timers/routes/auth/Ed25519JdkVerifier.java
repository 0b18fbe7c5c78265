package io.queen.timers.routes.auth;

import com.nimbusds.jose.CriticalHeaderParamsAware;
import com.nimbusds.jose.JOSEException;
import com.nimbusds.jose.JWSAlgorithm;
import com.nimbusds.jose.JWSHeader;
import com.nimbusds.jose.JWSVerifier;
import com.nimbusds.jose.crypto.impl.CriticalHeaderParamsDeferral;
import com.nimbusds.jose.jca.JCAContext;
import com.nimbusds.jose.util.Base64URL;
import java.security.GeneralSecurityException;
import java.security.PublicKey;
import java.security.Signature;
import java.util.Set;

/**
 * EdDSA (Ed25519) signature check through the JDK's own {@code Ed25519} {@link Signature} (JDK 15+).
 * Why not nimbus's {@code Ed25519Verifier}: it delegates to Google Tink, an optional dependency that
 * would add Tink and protobuf to the launcher for one algorithm the JDK already implements. Nimbus still
 * parses the token, builds the signing input and decides; only the signature primitive is the JDK's.
 */
final class Ed25519JdkVerifier implements JWSVerifier, CriticalHeaderParamsAware {

    static final Set<JWSAlgorithm> ALGORITHMS = Set.of(JWSAlgorithm.EdDSA, JWSAlgorithm.Ed25519);

    private final PublicKey key;
    private final JCAContext jca = new JCAContext();
    /** The crit policy of nimbus's own verifiers: a header naming a parameter it does not process fails (RFC 7515 4.1.11). */
    private final CriticalHeaderParamsDeferral crit = new CriticalHeaderParamsDeferral();

    Ed25519JdkVerifier(PublicKey key) {
        this.key = key;
    }

    @Override
    public boolean verify(JWSHeader header, byte[] signingInput, Base64URL signature) throws JOSEException {
        if (!ALGORITHMS.contains(header.getAlgorithm())) {
            throw new JOSEException("not an EdDSA token: " + header.getAlgorithm());
        }
        if (!crit.headerPasses(header)) {
            return false;
        }
        try {
            Signature s = Signature.getInstance("Ed25519");
            s.initVerify(key);
            s.update(signingInput);
            return s.verify(signature.decode());
        } catch (java.security.SignatureException e) {
            return false; // a malformed signature is a bad signature
        } catch (GeneralSecurityException e) {
            throw new JOSEException("Ed25519 not available: " + e, e);
        }
    }

    @Override
    public Set<JWSAlgorithm> supportedJWSAlgorithms() {
        return ALGORITHMS;
    }

    @Override
    public Set<String> getProcessedCriticalHeaderParams() {
        return crit.getProcessedCriticalHeaderParams();
    }

    @Override
    public Set<String> getDeferredCriticalHeaderParams() {
        return crit.getDeferredCriticalHeaderParams();
    }

    @Override
    public JCAContext getJCAContext() {
        return jca;
    }
}
