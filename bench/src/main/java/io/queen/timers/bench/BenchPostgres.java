package io.queen.timers.bench;

import io.queen.timers.processes.Launcher;
import io.queen.timers.processes.PostgresProcess;
import io.queen.timers.testkit.TestPostgres;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.stream.Collectors;
import java.util.stream.Stream;

/**
 * The PostgreSQL every benchmark runs on: a server of its own (pg_ctl, data in a temporary directory),
 * <b>durable</b> — fsync, synchronous_commit and full_page_writes on, what users run — and sized like a
 * small production server ({@link PostgresProcess#SMALL_PRODUCTION}), with {@code pg_stat_statements}
 * loaded so a run can say where the database's time went. {@code -Dbench.fsync=off} is the only way to
 * get the fsync-off variant, and every benchmark prints which one it ran on.
 */
public final class BenchPostgres {

    public static final String FSYNC_PROPERTY = "bench.fsync";
    /**
     * The binaries of an installed PostgreSQL to run instead of the zonky ones ({@code -Dbench.pg.bin=} or the environment's
     * {@code BENCH_PG_BIN}; {@code bench/run} sets Debian's {@code /usr/lib/postgresql/15/bin} when it is there): the server
     * the steady comparison of issue 48 is measured on, as deployed.
     */
    public static final String BIN_PROPERTY = "bench.pg.bin";

    private BenchPostgres() {}

    /** The installed PostgreSQL's bin directory to run, or null for the project's zonky binaries. */
    public static Path binDir() {
        String dir = System.getProperty(BIN_PROPERTY, System.getenv().getOrDefault("BENCH_PG_BIN", ""));
        if (dir.isBlank()) {
            return null;
        }
        Path bin = Path.of(dir);
        if (!Files.isExecutable(bin.resolve("pg_ctl")) || !Files.isExecutable(bin.resolve("initdb"))) {
            throw new IllegalStateException(BIN_PROPERTY + " / BENCH_PG_BIN = " + dir + ": no pg_ctl and initdb there");
        }
        return bin;
    }

    /**
     * The pipeline benchmark's server: {@link PostgresProcess#SMALL_PRODUCTION}, every checkpoint and every autovacuum
     * logged (the stalls a run looks for, logged with their times), and {@code pg_stat_statements} loaded only for a
     * profile ({@code track = all} so statements inside the stored functions are seen, {@code track_planning} so the
     * planning a call pays is seen apart): a stock server otherwise, so a run's CPU has no statement tracking in it.
     */
    public static Map<String, String> pipelineSettings(boolean profile) {
        Map<String, String> s = new LinkedHashMap<>(PostgresProcess.SMALL_PRODUCTION);
        s.put("log_checkpoints", "on");
        s.put("log_autovacuum_min_duration", "0");
        s.put("log_lock_waits", "on");
        if (profile) {
            s.put("shared_preload_libraries", "pg_stat_statements");
            s.put("pg_stat_statements.track", "all");
            s.put("pg_stat_statements.track_planning", "on");
            s.put("pg_stat_statements.max", "10000");
            s.put("track_io_timing", "on");
            s.put("track_wal_io_timing", "on");
        }
        return s;
    }

    public static PostgresProcess.Durability durability() {
        return "off".equalsIgnoreCase(System.getProperty(FSYNC_PROPERTY, "on"))
                ? PostgresProcess.Durability.FSYNC_OFF : PostgresProcess.Durability.DURABLE;
    }

    public static Map<String, String> settings() {
        Map<String, String> s = new LinkedHashMap<>(PostgresProcess.SMALL_PRODUCTION);
        s.put("shared_preload_libraries", "pg_stat_statements");
        s.put("pg_stat_statements.track", "all");
        return s;
    }

    /** Starts the server, stopped and deleted when the JVM exits. */
    public static PostgresProcess start() {
        try {
            Path dir = Files.createTempDirectory("queen-bench-pg-");
            PostgresProcess pg = new PostgresProcess(dir, Launcher.freePort(), durability(), settings(), binDir());
            Runtime.getRuntime().addShutdownHook(new Thread(() -> {
                pg.stopQuietly();
                deleteTree(dir);
            }, "bench-postgres-stop"));
            pg.bootstrap();
            return pg;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** Starts the server and makes it the one {@link TestPostgres} hands databases from. */
    public static PostgresProcess startForTestkit() {
        PostgresProcess pg = start();
        TestPostgres.use(pg.jdbcUrl(), "postgres", "", "benchmark PostgreSQL, " + label(pg));
        System.out.println("PostgreSQL: " + label(pg));
        return pg;
    }

    /** One line for the output: which durability, with every setting the server was started with. */
    public static String label(PostgresProcess pg) {
        String head = pg.durability() == PostgresProcess.Durability.DURABLE ? "DURABLE" : "FSYNC OFF (variant asked for with -Dbench.fsync=off)";
        return head + " " + version(pg) + " [" + pg.effectiveSettings().entrySet().stream().map(e -> e.getKey() + "=" + e.getValue())
                .collect(Collectors.joining(" ")) + "]";
    }

    /** The server's version() line, or why it could not be read. */
    public static String version(PostgresProcess pg) {
        try (java.sql.Connection c = pg.connect(); java.sql.Statement st = c.createStatement();
                java.sql.ResultSet rs = st.executeQuery("SELECT version()")) {
            rs.next();
            return rs.getString(1).replaceAll(" on .*", "");
        } catch (java.sql.SQLException e) {
            return "(version unknown: " + e.getMessage() + ")";
        }
    }

    private static void deleteTree(Path dir) {
        try (Stream<Path> s = Files.walk(dir)) {
            s.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
        } catch (IOException | RuntimeException ignored) {
            // a temporary directory; the next boot cleans it if this did not
        }
    }
}
