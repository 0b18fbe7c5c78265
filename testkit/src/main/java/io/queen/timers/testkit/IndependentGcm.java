package io.queen.timers.testkit;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.util.Base64;
import org.bouncycastle.crypto.InvalidCipherTextException;
import org.bouncycastle.crypto.engines.AESEngine;
import org.bouncycastle.crypto.modes.GCMBlockCipher;
import org.bouncycastle.crypto.params.AEADParameters;
import org.bouncycastle.crypto.params.KeyParameter;

/**
 * Opens a Queen envelope with BouncyCastle's own AES-GCM (lightweight API, not the JDK provider that
 * sealed it), and checks its shape on the way: 16-byte IV, 16-byte tag. A second implementation that
 * agrees is what says the envelope is standard AES-256-GCM and not merely self-consistent.
 */
public final class IndependentGcm {

    private static final ObjectMapper JSON = new ObjectMapper();

    private IndependentGcm() {}

    public record Opened(byte[] plaintext, int ivBytes, int tagBytes) {}

    /** @throws InvalidCipherTextException when the tag does not authenticate */
    public static Opened open(byte[] envelope, byte[] key) throws IOException, InvalidCipherTextException {
        JsonNode n = JSON.readTree(envelope);
        byte[] iv = Base64.getDecoder().decode(n.get("iv").textValue());
        byte[] ct = Base64.getDecoder().decode(n.get("encrypted").textValue());
        byte[] tag = Base64.getDecoder().decode(n.get("authTag").textValue());
        GCMBlockCipher gcm = (GCMBlockCipher) GCMBlockCipher.newInstance(AESEngine.newInstance());
        gcm.init(false, new AEADParameters(new KeyParameter(key), tag.length * 8, iv));
        byte[] in = new byte[ct.length + tag.length];
        System.arraycopy(ct, 0, in, 0, ct.length);
        System.arraycopy(tag, 0, in, ct.length, tag.length);
        byte[] out = new byte[gcm.getOutputSize(in.length)];
        int len = gcm.processBytes(in, 0, in.length, out, 0);
        len += gcm.doFinal(out, len);
        byte[] plain = new byte[len];
        System.arraycopy(out, 0, plain, 0, len);
        return new Opened(plain, iv.length, tag.length);
    }
}
