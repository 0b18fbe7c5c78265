package io.queen.timers.routes.auth;

import com.nimbusds.jose.jwk.Curve;
import com.nimbusds.jose.jwk.ECKey;
import com.nimbusds.jose.jwk.JWK;
import com.nimbusds.jose.jwk.JWKSet;
import com.nimbusds.jose.jwk.OctetKeyPair;
import com.nimbusds.jose.jwk.RSAKey;
import com.nimbusds.jose.util.Base64URL;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.BasicFileAttributes;
import java.security.KeyFactory;
import java.security.PublicKey;
import java.security.interfaces.ECPublicKey;
import java.security.interfaces.RSAPublicKey;
import java.security.spec.X509EncodedKeySpec;
import java.text.ParseException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Base64;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The verification keys of one topic, from a file: a JWKS (JSON, {@code {"keys": [...]}}) or PEM
 * public keys ({@code -----BEGIN PUBLIC KEY-----}: RSA, EC or Ed25519). The file is re-read when its
 * modification time or size changes (one stat per check), so a key rotation is: add the new key to the
 * file, switch the signers, later remove the old key; no restart. A file that cannot be read or parsed
 * on a reload fails closed: no key at all until a reload succeeds ({@link #problem()} says why), because
 * the edit that broke it may be the one removing a leaked key, and keeping the old set would keep that
 * key valid. At start it is an error.
 */
final class KeyFile {

    private static final Logger LOG = LoggerFactory.getLogger(KeyFile.class);
    private static final Pattern PEM = Pattern.compile("-----BEGIN PUBLIC KEY-----([A-Za-z0-9+/=\\s]+)-----END PUBLIC KEY-----");
    /** The DER prefix of an Ed25519 SubjectPublicKeyInfo; the raw 32-byte key follows it. */
    private static final byte[] ED25519_SPKI_PREFIX = {0x30, 0x2a, 0x30, 0x05, 0x06, 0x03, 0x2b, 0x65, 0x70, 0x03, 0x21, 0x00};

    /** While the file is broken, how often it is read again even if its time and size did not change (a transient read error). */
    private static final long RETRY_BROKEN_NANOS = 1_000_000_000L;

    private final Path path;
    private volatile List<JWK> keys;
    private volatile Object stamp;
    /** Bumped whenever {@link #keys} is replaced: what was verified with the old set must be verified again. */
    private volatile long generation;
    /** Why the file holds no usable keys now; null while the last read succeeded. */
    private volatile String problem;
    private volatile java.time.Instant brokenSince;
    /** When the broken file was last tried; read without the lock on every check. */
    private volatile long brokenReadAtNanos;

    KeyFile(Path path) throws IOException, ParseException {
        this.path = path;
        this.stamp = stamp();
        this.keys = parse(Files.readString(path, StandardCharsets.UTF_8));
    }

    Path path() {
        return path;
    }

    /** The keys as the file holds them now (re-read if it changed since the last call); none while it is broken. */
    List<JWK> keys() {
        Object now;
        try {
            now = stamp();
        } catch (IOException | RuntimeException e) {
            synchronized (this) {
                // gone or unreadable: fail closed, and read it again whatever stamp it has when it is back
                broken("cannot stat it: " + e);
                stamp = null;
            }
            return keys;
        }
        if (!now.equals(stamp) || (problem != null && System.nanoTime() - brokenReadAtNanos >= RETRY_BROKEN_NANOS)) {
            synchronized (this) {
                if (!now.equals(stamp) || (problem != null && System.nanoTime() - brokenReadAtNanos >= RETRY_BROKEN_NANOS)) {
                    try {
                        List<JWK> read = parse(Files.readString(path, StandardCharsets.UTF_8));
                        keys = read;
                        generation++;
                        if (problem != null) {
                            LOG.warn("verification key file {} readable again: {} keys; tokens are verified again", path, read.size());
                        } else {
                            LOG.info("verification key file {} re-read: {} keys", path, read.size());
                        }
                        problem = null;
                    } catch (IOException | ParseException | RuntimeException e) {
                        broken("cannot read it: " + e.getMessage());
                    }
                    stamp = now;
                }
            }
        }
        return keys;
    }

    /** Why every token is refused now (the file is broken, since when), or null. Memory only. */
    String problem() {
        String p = problem;
        return p == null ? null : p + " (since " + brokenSince + ")";
    }

    /** Caller holds the lock. Drops every key: what a broken edit meant to remove must not stay valid. */
    private void broken(String why) {
        brokenReadAtNanos = System.nanoTime();
        if (problem == null) {
            LOG.error("verification key file {} {}; every token is refused until it can be read again", path, why);
            brokenSince = java.time.Instant.now();
            keys = List.of();
            generation++;
        }
        problem = why;
    }

    long generation() {
        return generation;
    }

    private Object stamp() throws IOException {
        BasicFileAttributes a = Files.readAttributes(path, BasicFileAttributes.class);
        return List.of(a.lastModifiedTime(), a.size(), a.fileKey() == null ? "" : a.fileKey());
    }

    static List<JWK> parse(String text) throws ParseException {
        String t = text.strip();
        if (t.startsWith("{")) {
            List<JWK> keys = JWKSet.parse(t).getKeys();
            if (keys.isEmpty()) {
                throw new ParseException("the JWKS holds no keys", 0);
            }
            return keys;
        }
        List<JWK> out = new ArrayList<>();
        Matcher m = PEM.matcher(t);
        while (m.find()) {
            out.add(fromDer(Base64.getMimeDecoder().decode(m.group(1).replaceAll("\\s", ""))));
        }
        if (out.isEmpty()) {
            throw new ParseException("neither a JWKS ({\"keys\": [...]}) nor PEM public keys (-----BEGIN PUBLIC KEY-----)", 0);
        }
        return out;
    }

    private static JWK fromDer(byte[] der) throws ParseException {
        for (String alg : List.of("RSA", "EC", "Ed25519")) {
            PublicKey k;
            try {
                k = KeyFactory.getInstance(alg).generatePublic(new X509EncodedKeySpec(der));
            } catch (Exception e) {
                continue; // not this family
            }
            if (k instanceof RSAPublicKey rsa) {
                return new RSAKey.Builder(rsa).build();
            }
            if (k instanceof ECPublicKey ec) {
                return new ECKey.Builder(Curve.forECParameterSpec(ec.getParams()), ec).build();
            }
            byte[] enc = k.getEncoded();
            if (enc.length == ED25519_SPKI_PREFIX.length + 32
                    && Arrays.equals(Arrays.copyOf(enc, ED25519_SPKI_PREFIX.length), ED25519_SPKI_PREFIX)) {
                return new OctetKeyPair.Builder(Curve.Ed25519, Base64URL.encode(Arrays.copyOfRange(enc, ED25519_SPKI_PREFIX.length, enc.length)))
                        .build();
            }
        }
        throw new ParseException("a PEM public key that is not RSA, EC or Ed25519", 0);
    }

    /** The JDK public key of an Ed25519 JWK (X.509 form: the fixed prefix, then the raw key). */
    static PublicKey ed25519(OctetKeyPair okp) throws java.security.GeneralSecurityException {
        byte[] x = okp.getX().decode();
        byte[] der = Arrays.copyOf(ED25519_SPKI_PREFIX, ED25519_SPKI_PREFIX.length + x.length);
        System.arraycopy(x, 0, der, ED25519_SPKI_PREFIX.length, x.length);
        return KeyFactory.getInstance("Ed25519").generatePublic(new X509EncodedKeySpec(der));
    }
}
