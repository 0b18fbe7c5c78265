package io.queen.timers.e2e;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.queen.timers.bridge.BridgeMain;
import io.queen.timers.sql.Migrations;
import io.queen.timers.sweeper.ChildSweeper;
import io.queen.timers.sweeper.Staging;
import io.queen.timers.testkit.GcLog;
import io.queen.timers.testkit.PostgresDatabase;
import io.queen.timers.testkit.TestKafka;
import java.io.File;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import java.util.function.IntFunction;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Valid traffic at the documented limits, through the real broker, a bridge JVM and a sweeper JVM at -Xmx256m
 * each, every timer due at one instant: (a) 1 MiB payloads of one letter, sent zstd-compressed, (b) 1 MiB
 * incompressible payloads, (c) a seeded mix of sizes and kinds. Each fires exactly once, neither service exits,
 * and the peak heap each used is printed (docs/guarantees.md#bounded-by-real-bytes). Before the bounds counted
 * real bytes, (a) killed the bridge (one poll held 2,000 decompressed values) and then the sweeper (one claim
 * held 512 decompressed payloads), each restarted into the same death.
 */
class RealBytesPipelineIT {

    @RegisterExtension
    static final PostgresDatabase db = PostgresDatabase.initializedWith(Migrations::migrate);

    private static final int LIMIT = 1 << 20;

    private final Staging staging = new Staging(db.dataSource());

    @BeforeEach
    void clean() {
        staging.clear();
    }

    @Test
    void compressiblePayloadsAtTheLimitFireExactlyOnce() throws Exception {
        run("compressible", 2_000, i -> payload(LIMIT, false, null));
    }

    @Test
    void incompressiblePayloadsAtTheLimitFireExactlyOnce() throws Exception {
        Random random = new Random(231);
        run("incompressible", 300, i -> payload(LIMIT, true, random));
    }

    @Test
    void aSeededMixOfSizesFiresExactlyOnce() throws Exception {
        long seed = Long.getLong("burst.seed", 20261203L);
        System.out.println("RealBytesPipelineIT mix: seed " + seed + " (repeat with -Dburst.seed=" + seed + ")");
        Random random = new Random(seed);
        run("mix", 1_000, i -> {
            double d = random.nextDouble();
            int size = d < 0.5 ? 2 + random.nextInt(200) : d < 0.8 ? 1_024 + random.nextInt(64 * 1024) : LIMIT - random.nextInt(1_024);
            return payload(size, random.nextBoolean(), random);
        });
    }

    /** A JSON string of exactly {@code size} bytes: random letters, or one repeated letter. */
    private static byte[] payload(int size, boolean incompressible, Random random) {
        byte[] p = new byte[size];
        if (incompressible) {
            for (int j = 1; j < size - 1; j++) {
                p[j] = (byte) ('a' + random.nextInt(26));
            }
        } else {
            Arrays.fill(p, (byte) 'a');
        }
        p[0] = '"';
        p[size - 1] = '"';
        return p;
    }

    private void run(String name, int commands, IntFunction<byte[]> payloads) throws Exception {
        String topic = TestKafka.newTopic("real-bytes-" + name, 2);
        String queue = "real-bytes." + name;
        Path bridgeGc = gcLog(name + "-bridge");
        Path sweeperGc = gcLog(name + "-sweeper");
        Path bridgeLog = Path.of("target", "real-bytes-" + name + "-bridge.log");
        Path sweeperLog = Path.of("target", "real-bytes-" + name + "-sweeper.log");
        Process bridge = startBridge(topic, bridgeGc, bridgeLog);
        Process sweeper = ChildSweeper.start(db, "256m", List.of(GcLog.option(sweeperGc)), Map.of(), sweeperLog);
        try {
            // every timer due at one instant once all are staged: scheduled an hour ahead, then made due together by the
            // tests' clock (R__timer_advance.sql), rather than sent against a fixed wait that a slow machine may overrun
            String at = Instant.now().plus(Duration.ofHours(1)).truncatedTo(ChronoUnit.SECONDS).toString();
            Map<String, Object> props = TestKafka.producerProps();
            props.put(ProducerConfig.COMPRESSION_TYPE_CONFIG, "zstd");
            props.put(ProducerConfig.MAX_REQUEST_SIZE_CONFIG, 4 << 20);
            try (KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(props)) {
                for (int i = 0; i < commands; i++) {
                    String key = "k-" + i;
                    byte[] head = ("{\"op\":\"schedule\",\"queue\":\"" + queue + "\",\"timerKey\":\"" + key + "\",\"deliverAt\":\"" + at
                            + "\",\"txn\":\"t-" + key + "\",\"payload\":").getBytes(StandardCharsets.UTF_8);
                    byte[] payload = payloads.apply(i);
                    byte[] value = Arrays.copyOf(head, head.length + payload.length + 1);
                    System.arraycopy(payload, 0, value, head.length, payload.length);
                    value[value.length - 1] = '}';
                    producer.send(new ProducerRecord<>(topic, (queue + "/" + key).getBytes(StandardCharsets.UTF_8), value));
                }
                producer.flush();
            }
            await().atMost(Duration.ofMinutes(6)).pollInterval(Duration.ofSeconds(1)).until(() -> {
                assertThat(bridge.isAlive()).as("the bridge is still running; log: " + bridgeLog.toAbsolutePath()).isTrue();
                return staging.count("SELECT count(*) FROM queen.log_timers") >= commands;
            });
            assertThat(staging.count("SELECT count(*) FROM queen.timer_advance_v1('" + Staging.DEFAULT_TENANT + "', '" + queue
                    + "', NULL) WHERE due")).as("every staged timer made due at one instant").isEqualTo(commands);
            await().atMost(Duration.ofMinutes(6)).pollInterval(Duration.ofSeconds(1)).until(() -> {
                assertThat(bridge.isAlive()).as("the bridge is still running; log: " + bridgeLog.toAbsolutePath()).isTrue();
                assertThat(sweeper.isAlive()).as("the sweeper is still running; log: " + sweeperLog.toAbsolutePath()).isTrue();
                return staging.count("SELECT count(*) FROM queen.timer_audit_events WHERE type = 'fired'") >= commands;
            });
        } finally {
            stop(bridge);
            stop(sweeper);
        }
        long bridgePeak = GcLog.peakMegabytes(bridgeGc);
        long sweeperPeak = GcLog.peakMegabytes(sweeperGc);
        // before a collection: an upper bound of what was held (garbage included); after: what the collections left
        System.out.printf("RealBytesPipelineIT %s: %d schedules, zstd on the wire, both services at -Xmx256m: peak heap before a"
                + " collection / after one: bridge %d / %d MiB (%d collections), sweeper %d / %d MiB (%d collections)%n", name, commands,
                bridgePeak, GcLog.peakLiveMegabytes(bridgeGc), GcLog.collections(bridgeGc),
                sweeperPeak, GcLog.peakLiveMegabytes(sweeperGc), GcLog.collections(sweeperGc));
        assertThat(Files.readString(bridgeLog)).doesNotContain("OutOfMemoryError");
        assertThat(Files.readString(sweeperLog)).doesNotContain("OutOfMemoryError");
        assertThat(bridgePeak).isPositive().isLessThan(256);
        assertThat(sweeperPeak).isPositive().isLessThan(256);
        assertThat(staging.count("SELECT count(*) FROM queen.timer_audit_events WHERE type = 'scheduled'")).isEqualTo(commands);
        assertThat(staging.count("SELECT count(*) FROM queen.timer_audit_events WHERE type = 'fired'")).isEqualTo(commands);
        assertThat(staging.count("SELECT count(*) FROM queen.log_timers")).isZero();
        assertThat(staging.count("SELECT sum(end_offset - base_offset + 1) FROM queen.log_segments")).isEqualTo(commands);
        assertThat(staging.count("SELECT count(DISTINCT substring(t.hashes FROM i * 16 + 1 FOR 16)) FROM queen.log_txns t,"
                + " generate_series(0, octet_length(t.hashes) / 16 - 1) i")).isEqualTo(commands);
        assertThat(staging.count("SELECT count(*) FROM queen.log_dlq")).isZero();
    }

    private Process startBridge(String topic, Path gc, Path log) throws Exception {
        Properties p = new Properties();
        p.setProperty("jdbc.url", db.jdbcUrl());
        p.setProperty("jdbc.user", db.user());
        p.setProperty("db.role.check", "false"); // the testkit connects as the server's superuser: the single-role opt-out (docs/schema-and-roles.md#database-roles)
        p.setProperty("jdbc.password", db.password());
        p.setProperty("kafka.bootstrap.servers", TestKafka.bootstrapServers());
        p.setProperty("command.topics", topic);
        p.setProperty("audit.relay.enabled", "false");   // the outbox is read here; the relay's cost is not this test's
        p.setProperty("bridge.group.id", "g-" + topic);
        p.setProperty("http.port", "0");
        p.setProperty("bridge.start.position", "earliest"); // records sent before the group's first join are applied
        Path config = Files.createTempFile("real-bytes-bridge", ".properties");
        config.toFile().deleteOnExit();
        try (Writer w = Files.newBufferedWriter(config)) {
            p.store(w, "bridge of a test");
        }
        String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        return new ProcessBuilder(java, "-Xmx256m", GcLog.option(gc), "-cp", System.getProperty("java.class.path"),
                BridgeMain.class.getName(), "--config", config.toString())
                .redirectErrorStream(true).redirectOutput(log.toFile()).start();
    }

    private static Path gcLog(String name) throws Exception {
        Path gc = Path.of("target", "real-bytes-" + name + "-gc.log");
        Files.createDirectories(gc.toAbsolutePath().getParent());
        Files.deleteIfExists(gc);
        return gc;
    }

    /** SIGTERM, then SIGKILL after a minute: a service JVM of an e2e test. */
    static void stop(Process p) throws InterruptedException {
        p.destroy();
        p.waitFor(60, TimeUnit.SECONDS);
        if (p.isAlive()) {
            p.destroyForcibly().waitFor(30, TimeUnit.SECONDS);
        }
    }
}
