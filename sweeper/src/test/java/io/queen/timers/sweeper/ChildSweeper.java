package io.queen.timers.sweeper;

import io.queen.timers.core.config.CommonSettings;
import io.queen.timers.relay.AuditSettings;
import io.queen.timers.testkit.PostgresDatabase;
import java.io.IOException;
import java.io.Writer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Properties;

/**
 * A sweeper in a JVM of its own ({@code SweeperMain.main}, the way it runs in production), so a test can give
 * it a heap of its own and see its exit code. No relay, no cleanup, HTTP on a free port; output to a file.
 * Public: e2e's tests (RealBytesPipelineIT, UnreadableRecordIT) start it too, from the test-jar.
 */
public final class ChildSweeper {

    private ChildSweeper() {}

    public static Process start(PostgresDatabase db, String maxHeap, Map<String, String> overrides, Path log) throws IOException {
        return start(db, maxHeap, List.of(), overrides, log);
    }

    /** As above, with more JVM options (a GC log, for instance). */
    public static Process start(PostgresDatabase db, String maxHeap, List<String> jvmOptions, Map<String, String> overrides, Path log)
            throws IOException {
        List<String> options = new ArrayList<>(List.of("-Xmx" + maxHeap));
        options.addAll(jvmOptions);
        return start(db, options, Map.of(), overrides, log);
    }

    /**
     * With exactly these JVM options (the heap among them, or in {@code JAVA_TOOL_OPTIONS}) and these variables added to the
     * process's environment (a preloaded library, for instance).
     */
    public static Process start(PostgresDatabase db, List<String> jvmOptions, Map<String, String> environment, Map<String, String> overrides,
                                Path log) throws IOException {
        Properties p = new Properties();
        p.setProperty(CommonSettings.JDBC_URL, db.jdbcUrl());
        p.setProperty(CommonSettings.JDBC_USER, db.user());
        p.setProperty(CommonSettings.DB_ROLE_CHECK, "false"); // the testkit connects as the server's superuser: the single-role opt-out (docs/schema-and-roles.md#database-roles)
        p.setProperty(CommonSettings.JDBC_PASSWORD, db.password());
        p.setProperty(CommonSettings.KAFKA_BOOTSTRAP, "127.0.0.1:1");   // only readiness would ask; the relay is off
        p.setProperty(CommonSettings.HTTP_PORT, "0");
        p.setProperty(AuditSettings.RELAY_ENABLED, "false");
        p.setProperty(SweeperSettings.CLEANUP_ENABLED, "false");
        overrides.forEach(p::setProperty);
        Path config = Files.createTempFile("child-sweeper", ".properties");
        config.toFile().deleteOnExit();
        try (Writer w = Files.newBufferedWriter(config)) {
            p.store(w, "child sweeper of a test");
        }
        Files.createDirectories(log.toAbsolutePath().getParent());
        String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        List<String> cmd = new ArrayList<>(List.of(java));
        cmd.addAll(jvmOptions);
        cmd.addAll(List.of("-cp", System.getProperty("java.class.path"), "io.queen.timers.sweeper.SweeperMain", "--config", config.toString()));
        ProcessBuilder pb = new ProcessBuilder(cmd).redirectErrorStream(true).redirectOutput(log.toFile());
        pb.environment().putAll(environment);
        return pb.start();
    }
}
