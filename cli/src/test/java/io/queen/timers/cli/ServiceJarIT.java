package io.queen.timers.cli;

import static org.assertj.core.api.Assertions.assertThat;

import io.queen.timers.sql.Migrations;
import io.queen.timers.testkit.LaunchedBridge;
import io.queen.timers.testkit.PostgresDatabase;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.jar.JarFile;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The service-only jar as the image runs it ({@code java -jar queen-timers-service.jar <role>}): small,
 * without the embedded broker and PostgreSQL, and every role it carries starts from it for real (a
 * service file lost in shading, Flyway's PostgreSQL plugin or Kafka's providers, shows only here).
 */
class ServiceJarIT {

    static final Path JAR = Path.of("target", "queen-timers-service.jar");
    /** local/target/queen-timers.jar is 200 MiB; this jar 32 MiB. The bound leaves room for new dependencies, not for one platform's PostgreSQL (about 40 MiB). */
    static final long MAX_BYTES = 60L * 1024 * 1024;

    @RegisterExtension
    static final PostgresDatabase db = PostgresDatabase.empty();

    @Test
    void theJarIsSmallAndCarriesNoEmbeddedBrokerOrPostgres() throws IOException {
        assertThat(Files.size(JAR)).as("size of %s", JAR).isLessThan(MAX_BYTES);
        List<String> entries;
        try (JarFile jar = new JarFile(JAR.toFile())) {
            entries = jar.stream().map(e -> e.getName()).collect(Collectors.toList());
        }
        assertThat(entries).as("the launcher and the services are in it")
                .contains("io/queen/timers/cli/QueenTimers.class",
                        "io/queen/timers/cli/BridgeCommand.class", "io/queen/timers/cli/SweeperCommand.class",
                        "io/queen/timers/cli/MigrateCommand.class", "org/postgresql/Driver.class",
                        "org/apache/kafka/clients/consumer/KafkaConsumer.class");
        assertThat(entries).as("nothing of the local stack: the embedded module, the Kafka broker (Scala core), zonky's PostgreSQL")
                .noneMatch(e -> e.startsWith("io/queen/timers/embedded/"))
                .noneMatch(e -> e.startsWith("io/queen/timers/local/"))
                .noneMatch(e -> e.startsWith("kafka/server/") || e.startsWith("scala/"))
                .noneMatch(e -> e.startsWith("io/zonky/"))
                .noneMatch(e -> e.startsWith("postgres-") && e.endsWith(".txz"));
    }

    /** The client's sources and javadoc jars (docs/development.md "Versions and artifacts"): {@code package} builds them, so they are checked here, after it. */
    @Test
    void theClientHasSourcesAndJavadocJars() throws Exception {
        Path target = Path.of("..", "client", "target");
        Path sources = target.resolve("queen-timers-client-" + System.getProperty("project.version") + "-sources.jar");
        Path javadoc = target.resolve("queen-timers-client-" + System.getProperty("project.version") + "-javadoc.jar");
        try (JarFile jar = new JarFile(sources.toFile())) {
            assertThat(jar.getEntry("io/queen/timers/client/command/TimerCommand.java")).isNotNull();
        }
        try (JarFile jar = new JarFile(javadoc.toFile())) {
            assertThat(jar.getEntry("index.html")).isNotNull();
            assertThat(jar.getEntry("io/queen/timers/client/command/TimerCommand.html")).isNotNull();
        }
    }

    @Test
    void everyCommandButLocalAnswersHelp() throws Exception {
        Run top = java("--help");
        assertThat(top.code()).as(top.err()).isZero();
        assertThat(top.out()).contains("bridge", "sweeper", "migrate", "schedule", "offsets").doesNotContain("local");
        for (String sub : List.of("bridge", "sweeper", "migrate")) {
            Run r = java(sub, "--help");
            assertThat(r.code()).as(sub + ": " + r.err()).isZero();
            assertThat(r.out()).as(sub).contains("Usage: queen-timers " + sub);
        }
        Run local = java("local", "--temp");
        assertThat(local.code()).as("not in this jar: a usage error").isEqualTo(2);
        assertThat(local.err()).contains("local");
        Run version = java("--version");
        assertThat(version.out().strip()).isEqualTo("queen-timers " + System.getProperty("project.version"));
    }

    @Test
    void migrateThenABridgeRunFromTheJar() throws Exception {
        Map<String, String> env = new HashMap<>();
        env.put("QUEEN_JDBC_URL", db.jdbcUrl());
        env.put("QUEEN_JDBC_USER", db.user());
        env.put("QUEEN_JDBC_PASSWORD", db.password());
        Run migrate = java(env, "migrate");
        assertThat(migrate.code()).as(migrate.err()).isZero();
        // stdout is the command's output and nothing else: logback prints its whole status there when its
        // configuration warns (a deprecated attribute did), which broke --json for scripts
        assertThat(migrate.out()).matches("applied \\d+ migration\\(s\\); schema version \\d+\\R");
        assertThat(Migrations.pendingCount(db.dataSource())).isZero();

        int port = LaunchedBridge.environment(env, "svc");
        Path log = Files.createTempFile(Path.of("target"), "service-jar-bridge", ".log");
        assertThat(LaunchedBridge.runUntilReady(command(env, "bridge"), port, log)).as("a SIGTERM'd bridge stops cleanly; log: %s", log)
                .isIn(0, 143);
    }

    record Run(int code, String out, String err) {}

    static Run java(String... args) throws Exception {
        return java(Map.of(), args);
    }

    static Run java(Map<String, String> env, String... args) throws Exception {
        Path out = Files.createTempFile("service-jar", ".out");
        Path err = Files.createTempFile("service-jar", ".err");
        Process p = command(env, args).redirectOutput(out.toFile()).redirectError(err.toFile()).start();
        assertThat(p.waitFor(120, TimeUnit.SECONDS)).as("java -jar %s %s finished", JAR, List.of(args)).isTrue();
        return new Run(p.exitValue(), Files.readString(out), Files.readString(err));
    }

    static ProcessBuilder command(Map<String, String> env, String... args) {
        List<String> cmd = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-Xmx256m", "-jar", JAR.toString()));
        cmd.addAll(List.of(args));
        ProcessBuilder pb = new ProcessBuilder(cmd);
        pb.environment().keySet().removeIf(k -> k.startsWith("QUEEN_"));
        pb.environment().putAll(env);
        return pb;
    }
}
