package io.queen.timers.processes;

import io.queen.timers.embedded.EmbeddedPostgresServer;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * PostgreSQL as a process of its own, restartable on the same data directory: the zonky binaries the
 * project ships, driven by {@code pg_ctl}. The first start goes through {@link EmbeddedPostgresServer}
 * (it extracts the binaries and runs initdb); every later start and stop is {@code pg_ctl} on the data
 * directory, under {@code unshare -U} as zonky does, so it works as root too.
 *
 * <p>Who starts it chooses how durable it is ({@link Durability}) and how it is sized (settings passed
 * as {@code -c name=value}): the fault harness runs with fsync off, the benchmarks durable and sized
 * like a small production server ({@link #SMALL_PRODUCTION}).
 */
public final class PostgresProcess {

    public enum Shutdown { IMMEDIATE, FAST }

    /**
     * DURABLE: fsync, synchronous_commit and full_page_writes on, what users run. FSYNC_OFF: fsync off
     * but {@code synchronous_commit} and full_page_writes on — for the fault harness, where the machine never crashes, only
     * processes do: an immediate shutdown must still not lose a commit the services were told about.
     */
    public enum Durability { DURABLE, FSYNC_OFF }

    /**
     * A small production server (2 vCPU, 4 GB RAM, SSD), the usual sizing rules: shared_buffers a quarter of
     * RAM, effective_cache_size three quarters, WAL sized so that a benchmark of a few minutes does not
     * checkpoint on WAL volume, checkpoints spread. Durability settings are not here: see {@link Durability}.
     */
    public static final Map<String, String> SMALL_PRODUCTION = orderedMap(
            "max_connections", "200",
            "shared_buffers", "1GB",
            "effective_cache_size", "3GB",
            "work_mem", "16MB",
            "maintenance_work_mem", "256MB",
            "wal_buffers", "16MB",
            "min_wal_size", "1GB",
            "max_wal_size", "4GB",
            "checkpoint_timeout", "15min",
            "checkpoint_completion_target", "0.9",
            "random_page_cost", "1.1",
            "max_locks_per_transaction", "256");

    private final Path dataDir;
    private final Path logFile;
    private final int port;
    private final Durability durability;
    private final Map<String, String> settings;
    /** The binaries of a PostgreSQL installed on the machine, or null for the project's zonky binaries. */
    private final Path installedBinDir;
    private Path binDir;

    public PostgresProcess(Path workDir, int port, Durability durability, Map<String, String> settings) {
        this(workDir, port, durability, settings, null);
    }

    /**
     * With {@code installedBinDir} (e.g. Debian's {@code /usr/lib/postgresql/15/bin}), the server is that installed
     * PostgreSQL instead of the zonky binaries: what the benchmarks measure "as deployed" on. Its initdb and pg_ctl
     * run under {@code unshare -U} as zonky's do (PostgreSQL refuses root; in the namespace the data directory's
     * owner and the server's user are the same unmapped user), with no Unix socket (the distribution's socket
     * directory is not writable there): clients connect over TCP only.
     */
    public PostgresProcess(Path workDir, int port, Durability durability, Map<String, String> settings, Path installedBinDir) {
        this.dataDir = workDir.resolve("pg-data");
        this.logFile = workDir.resolve("logs/postgres.log");
        this.port = port;
        this.durability = durability;
        this.settings = new LinkedHashMap<>(settings);
        this.installedBinDir = installedBinDir;
    }

    /** The server log (pg_ctl -l): a restart's recovery is read from it. */
    public Path logFile() {
        return logFile;
    }

    public Durability durability() {
        return durability;
    }

    /** The settings it starts with, durability included: what a benchmark prints next to its numbers. */
    public Map<String, String> effectiveSettings() {
        Map<String, String> all = new LinkedHashMap<>();
        boolean durable = durability == Durability.DURABLE;
        all.put("fsync", durable ? "on" : "off");
        all.put("synchronous_commit", "on");
        all.put("full_page_writes", "on");
        all.putAll(settings);
        all.put("timezone", "UTC");
        all.put("listen_addresses", "127.0.0.1");
        if (installedBinDir != null) {
            all.put("unix_socket_directories", "''");
        }
        return all;
    }

    public int port() {
        return port;
    }

    public String jdbcUrl() {
        return jdbcUrl("postgres");
    }

    /** The URL of another database of this server (the soak rig gives each variant a fresh one). */
    public String jdbcUrl(String database) {
        return "jdbc:postgresql://127.0.0.1:" + port + "/" + database;
    }

    /** initdb through zonky (which also finds and extracts the binaries), then stop it and take over with pg_ctl. */
    public synchronized void bootstrap() {
        if (installedBinDir != null) {
            binDir = installedBinDir;
            run(List.of("unshare", "-U", binDir.resolve("initdb").toString(), "-D", dataDir.toString(), "-U", EmbeddedPostgresServer.USER,
                    "-A", "trust", "-E", "UTF8", "--no-locale"), "initdb");
            start();
            return;
        }
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
        StringBuilder options = new StringBuilder("-p " + port);
        effectiveSettings().forEach((k, v) -> options.append(" -c ").append(k).append('=').append(v));
        pgCtl(List.of("-D", dataDir.toString(), "-l", logFile.toString(), "-w", "-t", "120", "-o", options.toString(), "start"));
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

    public boolean stopQuietly() {
        try {
            stop(Shutdown.FAST);
            return true;
        } catch (RuntimeException e) {
            return false;
        }
    }

    /** The postmaster's pid (from postmaster.pid), for CPU accounting from /proc. */
    public long postmasterPid() {
        try {
            return Long.parseLong(Files.readAllLines(dataDir.resolve("postmaster.pid")).get(0).trim());
        } catch (IOException e) {
            throw new UncheckedIOException("PostgreSQL does not run (no " + dataDir.resolve("postmaster.pid") + ")", e);
        }
    }

    private static Map<String, String> orderedMap(String... kv) {
        Map<String, String> m = new LinkedHashMap<>();
        for (int i = 0; i < kv.length; i += 2) {
            m.put(kv[i], kv[i + 1]);
        }
        return java.util.Collections.unmodifiableMap(m);
    }

    private void pgCtl(List<String> args) {
        List<String> cmd = new ArrayList<>(List.of("unshare", "-U", binDir.resolve("pg_ctl").toString()));
        cmd.addAll(args);
        run(cmd, "pg_ctl " + args.get(args.size() - 1));
    }

    private void run(List<String> cmd, String what) {
        try {
            Files.createDirectories(logFile.getParent());
            Process p = new ProcessBuilder(cmd).redirectErrorStream(true)
                    .redirectOutput(ProcessBuilder.Redirect.appendTo(logFile.getParent().resolve("pg_ctl.log").toFile())).start();
            if (!p.waitFor(180, TimeUnit.SECONDS)) {
                p.destroyForcibly();
                throw new IllegalStateException(what + " did not finish in 180 s");
            }
            if (p.exitValue() != 0) {
                throw new IllegalStateException(what + " exited " + p.exitValue()
                        + " (see " + logFile.getParent().resolve("pg_ctl.log") + ")");
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted during " + what, e);
        }
    }
}
