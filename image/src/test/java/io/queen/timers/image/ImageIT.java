package io.queen.timers.image;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.queen.timers.testkit.PostgresDatabase;
import io.queen.timers.testkit.TestKafka;
import java.io.IOException;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The image tar that {@code -Prelease} builds with Jib (docs/install.md#the-container-image), read as {@code docker load}
 * reads it: manifest.json, the config (user, entrypoint, labels), the layers. The layers are unpacked into one directory
 * and the image's entrypoint runs from it as the container would, with the image's own Java runtime, C library and
 * loader (its ld.so, its /lib): {@code migrate} against a real PostgreSQL, then a bridge until {@code /health/ready}.
 * What this cannot show: the kernel's and the runtime's part (namespaces, the uid switch, /proc mounted).
 * Runs only in the release profile, which passes image.tar.
 */
class ImageIT {

    @RegisterExtension
    static final PostgresDatabase db = PostgresDatabase.empty();

    static final String VERSION = System.getProperty("project.version");
    static Path rootfs;
    static JsonNode config;
    static List<String> entrypoint;

    @BeforeAll
    static void unpack() throws Exception {
        String tar = System.getProperty("image.tar");
        assumeTrue(tar != null, "image.tar is set by -Prelease only");
        Path work = Files.createDirectories(Path.of("target", "image-it"));
        Path outer = work.resolve("tar");
        rootfs = work.resolve("rootfs");
        clean(outer);
        clean(rootfs);
        Files.createDirectories(outer);
        Files.createDirectories(rootfs);
        run("tar", "-xf", Path.of(tar).toAbsolutePath().toString(), "-C", outer.toString());
        ObjectMapper json = new ObjectMapper();
        JsonNode manifest = json.readTree(outer.resolve("manifest.json").toFile());
        assertThat(manifest).as("docker load's manifest.json: one image").hasSize(1);
        JsonNode image = manifest.get(0);
        assertThat(image.path("RepoTags").get(0).asText()).isEqualTo("queen-timers:" + VERSION);
        config = json.readTree(outer.resolve(image.path("Config").asText()).toFile());
        assertThat(image.path("Layers")).as("layers").isNotEmpty();
        for (JsonNode layer : image.path("Layers")) {
            run("tar", "-xzf", outer.resolve(layer.asText()).toString(), "-C", rootfs.toString());
        }
        entrypoint = new ArrayList<>();
        config.path("config").path("Entrypoint").forEach(e -> entrypoint.add(e.asText()));
    }

    @Test
    void theConfigRunsTheServiceJarAsANonRootUserAndSaysItsVersionAndCommit() throws Exception {
        JsonNode c = config.path("config");
        assertThat(config.path("os").asText()).isEqualTo("linux");
        assertThat(config.path("architecture").asText()).isEqualTo("amd64");
        assertThat(c.path("User").asText()).isEqualTo("10001:10001");
        assertThat(entrypoint).startsWith("/opt/java/bin/java").endsWith("-jar", "/app/queen-timers.jar");
        JsonNode labels = c.path("Labels");
        assertThat(labels.path("org.opencontainers.image.version").asText()).isEqualTo(VERSION);
        String commit = labels.path("org.opencontainers.image.revision").asText();
        assertThat(commit).as("the git commit (-Dgit.commit)").matches("[0-9a-f]{40}");
        Process git = new ProcessBuilder("git", "rev-parse", "HEAD").redirectErrorStream(true).start();
        String head = new String(git.getInputStream().readAllBytes()).strip();
        if (git.waitFor() == 0) {
            assertThat(commit).as("the commit this build is of").isEqualTo(head);
        }
    }

    @Test
    void theLayersHoldTheServiceJarARuntimeAndItsLibraries() throws Exception {
        Path jar = rootfs.resolve("app/queen-timers.jar");
        assertThat(jar).exists();
        assertThat(sha256(jar)).as("the service jar, as built").isEqualTo(sha256(Path.of(System.getProperty("service.jar"))));
        assertThat(rootfs.resolve("opt/java/bin/java")).isExecutable();
        assertThat(rootfs.resolve("lib64/ld-linux-x86-64.so.2")).exists();
        assertThat(rootfs.resolve("lib/x86_64-linux-gnu/libc.so.6")).exists();
        assertThat(rootfs.resolve("lib/x86_64-linux-gnu/libz.so.1")).exists();
        assertThat(Files.readString(rootfs.resolve("etc/queen-timers-base"))).contains("libc6 ", "jdk 17");
        // nothing else of a distribution: no shell, no package manager
        assertThat(rootfs.resolve("bin/sh")).doesNotExist();
        assertThat(rootfs.resolve("usr/bin")).doesNotExist();
    }

    @Test
    void theEntrypointMigratesAndRunsABridgeUntilReady() throws Exception {
        Map<String, String> env = new HashMap<>();
        env.put("QUEEN_JDBC_URL", db.jdbcUrl());
        env.put("QUEEN_JDBC_USER", db.user());
        env.put("QUEEN_JDBC_PASSWORD", db.password());
        Path out = Files.createTempFile(Path.of("target"), "image-migrate", ".log");
        Process migrate = entrypoint(env, "migrate").redirectErrorStream(true).redirectOutput(out.toFile()).start();
        assertThat(migrate.waitFor(120, TimeUnit.SECONDS)).isTrue();
        assertThat(migrate.exitValue()).as(Files.readString(out)).isZero();
        assertThat(Files.readString(out)).contains("applied").contains("schema version");

        int port;
        try (ServerSocket s = new ServerSocket(0)) {
            port = s.getLocalPort();
        }
        env.put("QUEEN_DB_ROLE_CHECK", "false"); // the superuser: the single-role opt-out (docs/schema-and-roles.md#database-roles)
        env.put("QUEEN_KAFKA_BOOTSTRAP", TestKafka.bootstrapServers());
        env.put("QUEEN_COMMAND_TOPICS", TestKafka.newTopic("image-commands", 1));
        env.put("QUEEN_AUDIT_TOPIC", TestKafka.newTopic("image-audit", 1));
        env.put("QUEEN_HTTP_PORT", Integer.toString(port));
        Path log = Files.createTempFile(Path.of("target"), "image-bridge", ".log");
        Process bridge = entrypoint(env, "bridge").redirectErrorStream(true).redirectOutput(log.toFile()).start();
        try {
            HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();
            HttpRequest ready = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/health/ready"))
                    .timeout(Duration.ofSeconds(5)).build();
            await().atMost(Duration.ofSeconds(90)).ignoreExceptions().untilAsserted(() -> {
                assertThat(bridge.isAlive()).as("bridge still running; log: %s", log).isTrue();
                HttpResponse<String> r = http.send(ready, HttpResponse.BodyHandlers.ofString());
                assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
                assertThat(r.body()).contains("database: ok", "kafka: ok");
            });
        } finally {
            bridge.destroy();
            if (!bridge.waitFor(30, TimeUnit.SECONDS)) {
                bridge.destroyForcibly();
            }
        }
        assertThat(bridge.exitValue()).as("a SIGTERM'd bridge stops cleanly; log: %s", log).isIn(0, 143);
    }

    /**
     * The config's entrypoint, its absolute paths moved into the unpacked file system, started through the image's own
     * loader and C library (not this machine's): {@code <root>/lib64/ld-linux-x86-64.so.2 --library-path <root>/lib/...}.
     * The image's environment (JAVA_HOME, PATH) and the given variables; a smaller heap than the image's default.
     */
    static ProcessBuilder entrypoint(Map<String, String> env, String... args) {
        List<String> cmd = new ArrayList<>(List.of(rootfs.resolve("lib64/ld-linux-x86-64.so.2").toAbsolutePath().toString(),
                "--library-path", rootfs.resolve("lib/x86_64-linux-gnu").toAbsolutePath().toString()));
        for (String part : entrypoint) {
            cmd.add(part.startsWith("/") ? rootfs.toAbsolutePath() + part : part);
            if (part.equals(entrypoint.get(0))) {
                cmd.add("-Xmx256m");
            }
        }
        cmd.addAll(List.of(args));
        ProcessBuilder pb = new ProcessBuilder(cmd);
        pb.environment().clear();
        config.path("config").path("Env").forEach(e -> {
            String[] kv = e.asText().split("=", 2);
            pb.environment().put(kv[0], kv[0].equals("JAVA_HOME") || kv[0].equals("PATH") ? rootfs.toAbsolutePath() + kv[1] : kv[1]);
        });
        pb.environment().putAll(env);
        return pb;
    }

    static void run(String... cmd) throws Exception {
        Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes());
        assertThat(p.waitFor()).as("%s: %s", List.of(cmd), out).isZero();
    }

    static void clean(Path dir) throws Exception {
        if (Files.exists(dir)) {
            run("rm", "-rf", dir.toString());
        }
    }

    static String sha256(Path file) throws IOException, java.security.NoSuchAlgorithmException {
        return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(Files.readAllBytes(file)));
    }
}
