package io.queen.timers.http.api;

import io.queen.timers.core.config.ConfigException;
import io.queen.timers.http.HttpSettings;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyFactory;
import java.security.KeyStore;
import java.security.PrivateKey;
import java.security.cert.Certificate;
import java.security.cert.CertificateFactory;
import java.security.spec.PKCS8EncodedKeySpec;
import java.util.Base64;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import javax.net.ssl.KeyManagerFactory;
import javax.net.ssl.SSLContext;

/**
 * The API port's TLS (api.tls.keystore.file): the server's key and certificate chain from a PKCS12 or JKS keystore, or
 * from PEM (a PKCS#8 private key and its certificates in one file, as cert-manager and most CAs hand them out). The JDK's
 * own TLS: 1.2 and 1.3 with its default ciphers; no client certificates. Read once at start: a renewed certificate is
 * served after a restart (PRICE: a rolling restart per renewal, instead of a file watch).
 */
final class Tls {

    private static final Pattern PEM = Pattern.compile("-----BEGIN ([A-Z ]+)-----([A-Za-z0-9+/=\\s]+)-----END \\1-----");

    private Tls() {}

    static SSLContext context(Path file, String password) {
        char[] pw = password == null ? new char[0] : password.toCharArray();
        try {
            byte[] bytes = Files.readAllBytes(file);
            KeyStore ks = new String(bytes, 0, Math.min(bytes.length, 4096), StandardCharsets.US_ASCII).contains("-----BEGIN")
                    ? pem(new String(bytes, StandardCharsets.US_ASCII), pw) : KeyStore.getInstance(file.toFile(), pw);
            KeyManagerFactory kmf = KeyManagerFactory.getInstance(KeyManagerFactory.getDefaultAlgorithm());
            kmf.init(ks, pw);
            SSLContext ctx = SSLContext.getInstance("TLS");
            ctx.init(kmf.getKeyManagers(), null, null);
            return ctx;
        } catch (IOException | GeneralSecurityException | RuntimeException e) {
            // never the password, nor the key: which file, and the kind of failure
            throw new ConfigException("setting " + HttpSettings.TLS_KEYSTORE_FILE + " = " + file + ": cannot load the key and certificate ("
                    + e.getClass().getSimpleName() + (e.getMessage() == null ? "" : ": " + e.getMessage()) + "); check "
                    + HttpSettings.TLS_KEYSTORE_PASSWORD);
        }
    }

    /** A keystore of one entry from PEM: the PKCS#8 key (RSA or EC) and the certificates in file order (leaf first). */
    private static KeyStore pem(String text, char[] pw) throws IOException, GeneralSecurityException {
        PrivateKey key = null;
        java.util.List<Certificate> chain = new java.util.ArrayList<>();
        CertificateFactory cf = CertificateFactory.getInstance("X.509");
        Matcher m = PEM.matcher(text);
        while (m.find()) {
            byte[] der = Base64.getMimeDecoder().decode(m.group(2));
            switch (m.group(1)) {
                case "PRIVATE KEY" -> key = privateKey(der);
                case "CERTIFICATE" -> chain.add(cf.generateCertificate(new ByteArrayInputStream(der)));
                default -> throw new GeneralSecurityException("PEM block " + m.group(1) + " is not served: give a PKCS#8 PRIVATE KEY"
                        + " (openssl pkcs8 -topk8 -nocrypt) and CERTIFICATE blocks");
            }
        }
        if (key == null || chain.isEmpty()) {
            throw new GeneralSecurityException("the PEM file needs one PRIVATE KEY and at least one CERTIFICATE");
        }
        KeyStore ks = KeyStore.getInstance("PKCS12");
        ks.load(null, null);
        ks.setKeyEntry("api", key, pw, chain.toArray(new Certificate[0]));
        return ks;
    }

    private static PrivateKey privateKey(byte[] der) throws GeneralSecurityException {
        GeneralSecurityException last = null;
        for (String alg : new String[] {"RSA", "EC", "Ed25519"}) {
            try {
                return KeyFactory.getInstance(alg).generatePrivate(new PKCS8EncodedKeySpec(der));
            } catch (GeneralSecurityException e) {
                last = e;
            }
        }
        throw last;
    }
}
