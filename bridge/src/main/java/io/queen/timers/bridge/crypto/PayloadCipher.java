package io.queen.timers.bridge.crypto;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.security.GeneralSecurityException;
import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import javax.crypto.AEADBadTagException;
import javax.crypto.Cipher;
import javax.crypto.spec.GCMParameterSpec;

/**
 * Queen's payload encryption, byte for byte: AES-256-GCM (the JDK's {@code AES/GCM/NoPadding}), a fresh
 * random 16-byte IV per payload, no associated data, and the stored payload is the JSON object
 * <pre>{"encrypted": base64(ciphertext), "iv": base64(iv), "authTag": base64(16-byte tag), "keyId": "…"}</pre>
 * {@code keyId} ({@link EncryptionKey#id()}) is ours: Queen reads an envelope by its three fields and
 * ignores any other, so Queen still decrypts what we store, and our readers pick the right key of a
 * rotation from it. An envelope without {@code keyId} (written by Queen) is tried against every key.
 *
 * <p>One instance holds the key in use (may be absent: a reader with old keys only) and older keys,
 * which only open. Thread-safe: a {@link Cipher} is made per call.
 */
public final class PayloadCipher {

    public static final int IV_BYTES = 16;
    public static final int TAG_BYTES = 16;
    private static final String TRANSFORMATION = "AES/GCM/NoPadding";
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final Base64.Encoder B64 = Base64.getEncoder();
    private static final Base64.Decoder B64_IN = Base64.getDecoder();

    private final EncryptionKey current;
    private final Map<String, EncryptionKey> byId = new LinkedHashMap<>();
    private final SecureRandom random = new SecureRandom();

    /** @param current the key new payloads are sealed with, or null (open only); @param older keys that only open */
    public PayloadCipher(EncryptionKey current, List<EncryptionKey> older) {
        this.current = current;
        if (current != null) {
            byId.put(current.id(), current);
        }
        older.forEach(k -> byId.putIfAbsent(k.id(), k));
        if (byId.isEmpty()) {
            throw new IllegalArgumentException("a payload cipher needs at least one key");
        }
    }

    /** The id of the key new payloads are sealed with. */
    public Optional<String> currentKeyId() {
        return Optional.ofNullable(current).map(EncryptionKey::id);
    }

    /** The envelope of {@code plaintext} (the compact JSON payload) under the key in use. */
    public byte[] seal(byte[] plaintext) {
        if (current == null) {
            throw new IllegalStateException("no encryption key in use (encryption.key): this cipher only opens");
        }
        byte[] iv = new byte[IV_BYTES];
        random.nextBytes(iv);
        byte[] out;
        try {
            Cipher c = Cipher.getInstance(TRANSFORMATION);
            c.init(Cipher.ENCRYPT_MODE, current.secret(), new GCMParameterSpec(TAG_BYTES * 8, iv));
            out = c.doFinal(plaintext);
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("AES-256-GCM is not available in this JVM: " + e, e);
        }
        // the JDK appends the tag to the ciphertext; Queen keeps them apart
        int n = out.length - TAG_BYTES;
        ObjectNode env = JSON.createObjectNode();
        env.put("encrypted", B64.encodeToString(Arrays.copyOfRange(out, 0, n)));
        env.put("iv", B64.encodeToString(iv));
        env.put("authTag", B64.encodeToString(Arrays.copyOfRange(out, n, out.length)));
        env.put("keyId", current.id());
        try {
            return JSON.writeValueAsBytes(env);
        } catch (IOException e) {
            throw new IllegalStateException(e);
        }
    }

    /** True when {@code payload} is a JSON object with Queen's three envelope fields as strings. */
    public static boolean isEnvelope(byte[] payload) {
        try {
            return envelope(JSON.readTree(payload)).isPresent();
        } catch (IOException | RuntimeException e) {
            return false;
        }
    }

    /** The key id an envelope names, if any (a Queen-written envelope names none). */
    public static Optional<String> keyIdOf(byte[] payload) {
        try {
            JsonNode n = JSON.readTree(payload);
            return n != null && n.path("keyId").isTextual() ? Optional.of(n.get("keyId").textValue()) : Optional.empty();
        } catch (IOException e) {
            return Optional.empty();
        }
    }

    /**
     * The plaintext of an envelope. Fails with {@link EnvelopeException} when it is not an envelope, names
     * a key this cipher does not hold, or does not authenticate (tampered, or a wrong key): GCM never
     * returns bytes it could not authenticate.
     */
    public byte[] open(byte[] payload) throws EnvelopeException {
        JsonNode root;
        try {
            root = JSON.readTree(payload);
        } catch (IOException e) {
            throw new EnvelopeException("not an encryption envelope: not JSON");
        }
        Parts p = envelope(root).orElseThrow(() -> new EnvelopeException(
                "not an encryption envelope: expected a JSON object with string fields encrypted, iv, authTag"));
        List<EncryptionKey> candidates = new ArrayList<>();
        if (p.keyId != null) {
            EncryptionKey k = byId.get(p.keyId);
            if (k == null) {
                throw new EnvelopeException("sealed with key " + p.keyId + ", which is not among the configured keys " + byId.keySet()
                        + " (encryption.key, encryption.keys.previous)");
            }
            candidates.add(k);
        } else {
            candidates.addAll(byId.values());
        }
        byte[] iv;
        byte[] sealed;
        try {
            iv = B64_IN.decode(p.iv);
            byte[] ct = B64_IN.decode(p.encrypted);
            byte[] tag = B64_IN.decode(p.authTag);
            if (tag.length != TAG_BYTES) {
                throw new EnvelopeException("authTag is " + tag.length + " bytes, expected " + TAG_BYTES);
            }
            if (iv.length == 0) {
                throw new EnvelopeException("iv is empty");
            }
            sealed = new byte[ct.length + tag.length];
            System.arraycopy(ct, 0, sealed, 0, ct.length);
            System.arraycopy(tag, 0, sealed, ct.length, tag.length);
        } catch (IllegalArgumentException e) {
            throw new EnvelopeException("envelope field is not base64: " + e.getMessage());
        }
        for (EncryptionKey k : candidates) {
            try {
                Cipher c = Cipher.getInstance(TRANSFORMATION);
                c.init(Cipher.DECRYPT_MODE, k.secret(), new GCMParameterSpec(TAG_BYTES * 8, iv));
                return c.doFinal(sealed);
            } catch (AEADBadTagException e) {
                // not this key, or tampered: try the next, then report
            } catch (GeneralSecurityException e) {
                throw new EnvelopeException("cannot decrypt: " + e);
            }
        }
        throw new EnvelopeException("authentication failed: the envelope was altered or sealed with another key"
                + (p.keyId == null ? " (tried " + candidates.size() + " keys)" : " (key " + p.keyId + ")"));
    }

    private record Parts(String encrypted, String iv, String authTag, String keyId) {}

    private static Optional<Parts> envelope(JsonNode n) {
        if (n == null || !n.isObject() || !n.path("encrypted").isTextual() || !n.path("iv").isTextual()
                || !n.path("authTag").isTextual()) {
            return Optional.empty();
        }
        return Optional.of(new Parts(n.get("encrypted").textValue(), n.get("iv").textValue(), n.get("authTag").textValue(),
                n.path("keyId").isTextual() ? n.get("keyId").textValue() : null));
    }

    /** An envelope that cannot be opened; the message says why, never the key. */
    public static final class EnvelopeException extends Exception {
        public EnvelopeException(String message) {
            super(message, null, false, false);
        }
    }
}
