package io.queen.timers.faults.stack;

import io.queen.timers.embedded.EmbeddedPostgresServer;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * PostgreSQL as a process of its own, restartable on the same data directory: the zonky binaries the
 * project ships, driven by {@code pg_ctl}. The first start goes through {@link EmbeddedPostgresServer}
 * (it extracts the binaries and runs initdb); every later start and stop is {@code pg_ctl} on the data
 * directory, under {@code unshare -U} as zonky does, so it works as root too.
 *
 * <p>The fault harness runs it with fsync off (the machine never crashes under the harness, only
 * processes do) but {@code synchronous_commit} on: an immediate shutdown must not lose a commit the
 * services were told about, or the harness would report the harness. The soak rig runs it
 * {@link Durability#DURABLE} (fsync, synchronous_commit and full_page_writes on), because what it
 * measures (WAL bytes, commit latency, vacuum) is what a durable server pays.
 */
public final class PostgresProcess {

    public enum Shutdown { IMMEDIATE, FAST }

    /** DURABLE: every PostgreSQL default that makes a commit survive the machine; NO_FSYNC: fsync off only. */
    public enum Durability { DURABLE, NO_FSYNC }

    private final Path dataDir;
    private final Path logFile;
    private final int port;
    private final Durability durability;
    private Path binDir;

    public PostgresProcess(Path workDir, int port, Durability durability) {
        this.dataDir = workDir.resolve("pg-data");
        this.logFile = workDir.resolve("logs/postgres.log");
        this.port = port;
        this.durability = durability;
    }

    public int port() {
        return port;
    }

    public String jdbcUrl() {
        return jdbcUrl("postgres");
    }

    public String jdbcUrl(String database) {
        return "jdbc:postgresql://127.0.0.1:" + port + "/" + database;
    }

    /** initdb through zonky (which also finds and extracts the binaries), then stop it and take over with pg_ctl. */
    public synchronized void bootstrap() {
        EmbeddedPostgresServer first = EmbeddedPostgresServer.start(dataDir, port, EmbeddedPostgresServer.Durability.DURABLE, false);
        try {
            long pid = Long.parseLong(Files.readAllLines(dataDir.resolve("postmaster.pid")).get(0).trim());
            binDir = Path.of("/proc/" + pid + "/exe").toRealPath().getParent();
        } catch (IOException e) {
            throw new UncheckedIOException("cannot find the PostgreSQL binaries of the bootstrap server", e);
        } finally {
            first.close();
        }
        start();
    }

    public synchronized void start() {
        pgCtl(List.of("-D", dataDir.toString(), "-l", logFile.toString(), "-w", "-t", "120",
                "-o", "-p " + port + (durability == Durability.NO_FSYNC ? " -F" : " -c fsync=on -c full_page_writes=on")
                        + " -c synchronous_commit=on -c max_connections=400 -c shared_buffers=128MB"
                        + " -c max_locks_per_transaction=256 -c timezone=UTC -c listen_addresses=127.0.0.1",
                "start"));
    }

    public synchronized void stop(Shutdown mode) {
        pgCtl(List.of("-D", dataDir.toString(), "-m", mode == Shutdown.IMMEDIATE ? "immediate" : "fast", "-w", "-t", "120", "stop"));
    }

    public synchronized void restart(Shutdown mode, long downMillis) throws InterruptedException {
        stop(mode);
        Thread.sleep(downMillis);
        start();
    }

    /** {@code pg_terminate_backend} of every client connection but the caller's: the services' pools and listeners. */
    public int terminateClientBackends() throws SQLException {
        try (Connection c = connect();
             var rs = c.createStatement().executeQuery("SELECT count(*) FILTER (WHERE pg_terminate_backend(pid)) FROM pg_stat_activity"
                     + " WHERE backend_type = 'client backend' AND pid <> pg_backend_pid()")) {
            rs.next();
            return rs.getInt(1);
        }
    }

    public Connection connect() throws SQLException {
        return connect("postgres");
    }

    public Connection connect(String database) throws SQLException {
        return DriverManager.getConnection(jdbcUrl(database), EmbeddedPostgresServer.USER, "");
    }

    /** The postmaster's pid (from postmaster.pid), or -1 when it is not running. */
    public long pid() {
        try {
            return Long.parseLong(Files.readAllLines(dataDir.resolve("postmaster.pid")).get(0).trim());
        } catch (IOException | RuntimeException e) {
            return -1;
        }
    }

    public boolean stopQuietly() {
        try {
            stop(Shutdown.FAST);
            return true;
        } catch (RuntimeException e) {
            return false;
        }
    }

    private void pgCtl(List<String> args) {
        List<String> cmd = new ArrayList<>(List.of("unshare", "-U", binDir.resolve("pg_ctl").toString()));
        cmd.addAll(args);
        try {
            Files.createDirectories(logFile.getParent());
            Process p = new ProcessBuilder(cmd).redirectErrorStream(true)
                    .redirectOutput(ProcessBuilder.Redirect.appendTo(logFile.getParent().resolve("pg_ctl.log").toFile())).start();
            if (!p.waitFor(180, TimeUnit.SECONDS)) {
                p.destroyForcibly();
                throw new IllegalStateException("pg_ctl " + args.get(args.size() - 1) + " did not finish in 180 s");
            }
            if (p.exitValue() != 0) {
                throw new IllegalStateException("pg_ctl " + args.get(args.size() - 1) + " exited " + p.exitValue()
                        + " (see " + logFile.getParent().resolve("pg_ctl.log") + ")");
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted during pg_ctl", e);
        }
    }
}
