package io.queen.timers.e2e;

import java.io.File;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;

/**
 * A Kafka broker of another version than the build's, in a JVM of its own on the classpath {@code libs} (every jar of a
 * broker and its dependencies: compat-kafka3/target/kafka-3), single-node KRaft, as an operator starts one: the log
 * directory formatted with its {@code kafka.tools.StorageTool}, then {@code kafka.Kafka server.properties}. Its log
 * (stdout and stderr) goes to {@code log} in the working directory. For the compatibility matrix
 * (docs/operations.md#compatibility).
 */
final class SeparateKafkaBroker implements AutoCloseable {

    private final Process process;
    private final Path dir;
    private final String bootstrap;

    private SeparateKafkaBroker(Process process, Path dir, String bootstrap) {
        this.process = process;
        this.dir = dir;
        this.bootstrap = bootstrap;
    }

    static SeparateKafkaBroker start(Path libs) throws Exception {
        Path dir = Files.createTempDirectory("queen-kafka-separate-");
        int port = freePort();
        int controllerPort = freePort();
        Path props = dir.resolve("server.properties");
        Files.writeString(props, String.join("\n",
                "process.roles=broker,controller",
                "node.id=1",
                "controller.quorum.voters=1@127.0.0.1:" + controllerPort,
                "listeners=PLAINTEXT://127.0.0.1:" + port + ",CONTROLLER://127.0.0.1:" + controllerPort,
                "advertised.listeners=PLAINTEXT://127.0.0.1:" + port,
                "controller.listener.names=CONTROLLER",
                "inter.broker.listener.name=PLAINTEXT",
                "listener.security.protocol.map=PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT",
                "log.dirs=" + dir.resolve("data"),
                "num.partitions=1",
                "offsets.topic.replication.factor=1",
                "transaction.state.log.replication.factor=1",
                "transaction.state.log.min.isr=1",
                "group.initial.rebalance.delay.ms=0",
                "auto.create.topics.enable=false", ""));
        String java = ProcessHandle.current().info().command().orElse("java");
        String classpath = libs.toAbsolutePath() + File.separator + "*";
        List<String> jvm = List.of(java, "-Xmx512m", "-XX:+UseSerialGC", "-Dorg.slf4j.simpleLogger.defaultLogLevel=warn", "-cp", classpath);
        Path log = dir.resolve("broker.log");
        run(concat(jvm, "kafka.tools.StorageTool", "format", "-t", clusterId(), "-c", props.toString()), log);
        Process p = new ProcessBuilder(concat(jvm, "kafka.Kafka", props.toString()))
                .redirectErrorStream(true).redirectOutput(ProcessBuilder.Redirect.appendTo(log.toFile())).start();
        SeparateKafkaBroker broker = new SeparateKafkaBroker(p, dir, "127.0.0.1:" + port);
        try {
            broker.awaitReady(Duration.ofSeconds(60));
        } catch (Exception | AssertionError e) {
            broker.close();
            throw e;
        }
        return broker;
    }

    String bootstrapServers() {
        return bootstrap;
    }

    /** The broker's own answer: its version as it reports it, for the test's log. */
    private void awaitReady(Duration timeout) throws Exception {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (true) {
            if (!process.isAlive()) {
                throw new AssertionError("the broker exited (" + process.exitValue() + "): " + tail());
            }
            try (Admin admin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap,
                    AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, 3000, AdminClientConfig.REQUEST_TIMEOUT_MS_CONFIG, 3000))) {
                admin.describeCluster().nodes().get(3, TimeUnit.SECONDS);
                return;
            } catch (Exception notYet) {
                if (System.nanoTime() > deadline) {
                    throw new AssertionError("the broker did not answer within " + timeout + ": " + tail(), notYet);
                }
                Thread.sleep(250);
            }
        }
    }

    private String tail() {
        try {
            List<String> lines = Files.readAllLines(dir.resolve("broker.log"));
            return String.join("\n", lines.subList(Math.max(0, lines.size() - 30), lines.size()));
        } catch (IOException e) {
            return "(no log: " + e + ")";
        }
    }

    private static void run(List<String> command, Path log) throws Exception {
        Process p = new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(ProcessBuilder.Redirect.appendTo(log.toFile())).start();
        if (!p.waitFor(60, TimeUnit.SECONDS) || p.exitValue() != 0) {
            p.destroyForcibly();
            throw new AssertionError(command + " failed: " + Files.readString(log));
        }
    }

    /** A KRaft cluster id: 16 random bytes, base64url without padding (what {@code kafka-storage random-uuid} prints). */
    private static String clusterId() {
        UUID u = UUID.randomUUID();
        java.nio.ByteBuffer b = java.nio.ByteBuffer.allocate(16).putLong(u.getMostSignificantBits()).putLong(u.getLeastSignificantBits());
        return java.util.Base64.getUrlEncoder().withoutPadding().encodeToString(b.array());
    }

    private static int freePort() throws IOException {
        try (java.net.ServerSocket s = new java.net.ServerSocket(0)) {
            return s.getLocalPort();
        }
    }

    private static List<String> concat(List<String> head, String... tail) {
        List<String> all = new java.util.ArrayList<>(head);
        all.addAll(List.of(tail));
        return all;
    }

    @Override
    public void close() throws Exception {
        process.destroy();   // SIGTERM: a controlled shutdown
        if (!process.waitFor(20, TimeUnit.SECONDS)) {
            process.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
        }
        try (var files = Files.walk(dir)) {
            files.sorted(java.util.Comparator.reverseOrder()).forEach(f -> f.toFile().delete());
        }
    }
}
