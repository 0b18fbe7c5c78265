package io.queen.timers.image;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.queen.timers.testkit.LaunchedBridge;
import io.queen.timers.testkit.PostgresDatabase;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
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

    /**
     * The image's SBOM ({@link ImageSbom}, beside the tar): valid CycloneDX 1.6; every jar in the layers listed with its
     * SHA-256, and every library the service jar bundles (each pom.properties inside it, and Kafka's and PostgreSQL's
     * clients, which carry none) with its version; the runtime with the modules its release file names; every shared
     * object of the layers under the Debian package it came from (the runtime's own jar and libraries under the runtime).
     */
    @Test
    void theSbomListsEveryJarTheRuntimeAndTheLibrariesOfTheLayers() throws Exception {
        Path sbom = Path.of(System.getProperty("image.sbom"));
        assertThat(new org.cyclonedx.parsers.JsonParser().validate(sbom.toFile(), org.cyclonedx.Version.VERSION_16))
                .as("CycloneDX 1.6 schema").isEmpty();
        JsonNode bom = new ObjectMapper().readTree(sbom.toFile());
        assertThat(bom.path("metadata").path("component").path("type").asText()).isEqualTo("container");
        assertThat(bom.path("metadata").path("component").path("version").asText()).isEqualTo(VERSION);
        Map<String, JsonNode> byLocation = new HashMap<>();
        for (JsonNode c : bom.path("components")) {
            c.path("evidence").path("occurrences").forEach(o -> byLocation.put(o.path("location").asText(), c));
        }

        List<Path> jars;
        try (var files = Files.walk(rootfs)) {
            jars = files.filter(f -> Files.isRegularFile(f) && f.toString().endsWith(".jar")).toList();
        }
        assertThat(jars).isNotEmpty();
        for (Path jar : jars) {
            String location = "/" + rootfs.relativize(jar);
            if (location.startsWith("/opt/java/")) { // the runtime's own (lib/jrt-fs.jar): part of the runtime below
                assertThat(byLocation).containsKey("/opt/java");
                continue;
            }
            JsonNode c = byLocation.get(location);
            assertThat(c).as("the SBOM lists the image's %s", location).isNotNull();
            assertThat(c.path("hashes").get(0).path("content").asText()).as(location).isEqualTo(sha256(jar));
            java.util.Set<String> bundled = new java.util.HashSet<>(); // group:name:version
            c.path("components").forEach(b -> bundled.add(b.path("group").asText() + ":" + b.path("name").asText() + ":"
                    + b.path("version").asText()));
            try (java.util.zip.ZipFile zip = new java.util.zip.ZipFile(jar.toFile())) {
                List<? extends java.util.zip.ZipEntry> poms = zip.stream()
                        .filter(e -> e.getName().matches("META-INF/maven/[^/]+/[^/]+/pom\\.properties")).toList();
                assertThat(poms).as("%s bundles Maven artifacts", location).isNotEmpty();
                for (java.util.zip.ZipEntry e : poms) {
                    java.util.Properties p = new java.util.Properties();
                    p.load(zip.getInputStream(e));
                    String ga = p.getProperty("groupId") + ":" + p.getProperty("artifactId");
                    if (ga.equals(c.path("group").asText() + ":" + c.path("name").asText())) {
                        assertThat(c.path("version").asText()).isEqualTo(p.getProperty("version"));
                        continue;
                    }
                    assertThat(bundled).as("%s bundles %s (%s)", location, ga, e.getName()).contains(ga + ":" + p.getProperty("version"));
                }
                // bundled without a pom.properties (built by Gradle, or stripped): the SBOM still names them
                assertThat(zip.getEntry("org/apache/kafka/clients/producer/KafkaProducer.class")).isNotNull();
                assertThat(bundled).contains("org.apache.kafka:kafka-clients:" + System.getProperty("kafka.version"));
                assertThat(zip.getEntry("org/postgresql/Driver.class")).isNotNull();
                assertThat(bundled).contains("org.postgresql:postgresql:" + System.getProperty("postgresql.version"));
                // and libraries whose nearest path in the service's graph is a test one (HikariCP through the testkit)
                Map<String, String> byClass = Map.of("com/zaxxer/hikari/HikariDataSource.class", "com.zaxxer:HikariCP:",
                        "com/github/luben/zstd/Zstd.class", "com.github.luben:zstd-jni:",
                        "org/xerial/snappy/Snappy.class", "org.xerial.snappy:snappy-java:",
                        "picocli/CommandLine.class", "info.picocli:picocli:");
                byClass.forEach((cls, ga) -> {
                    assertThat(zip.getEntry(cls)).as(cls).isNotNull();
                    assertThat(bundled).as("%s bundles %s", location, ga).anyMatch(b -> b.startsWith(ga));
                });
            }
        }

        JsonNode runtime = byLocation.get("/opt/java");
        assertThat(runtime).as("the runtime").isNotNull();
        assertThat(runtime.path("type").asText()).isEqualTo("platform");
        String release = Files.readString(rootfs.resolve("opt/java/release"));
        String modules = release.lines().filter(l -> l.startsWith("MODULES=")).findFirst().orElseThrow()
                .substring("MODULES=".length()).replace("\"", "");
        Map<String, String> props = new HashMap<>();
        runtime.path("properties").forEach(p -> props.put(p.path("name").asText(), p.path("value").asText()));
        assertThat(props).containsEntry("queen-timers:jlink.modules", modules);
        assertThat(runtime.path("version").asText()).startsWith("17.");
        assertThat(runtime.path("purl").asText()).startsWith("pkg:deb/debian/openjdk-17");

        List<Path> libraries;
        try (var files = Files.walk(rootfs)) {
            libraries = files.filter(f -> f.getFileName().toString().matches(".+\\.so(\\.[0-9]+)*")).toList();
        }
        assertThat(libraries).isNotEmpty();
        for (Path so : libraries) {
            String location = "/" + rootfs.relativize(so);
            if (location.startsWith("/opt/java/")) { // the runtime's own (libjvm.so and the rest): the runtime above
                continue;
            }
            JsonNode c = byLocation.get(location);
            assertThat(c).as("the SBOM names the package of %s", location).isNotNull();
            assertThat(c.path("purl").asText()).as(location).startsWith("pkg:deb/debian/");
        }
        assertThat(byLocation.get("/lib/x86_64-linux-gnu/libc.so.6").path("name").asText()).isEqualTo("libc6");
        assertThat(Files.readString(rootfs.resolve("etc/queen-timers-base")))
                .contains("libc6 " + byLocation.get("/lib/x86_64-linux-gnu/libc.so.6").path("version").asText());
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

        int port = LaunchedBridge.environment(env, "image");
        Path log = Files.createTempFile(Path.of("target"), "image-bridge", ".log");
        assertThat(LaunchedBridge.runUntilReady(entrypoint(env, "bridge"), port, log)).as("a SIGTERM'd bridge stops cleanly; log: %s", log)
                .isIn(0, 143);
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
