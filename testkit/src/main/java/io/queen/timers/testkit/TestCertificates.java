package io.queen.timers.testkit;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.GeneralSecurityException;
import java.security.KeyStore;
import java.security.PrivateKey;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * A throw-away certificate authority and one server certificate it signed (DNS {@code localhost}, IP
 * {@code 127.0.0.1}), made by the JDK's own {@code keytool}, so no test hand-writes crypto: the
 * broker's TLS listener and PostgreSQL's {@code ssl=on} present the server certificate, the clients
 * trust the CA only. Files: {@link #caPem()} (the clients' trust), {@link #serverKeyStore()} (PKCS12,
 * the broker's), {@link #serverCertPem()} and {@link #serverKeyPem()} (PostgreSQL's; the key 0600 as
 * PostgreSQL demands). Valid for two days.
 */
public final class TestCertificates {

    private final Path dir;
    private final String storePassword;

    private TestCertificates(Path dir, String storePassword) {
        this.dir = dir;
        this.storePassword = storePassword;
    }

    /** Makes the CA and the server certificate under a new temporary directory. */
    public static TestCertificates create() {
        try {
            Path dir = Files.createTempDirectory("queen-tls-");
            String pw = java.util.UUID.randomUUID().toString();
            TestCertificates c = new TestCertificates(dir, pw);
            c.make();
            return c;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private void make() throws IOException {
        String ca = dir.resolve("ca.p12").toString();
        String server = serverKeyStore().toString();
        keytool("-genkeypair", "-keystore", ca, "-storetype", "PKCS12", "-storepass", storePassword, "-alias", "ca",
                "-dname", "CN=queen-timers test CA", "-keyalg", "RSA", "-keysize", "2048", "-validity", "2",
                "-ext", "bc:c");
        keytool("-exportcert", "-rfc", "-keystore", ca, "-storepass", storePassword, "-alias", "ca", "-file", caPem().toString());
        keytool("-genkeypair", "-keystore", server, "-storetype", "PKCS12", "-storepass", storePassword, "-alias", "server",
                "-dname", "CN=localhost", "-keyalg", "RSA", "-keysize", "2048", "-validity", "2");
        Path csr = dir.resolve("server.csr");
        keytool("-certreq", "-keystore", server, "-storepass", storePassword, "-alias", "server", "-file", csr.toString());
        keytool("-gencert", "-rfc", "-keystore", ca, "-storepass", storePassword, "-alias", "ca", "-infile", csr.toString(),
                "-outfile", serverCertPem().toString(), "-validity", "2",
                "-ext", "SAN=dns:localhost,ip:127.0.0.1", "-ext", "KU=digitalSignature,keyEncipherment", "-ext", "EKU=serverAuth");
        keytool("-importcert", "-noprompt", "-keystore", server, "-storepass", storePassword, "-alias", "ca", "-file", caPem().toString());
        keytool("-importcert", "-keystore", server, "-storepass", storePassword, "-alias", "server", "-file", serverCertPem().toString());
        writeServerKeyPem();
    }

    /** PostgreSQL reads a PEM key: the PKCS#8 encoding of the key keytool made, base64 in PEM armour (no crypto here). */
    private void writeServerKeyPem() throws IOException {
        try (InputStream in = Files.newInputStream(serverKeyStore())) {
            KeyStore ks = KeyStore.getInstance("PKCS12");
            ks.load(in, storePassword.toCharArray());
            PrivateKey key = (PrivateKey) ks.getKey("server", storePassword.toCharArray());
            String pem = "-----BEGIN PRIVATE KEY-----\n"
                    + Base64.getMimeEncoder(64, "\n".getBytes(StandardCharsets.US_ASCII)).encodeToString(key.getEncoded())
                    + "\n-----END PRIVATE KEY-----\n";
            Files.writeString(serverKeyPem(), pem);
            Files.setPosixFilePermissions(serverKeyPem(), PosixFilePermissions.fromString("rw-------"));
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("cannot read the server key keytool made", e);
        }
    }

    private static void keytool(String... args) throws IOException {
        List<String> cmd = new ArrayList<>();
        cmd.add(Path.of(System.getProperty("java.home"), "bin", "keytool").toString());
        cmd.addAll(List.of(args));
        Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        try {
            if (!p.waitFor(60, TimeUnit.SECONDS) || p.exitValue() != 0) {
                throw new IllegalStateException("keytool " + args[0] + " failed: " + out);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    public Path directory() {
        return dir;
    }

    /** The CA certificate, PEM: what every client trusts (pgjdbc sslrootcert, Kafka ssl.truststore.type=PEM). */
    public Path caPem() {
        return dir.resolve("ca.pem");
    }

    public Path serverKeyStore() {
        return dir.resolve("server.p12");
    }

    public String storePassword() {
        return storePassword;
    }

    public Path serverCertPem() {
        return dir.resolve("server.pem");
    }

    public Path serverKeyPem() {
        return dir.resolve("server.key");
    }
}
