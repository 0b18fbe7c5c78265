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

    private BenchPostgres() {}

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
            PostgresProcess pg = new PostgresProcess(dir, Launcher.freePort(), durability(), settings());
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
        return head + " [" + pg.effectiveSettings().entrySet().stream().map(e -> e.getKey() + "=" + e.getValue())
                .collect(Collectors.joining(" ")) + "]";
    }

    private static void deleteTree(Path dir) {
        try (Stream<Path> s = Files.walk(dir)) {
            s.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
        } catch (IOException | RuntimeException ignored) {
            // a temporary directory; the next boot cleans it if this did not
        }
    }
}
