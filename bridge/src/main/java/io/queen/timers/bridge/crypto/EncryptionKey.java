package io.queen.timers.bridge.crypto;

import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.Locale;
import javax.crypto.SecretKey;
import javax.crypto.spec.SecretKeySpec;

/**
 * One AES-256 key as Queen takes it ({@code QUEEN_ENCRYPTION_KEY}: 64 hex characters = 32 bytes), with
 * its key id: the first 16 hex characters of SHA-256 over the 32 key bytes. The id is derived, not
 * configured, so a reader holding the key finds it from the envelope's {@code keyId} without a second
 * setting that could disagree with the key; 64 bits of a hash say nothing useful about a random
 * 256-bit key.
 */
public record EncryptionKey(String id, SecretKey secret) {

    /** @param setting the setting it came from, named in the error */
    public static EncryptionKey fromHex(String hex, String setting) {
        String h = hex.trim();
        if (h.length() != 64 || !h.chars().allMatch(c -> Character.digit(c, 16) >= 0)) {
            throw new IllegalArgumentException("setting " + setting + " must be 64 hex characters (a 32-byte AES-256 key), got "
                    + h.length() + " characters" + (h.length() == 64 ? " that are not all hex" : ""));
        }
        byte[] bytes = HexFormat.of().parseHex(h.toLowerCase(Locale.ROOT));
        return new EncryptionKey(idOf(bytes), new SecretKeySpec(bytes, "AES"));
    }

    private static String idOf(byte[] key) {
        try {
            byte[] d = MessageDigest.getInstance("SHA-256").digest(key);
            return HexFormat.of().formatHex(d, 0, 8);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-256 is part of every JDK", e);
        }
    }

    @Override
    public String toString() {
        return "EncryptionKey[" + id + "]"; // never the bytes
    }
}
