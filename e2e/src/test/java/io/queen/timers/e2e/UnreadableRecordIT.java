package io.queen.timers.e2e;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.nimbusds.jose.JOSEObjectType;
import com.nimbusds.jose.JWSAlgorithm;
import com.nimbusds.jose.JWSHeader;
import com.nimbusds.jose.crypto.ECDSASigner;
import com.nimbusds.jose.jwk.Curve;
import com.nimbusds.jose.jwk.ECKey;
import com.nimbusds.jose.jwk.JWKSet;
import com.nimbusds.jose.jwk.gen.ECKeyGenerator;
import com.nimbusds.jwt.JWTClaimsSet;
import com.nimbusds.jwt.SignedJWT;
import io.queen.timers.bridge.BridgeMain;
import io.queen.timers.core.db.DatabaseRole;
import io.queen.timers.sql.BridgeGroups;
import io.queen.timers.sql.Migrations;
import io.queen.timers.sweeper.ChildSweeper;
import io.queen.timers.sweeper.Staging;
import io.queen.timers.testkit.PostgresDatabase;
import io.queen.timers.testkit.RawBatch;
import io.queen.timers.testkit.ShippedJvm;
import io.queen.timers.testkit.TestKafka;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Date;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Issue 47, point 1: a record of any declared size, as deployed. The bridge runs with exactly the image's JVM flags
 * ({@code -XX:+ExitOnOutOfMemoryError} among them: {@link ShippedJvm} reads them from docker/Dockerfile and image/pom.xml)
 * and the Kubernetes manifests' heap ({@code JAVA_TOOL_OPTIONS=-Xmx256m}), as its least-privilege login with the role
 * check on, and so does the sweeper. One partition carries, in turn, other producers' readable batches (one record and
 * several, zstd and plain) and hostile batches whose records declare from half the bridge's free heap to Kafka's 2 GiB
 * (declared and absent, or present: a decompression bomb), alone and among readable records; a jwt topic the same with
 * signed records. Meanwhile a second tenant's schedules flow on a topic of their own.
 *
 * <p>Before the bounded reader the Kafka client allocated each declared size inside {@code poll}: with these flags the JVM
 * exited, and every restart exited again at the same offset. Now: every offset gets exactly one verdict (the unreadable
 * record and the rest of its own batch {@code rejected}/{@code unreadable_record}, every other record its own), every
 * readable schedule fires, the second tenant's schedules are applied and fired, the bridge never exits and nothing in
 * it sees an {@link OutOfMemoryError}.
 *
 * <p>Fairness of the fetch: the second tenant's every schedule is answered and fired while the first tenant's partitions
 * are read, and the test prints each one's wait from the broker's acknowledgement to its verdict. The wait is printed,
 * not bounded: a timed bound fails on a loaded machine rather than on a defect. What makes it short is held where it can
 * be held without a clock, by {@code CommandSourceFairnessIT} (bridge): a topic with nothing left is fetched again while
 * another still holds read-ahead, and every topic with read-ahead has a share of every poll.
 *
 * <p>Issue 54, point 1: the same, with header bombs ({@link #headerBombsAreAnsweredOneByOneAsDeployedAndTheOtherTenantFlows}):
 * one budget per record, counted on the wire form before any object exists; and with the decompression streams of many
 * partitions ({@link #decompressionStreamsOfManyPartitionsAreBoundedAsDeployedAndTheOtherTenantFlows}): what a stream may
 * hold is read from its codec's header before it opens, and the open streams are bounded together. In every run the
 * bridge's peak resident memory stays within the manifests' container limit.
 */
class UnreadableRecordIT {

    @RegisterExtension
    static final PostgresDatabase db = PostgresDatabase.initializedWith(Migrations::migrate);

    static final String TENANT = "00000000-0000-0000-0000-000000000001";
    static final String QUIET_TENANT = "00000000-0000-0000-0000-0000000000b2";
    static final String AUDIENCE = "queen-timers-test";
    static final String ISSUER = "https://issuer.test";
    static final String PASSWORD = "record-of-any-size";
    static final long MB = 1L << 20;
    static final String SUFFIX = UUID.randomUUID().toString().substring(0, 8).replace('-', '_');
    static final String BRIDGE_LOGIN = "bridge_any_size_" + SUFFIX;
    static final String SWEEPER_LOGIN = "sweeper_any_size_" + SUFFIX;

    private final Staging staging = new Staging(db.dataSource());

    @BeforeAll
    static void logins() throws Exception {
        admin("CREATE ROLE " + BRIDGE_LOGIN + " LOGIN PASSWORD '" + PASSWORD + "' IN ROLE " + DatabaseRole.BRIDGE);
        admin("CREATE ROLE " + SWEEPER_LOGIN + " LOGIN PASSWORD '" + PASSWORD + "' IN ROLE " + DatabaseRole.SWEEPER);
    }

    @AfterAll
    static void dropLogins() throws Exception {
        for (String login : List.of(BRIDGE_LOGIN, SWEEPER_LOGIN)) {
            admin("DROP OWNED BY " + login);
            admin("DROP ROLE IF EXISTS " + login);
        }
    }

    @Test
    void recordsOfEveryDeclaredSizeAreAnsweredAsDeployedAndTheOtherTenantFlows() throws Exception {
        String log = runAsDeployed("any-size", (t, expected) -> {
            String plain = t.plain();
            String jwt = t.jwt();
            String queue = t.queue();
            Instant at = t.at();
            // Every hostile record's body is there (a run of one letter, a few KB of zstd): Kafka 4.4's broker refuses a
            // record that declares more than its stream holds (INVALID_RECORD); PartitionReaderTest reads such lies.
            // plain/0, in turn: a producer's zstd batch of two; a record alone declaring 2 GiB - 1 KiB; a plain producer's
            // one; a batch of four whose third declares about half the bridge's free heap; ...
            expectAll(expected, "scheduled", sendBatch(plain, 0, queue, "zstd", null, "p-a", "p-b"));
            expectBomb(expected, plain, 0, List.of(RawBatch.Rec.run(keyBytes(queue, "bomb-2g"), Integer.MAX_VALUE - 1024, (byte) 'z', List.of())), 0);
            expectAll(expected, "scheduled", sendBatch(plain, 0, queue, "none", null, "p-c"));
            expectBomb(expected, plain, 0, List.of(schedule(queue, "p-d", at, null), schedule(queue, "p-e", at, null),
                    RawBatch.Rec.run(keyBytes(queue, "bomb-100m"), 100 * MB, (byte) 'h', List.of()), schedule(queue, "p-f", at, null)), 2);
            expectAll(expected, "scheduled", sendBatch(plain, 0, queue, "lz4", null, "p-g", "p-h", "p-i"));
            // ... about the free heap, and the whole heap, each alone
            for (long size : List.of(200 * MB, 256 * MB)) {
                expectBomb(expected, plain, 0, List.of(RawBatch.Rec.run(keyBytes(queue, "bomb-" + size), size, (byte) 's', List.of())), 0);
                expectAll(expected, "scheduled", sendBatch(plain, 0, queue, "gzip", null, "p-" + size));
            }
            // ... and 300 MB that are really there (a few KB of zstd), between two schedules of the same batch
            expectBomb(expected, plain, 0, List.of(schedule(queue, "p-j", at, null),
                    RawBatch.Rec.run(keyBytes(queue, "bomb-real"), 300 * MB, (byte) 'a', List.of()), schedule(queue, "p-k", at, null)), 1);
            expectAll(expected, "scheduled", sendBatch(plain, 0, queue, "zstd", null, "p-l"));
            // plain/1: the other partition of the topic goes on meanwhile
            expectAll(expected, "scheduled", sendBatch(plain, 1, queue, "zstd", null, "q-a", "q-b"));
            // the jwt topic: signed batches around a signed record of 400 MB among two signed schedules, and one of 150 MB
            List<String[]> auth = List.<String[]>of(new String[] {"queen-auth", t.token()});
            expectAll(expected, "scheduled", sendBatch(jwt, 0, queue, "zstd", t.token(), "j-a", "j-b"));
            expectBomb(expected, jwt, 0, List.of(schedule(queue, "j-c", at, t.token()),
                    RawBatch.Rec.run(keyBytes(queue, "j-bomb"), 400 * MB, (byte) 'j', auth), schedule(queue, "j-d", at, t.token())), 1);
            expectAll(expected, "scheduled", sendBatch(jwt, 0, queue, "none", t.token(), "j-e"));
            expectBomb(expected, jwt, 0, List.of(RawBatch.Rec.run(keyBytes(queue, "j-real"), 150 * MB, (byte) 'c', auth)), 0);
            expectAll(expected, "scheduled", sendBatch(jwt, 0, queue, "zstd", t.token(), "j-f"));
        });
        assertThat(log).contains("it and the rest of its producer batch are answered rejected (unreadable_record)");
    }

    /**
     * Header bombs, as deployed. What one producer did from outside: seven valid schedules, each with 540,000 empty headers
     * (1.08 MB of record, under the record cap; the batch is a few KB of zstd), in one batch. Before the reader counted
     * headers, Kafka's record decoding made two objects of every header (about 90 bytes of heap for 2 bytes of record),
     * the poll's budget counted keys and values only, and with these flags the bridge exited, again at every restart,
     * and no tenant's record was answered. Then, beside schedules in the same producer batches: a record of 2,000 headers
     * of 500 bytes, one of only ten headers but 40 KiB of them, and the same empty-header bomb signed on a jwt topic. Each
     * bomb is one {@code rejected}/{@code unreadable_record}, alone: its length is honest, so the reader steps over it and
     * the schedules after it in its batch are read and fire; a record whose headers are within the limits (twenty of
     * 1 KiB) is read as any other. The second tenant's schedules are answered and fired throughout.
     */
    @Test
    void headerBombsAreAnsweredOneByOneAsDeployedAndTheOtherTenantFlows() throws Exception {
        String log = runAsDeployed("header-bomb", (t, expected) -> {
            String queue = t.queue();
            Instant at = t.at();
            List<RawBatch.Rec> seven = new ArrayList<>();
            for (int i = 0; i < 7; i++) {
                seven.add(schedule(queue, "hb-" + i, at, null).withHeaderRun(540_000, 0, 0));
            }
            expectBatch(expected, t.plain(), 0, seven, "rejected unreadable_record");
            expectAll(expected, "scheduled", sendBatch(t.plain(), 0, queue, "zstd", null, "h-a"));
            expectBatch(expected, t.plain(), 0, List.of(
                    schedule(queue, "h-b", at, null),
                    schedule(queue, "h-c", at, null).withHeaderRun(540_000, 0, -1),
                    schedule(queue, "h-d", at, null),
                    schedule(queue, "h-e", at, null).withHeaderRun(2_000, 8, 500),
                    schedule(queue, "h-f", at, null).withHeaderRun(10, 8, 4096),
                    schedule(queue, "h-g", at, null).withHeaderRun(20, 8, 1024),
                    schedule(queue, "h-h", at, null)),
                    "scheduled", "rejected unreadable_record", "scheduled", "rejected unreadable_record",
                    "rejected unreadable_record", "scheduled", "scheduled");
            expectAll(expected, "scheduled", sendBatch(t.plain(), 1, queue, "zstd", null, "h-i", "h-j"));
            expectBatch(expected, t.jwt(), 0, List.of(
                    schedule(queue, "hj-a", at, t.token()),
                    schedule(queue, "hj-b", at, t.token()).withHeaderRun(540_000, 0, 0),
                    schedule(queue, "hj-c", at, t.token()),
                    schedule(queue, "hj-d", at, t.token()).withHeaderRun(2_000, 8, 500),
                    schedule(queue, "hj-e", at, t.token())),
                    "scheduled", "rejected unreadable_record", "scheduled", "rejected unreadable_record", "scheduled");
            expectAll(expected, "scheduled", sendBatch(t.jwt(), 0, queue, "zstd", t.token(), "hj-f"));
        });
        assertThat(log).contains("540000 headers, more than bridge.record.headers.max.count")
                .contains("more than bridge.record.headers.max.bytes")
                .contains("it alone is answered rejected (unreadable_record)");
    }

    /**
     * Decompression streams, as deployed. Twenty-four partitions of one tenant's topic, each stopped part way into batches
     * whose codecs declare the most the bridge decompresses with (lz4 blocks of 4 MiB, snappy chunks of 6 MiB, a zstd window
     * of 8 MiB, filled) and into batches declaring more (a snappy chunk of 16 MiB, a zstd window of 32 MiB, filled), every
     * batch of more records than one poll takes, each codec's 24 batches produced in one request so that they are in the
     * log together. Before, each partition held its own stream: 24 snappy chunks of 16 MiB on the 256 MiB heap (and 24 zstd
     * windows of 32 MiB beside it, native). Now the topic holds one stream at a time within bridge.decompression.max.bytes,
     * a batch declaring more than 8 MiB is rejected whole, unreadable_record, without being decompressed, the other tenant's
     * schedules are answered throughout, every offset gets its verdict, and the bridge never exits and stays within the
     * manifests' container memory.
     */
    @Test
    void decompressionStreamsOfManyPartitionsAreBoundedAsDeployedAndTheOtherTenantFlows() throws Exception {
        int partitions = 24;
        String log = runAsDeployed("streams", partitions, (t, expected) -> {
            String queue = t.queue();
            // first what is small on the wire, so that each partition's batch comes in the same fetch (a fetch brings at
            // most 8 MiB, compressed): a filled zstd window of 32 MiB, beyond the cap, 36 records of 900 KiB a partition
            produceToEach(expected, t.plain(), partitions, RawBatch.Codec.ZSTD, RawBatch.zstdWindow(25),
                    p -> runs(queue, "zs32-" + p + "-", 36), "rejected unreadable_record");
            // lz4 blocks of 4 MiB: twelve schedules a partition (Kafka's reader allocates the block the frame declares)
            produceToEach(expected, t.plain(), partitions, RawBatch.Codec.LZ4, RawBatch.lz4Blocks(4 << 20),
                    p -> schedules(queue, "lz4-" + p + "-", 12, t.at()), "scheduled");
            // a zstd window of 8 MiB, ten records of 900 KiB a partition (one letter: not JSON): the window is filled
            produceToEach(expected, t.plain(), partitions, RawBatch.Codec.ZSTD, RawBatch.zstdWindow(23),
                    p -> runs(queue, "zs-" + p + "-", 10), "rejected malformed_json");
            // snappy chunks of 6 MiB, eight records of 900 KiB a partition (about 340 KB on the wire)
            produceToEach(expected, t.plain(), partitions, RawBatch.Codec.SNAPPY, RawBatch.snappyChunks(6 << 20),
                    p -> runs(queue, "sn-" + p + "-", 8), "rejected malformed_json");
            // a snappy chunk of 16 MiB, beyond the cap (about 800 KB on the wire)
            produceToEach(expected, t.plain(), partitions, RawBatch.Codec.SNAPPY, RawBatch.snappyChunks(16 << 20),
                    p -> runs(queue, "sn16-" + p + "-", 19), "rejected unreadable_record");
        });
        assertThat(log).contains("is not decompressed: its snappy chunk declares 16777216 bytes uncompressed")
                .contains("is not decompressed: its zstd frame needs a window of 33554432 bytes");
    }

    /** Who sends what in one run: the topics, the queue, a token for the jwt topic, a time in the near future. */
    private record Run(String plain, String jwt, String queue, String token, Instant at) {}

    @FunctionalInterface
    private interface Sends {
        /** Sends the run's records; puts each source's expected verdict into {@code expected}. */
        void send(Run run, Map<String, String> expected) throws Exception;
    }

    /**
     * The bridge and the sweeper as deployed, each as its login, a second tenant sending meanwhile, and {@code sends}'s
     * records: every source gets exactly its expected verdict, every schedule fires, neither process exits and nothing
     * meets an {@link OutOfMemoryError}. Returns the bridge's log.
     */
    private String runAsDeployed(String name, Sends sends) throws Exception {
        return runAsDeployed(name, 2, sends);
    }

    /** The same, the tenant's plain topic with {@code plainPartitions} partitions. */
    private String runAsDeployed(String name, int plainPartitions, Sends sends) throws Exception {
        staging.clear();
        String plain = TestKafka.newTopic(name + "-plain", plainPartitions);
        String jwt = TestKafka.newTopic(name + "-jwt", 1, TestKafka.BROKER_TIMESTAMPS);
        String quiet = TestKafka.newTopic(name + "-quiet", 1);
        ECKey key = new ECKeyGenerator(Curve.P_256).keyID("k1").generate();
        Path keys = Files.createTempFile(name, ".jwks");
        keys.toFile().deleteOnExit();
        Files.writeString(keys, new JWKSet(key.toPublicJWK()).toString(false));
        String queue = name + ".q";
        Run run = new Run(plain, jwt, queue, token(key), Instant.now().plusSeconds(25));

        List<String> flags = ShippedJvm.imageFlags();
        assertThat(flags).as("the image's flags this test is about").contains("-XX:+ExitOnOutOfMemoryError");
        String heap = ShippedJvm.manifestJavaToolOptions("bridge");
        Path bridgeLog = Path.of("target", name + "-bridge.log");
        Path sweeperLog = Path.of("target", name + "-sweeper.log");
        long containerLimit = ShippedJvm.manifestMemoryLimitBytes("bridge");
        long peakResident;
        Process bridge = startBridge(flags, heap, plain, jwt, quiet, keys, bridgeLog);
        Process sweeper = ChildSweeper.start(db, ShippedJvm.manifestJavaToolOptions("sweeper").replace("-Xmx", ""), flags,
                Map.of("jdbc.user", SWEEPER_LOGIN, "jdbc.password", PASSWORD, "db.role.check", "true"), sweeperLog);
        QuietTenant other = new QuietTenant(quiet, queue);
        // source "topic/partition@offset" → the verdict it must get ("scheduled", or "rejected <reason>")
        Map<String, String> expected = new LinkedHashMap<>();
        try {
            awaitReady(bridge, bridgeLog);
            other.start();
            sends.send(run, expected);

            long scheduled = expected.values().stream().filter("scheduled"::equals).count();
            await().atMost(Duration.ofMinutes(3)).pollInterval(Duration.ofMillis(200)).until(() -> {
                assertThat(bridge.isAlive()).as("the bridge is still running; log: " + bridgeLog.toAbsolutePath()).isTrue();
                assertThat(sweeper.isAlive()).as("the sweeper is still running; log: " + sweeperLog.toAbsolutePath()).isTrue();
                withinContainer(bridge, containerLimit);
                return verdicts().keySet().containsAll(expected.keySet());
            });
            other.stop();
            await().atMost(Duration.ofMinutes(2)).pollInterval(Duration.ofMillis(500)).until(() -> {
                assertThat(bridge.isAlive()).as("the bridge is still running").isTrue();
                return firedCount(queue) >= scheduled && other.allAnswered() && firedCount(other.queue) >= other.sent();
            });
            assertThat(bridge.isAlive()).isTrue();
            assertThat(sweeper.isAlive()).isTrue();
            peakResident = withinContainer(bridge, containerLimit);
        } finally {
            other.stop();
            RealBytesPipelineIT.stop(bridge);
            RealBytesPipelineIT.stop(sweeper);
        }
        Map<String, List<String>> got = verdicts();
        for (Map.Entry<String, String> e : expected.entrySet()) {
            assertThat(got.get(e.getKey())).as("the verdicts of " + e.getKey()).containsExactly(e.getValue());
        }
        got.keySet().removeAll(other.sources());
        got.keySet().removeIf(source -> !source.startsWith(plain + "/") && !source.startsWith(jwt + "/"));
        assertThat(got.keySet()).as("no verdict for a record not sent").containsExactlyInAnyOrderElementsOf(expected.keySet());
        assertThat(firedCount(queue)).isEqualTo(expected.values().stream().filter("scheduled"::equals).count());
        assertThat(firedCount(other.queue)).isEqualTo(other.sent());
        assertThat(staging.count("SELECT count(*) FROM queen.log_timers")).isZero();
        String log = Files.readString(bridgeLog);
        assertThat(log).as("nothing in the bridge met the heap's edge").doesNotContain("OutOfMemoryError").doesNotContain("Java heap space");
        assertThat(Files.readString(sweeperLog)).doesNotContain("OutOfMemoryError");
        System.out.println("[UnreadableRecordIT " + name + "] the other tenant's " + other.sent() + " schedules, sent while"
                + " the bombs were answered: acknowledged by the broker to verdict " + other.waits() + "; the bridge's peak"
                + " resident memory " + (peakResident >> 20) + " MiB (the container's limit: " + (containerLimit >> 20) + " MiB)");
        assertThat(other.waitsMillis()).as("the other tenant's schedules, each answered").hasSize((int) other.sent());
        return log;
    }

    // --- what is sent and what each offset must get -------------------------------------------------------------------

    /** A hostile batch; offsets from {@code firstBad} on are unreadable, those before it are schedules. */
    private static void expectBomb(Map<String, String> expected, String topic, int partition, List<RawBatch.Rec> records,
                                   int firstBad) throws Exception {
        long base = end(topic, partition);
        RawBatch.send(TestKafka.bootstrapServers(), topic, partition, System.currentTimeMillis(), records);
        for (int i = 0; i < records.size(); i++) {
            expected.put(topic + "/" + partition + "@" + (base + i), i < firstBad ? "scheduled" : "rejected unreadable_record");
        }
    }

    /** A batch built byte by byte whose offsets get {@code verdicts} in order (one for all when a single one is given). */
    private static void expectBatch(Map<String, String> expected, String topic, int partition, List<RawBatch.Rec> records,
                                    String... verdicts) throws Exception {
        long base = end(topic, partition);
        RawBatch.send(TestKafka.bootstrapServers(), topic, partition, System.currentTimeMillis(), records);
        for (int i = 0; i < records.size(); i++) {
            expected.put(topic + "/" + partition + "@" + (base + i), verdicts.length == 1 ? verdicts[0] : verdicts[i]);
        }
    }

    /**
     * One batch of {@code codec}, framed by {@code compressor}, to each of the topic's first {@code partitions} partitions,
     * in one request: every offset of each is expected to get {@code verdict}.
     */
    private static void produceToEach(Map<String, String> expected, String topic, int partitions, RawBatch.Codec codec,
                                      RawBatch.Compressor compressor, java.util.function.IntFunction<List<RawBatch.Rec>> records,
                                      String verdict) throws Exception {
        Map<Integer, Long> base = ends(topic, partitions);
        Map<Integer, java.nio.ByteBuffer> batches = new LinkedHashMap<>();
        Map<Integer, Integer> counts = new HashMap<>();
        for (int p = 0; p < partitions; p++) {
            List<RawBatch.Rec> recs = records.apply(p);
            batches.put(p, RawBatch.build(codec, compressor, System.currentTimeMillis(), recs));
            counts.put(p, recs.size());
        }
        RawBatch.send(TestKafka.bootstrapServers(), topic, batches);
        for (int p = 0; p < partitions; p++) {
            for (int i = 0; i < counts.get(p); i++) {
                expected.put(topic + "/" + p + "@" + (base.get(p) + i), verdict);
            }
        }
    }

    private static List<RawBatch.Rec> schedules(String queue, String prefix, int n, Instant at) {
        List<RawBatch.Rec> out = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            out.add(schedule(queue, prefix + i, at, null));
        }
        return out;
    }

    /** {@code n} records of 900 KiB of one letter each: read whole, and not JSON. */
    private static List<RawBatch.Rec> runs(String queue, String prefix, int n) {
        List<RawBatch.Rec> out = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            out.add(RawBatch.Rec.run(keyBytes(queue, prefix + i), 900 << 10, (byte) ('a' + i % 26), List.of()));
        }
        return out;
    }

    private static Map<Integer, Long> ends(String topic, int partitions) throws Exception {
        Map<org.apache.kafka.common.TopicPartition, org.apache.kafka.clients.admin.OffsetSpec> ask = new HashMap<>();
        for (int p = 0; p < partitions; p++) {
            ask.put(new org.apache.kafka.common.TopicPartition(topic, p), org.apache.kafka.clients.admin.OffsetSpec.latest());
        }
        Map<Integer, Long> out = new HashMap<>();
        try (var admin = TestKafka.admin()) {
            admin.listOffsets(ask).all().get().forEach((tp, info) -> out.put(tp.partition(), info.offset()));
        }
        return out;
    }

    /**
     * The bridge's peak resident memory so far, which must be within the manifests' container limit: heap and native
     * together, as the kernel counts them against the limit (a zstd window is native).
     */
    private static long withinContainer(Process bridge, long limit) throws Exception {
        long peak = peakResidentBytes(bridge);
        assertThat(peak).as("the bridge's peak resident memory (VmHWM), against the manifests' container limit").isLessThanOrEqualTo(limit);
        return peak;
    }

    /** The process's peak resident set (VmHWM in /proc/<pid>/status), heap and native memory together. */
    private static long peakResidentBytes(Process p) throws Exception {
        for (String line : Files.readAllLines(Path.of("/proc", String.valueOf(p.pid()), "status"))) {
            if (line.startsWith("VmHWM:")) {
                return Long.parseLong(line.replaceAll("[^0-9]", "")) << 10;
            }
        }
        throw new IllegalStateException("no VmHWM in /proc/" + p.pid() + "/status");
    }

    private static void expectAll(Map<String, String> expected, String verdict, List<String> sources) {
        sources.forEach(s -> expected.put(s, verdict));
    }

    /** One producer batch of schedules, as a real producer with this compression sends it (linger: one batch). */
    private static List<String> sendBatch(String topic, int partition, String queue, String compression, String token,
                                          String... keys) throws Exception {
        Map<String, Object> props = TestKafka.producerProps();
        props.put(ProducerConfig.COMPRESSION_TYPE_CONFIG, compression);
        props.put(ProducerConfig.LINGER_MS_CONFIG, 200);
        Instant at = Instant.now().plusSeconds(20);
        List<java.util.concurrent.Future<RecordMetadata>> sent = new ArrayList<>();
        try (KafkaProducer<byte[], byte[]> p = new KafkaProducer<>(props)) {
            for (String k : keys) {
                RecordHeaders h = new RecordHeaders();
                if (token != null) {
                    h.add("queen-auth", token.getBytes(StandardCharsets.UTF_8));
                }
                sent.add(p.send(new ProducerRecord<>(topic, partition, null, keyBytes(queue, k), value(queue, k, at), h)));
            }
            p.flush();
            List<String> out = new ArrayList<>();
            for (var f : sent) {
                RecordMetadata m = f.get();
                out.add(m.topic() + "/" + m.partition() + "@" + m.offset());
            }
            return out;
        }
    }

    /** The second tenant: a schedule every 100 ms on its own topic, each due 2 s later; when the broker acknowledged each. */
    private final class QuietTenant {
        final String topic;
        final String queue;
        final Map<String, Long> sentAtMillis = new ConcurrentHashMap<>();
        final Map<String, Long> answeredAtMillis = new ConcurrentHashMap<>();
        final AtomicBoolean running = new AtomicBoolean();
        Thread sender;
        Thread watcher;

        QuietTenant(String topic, String queue) {
            this.topic = topic;
            this.queue = queue + ".quiet";
        }

        void start() {
            running.set(true);
            sender = new Thread(() -> {
                try (KafkaProducer<byte[], byte[]> p = new KafkaProducer<>(TestKafka.producerProps())) {
                    for (int i = 0; running.get(); i++) {
                        String k = "b-" + i;
                        RecordMetadata m = p.send(new ProducerRecord<>(topic, 0, keyBytes(queue, k),
                                value(queue, k, Instant.now().plusSeconds(2)))).get();
                        // from the broker's acknowledgement: the wait is the bridge's, not the broker's (which is busy
                        // validating the bombs: it decompresses each one whole)
                        sentAtMillis.put(m.topic() + "/" + m.partition() + "@" + m.offset(), System.currentTimeMillis());
                        Thread.sleep(100);
                    }
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                } catch (Exception e) {
                    throw new IllegalStateException(e);
                }
            }, "quiet-tenant");
            sender.setDaemon(true);
            watcher = new Thread(() -> {
                while (running.get() || !allAnswered()) {
                    try {
                        long now = System.currentTimeMillis();
                        for (String s : answered(topic)) {
                            if (sentAtMillis.containsKey(s)) {
                                answeredAtMillis.putIfAbsent(s, now);
                            }
                        }
                        Thread.sleep(50);
                    } catch (InterruptedException e) {
                        return;
                    } catch (Exception e) {
                        // the database is busy: the next look sees it
                    }
                }
            }, "quiet-tenant-watch");
            watcher.setDaemon(true);
            sender.start();
            watcher.start();
        }

        void stop() throws InterruptedException {
            running.set(false);
            if (sender != null) {
                sender.join();
            }
        }

        long sent() {
            return sentAtMillis.size();
        }

        List<String> sources() {
            return List.copyOf(sentAtMillis.keySet());
        }

        boolean allAnswered() {
            return answeredAtMillis.keySet().containsAll(sentAtMillis.keySet());
        }

        /** Each answered schedule's wait, from the broker's acknowledgement to its verdict, ascending. */
        List<Long> waitsMillis() {
            List<Long> w = new ArrayList<>();
            sentAtMillis.forEach((s, sentAt) -> {
                Long a = answeredAtMillis.get(s);
                if (a != null) {
                    w.add(a - sentAt);
                }
            });
            Collections.sort(w);
            return w;
        }

        String waits() {
            List<Long> w = waitsMillis();
            if (w.isEmpty()) {
                return "none";
            }
            return "p50 " + w.get(w.size() / 2) + " ms, p99 " + w.get(Math.min(w.size() - 1, (int) Math.ceil(w.size() * 0.99) - 1))
                    + " ms, max " + w.get(w.size() - 1) + " ms (seen by polling the outbox every 50 ms)";
        }
    }

    /** Every verdict of the outbox by source, as "scheduled" or "rejected <reason>". */
    private static Map<String, List<String>> verdicts() throws Exception {
        Map<String, List<String>> out = new HashMap<>();
        try (Connection c = db.dataSource().getConnection(); Statement st = c.createStatement();
                ResultSet rs = st.executeQuery("SELECT event->'source'->>'topic', event->'source'->>'partition',"
                        + " event->'source'->>'offset', type, event->>'reason' FROM queen.timer_audit_events"
                        + " WHERE event ? 'source' ORDER BY id, seq")) {
            while (rs.next()) {
                out.computeIfAbsent(rs.getString(1) + "/" + rs.getString(2) + "@" + rs.getString(3), k -> new ArrayList<>())
                        .add(rs.getString(4) + (rs.getString(5) == null ? "" : " " + rs.getString(5)));
            }
        }
        return out;
    }

    /**
     * The sources of {@code topic} that have a verdict: only its own events, so that a look takes the same short time however
     * many verdicts the other tenant's records have.
     */
    private static List<String> answered(String topic) throws Exception {
        List<String> out = new ArrayList<>();
        try (Connection c = db.dataSource().getConnection(); PreparedStatement st = c.prepareStatement("SELECT event->'source'->>'partition',"
                + " event->'source'->>'offset' FROM queen.timer_audit_events WHERE event->'source'->>'topic' = ?")) {
            st.setString(1, topic);
            try (ResultSet rs = st.executeQuery()) {
                while (rs.next()) {
                    out.add(topic + "/" + rs.getString(1) + "@" + rs.getString(2));
                }
            }
        }
        return out;
    }

    private long firedCount(String queue) throws Exception {
        return staging.count("SELECT count(*) FROM queen.timer_audit_events WHERE type = 'fired' AND event->>'queue' = '" + queue + "'");
    }

    private static RawBatch.Rec schedule(String queue, String k, Instant at, String token) {
        return RawBatch.Rec.of(keyBytes(queue, k), value(queue, k, at),
                token == null ? List.of() : List.<String[]>of(new String[] {"queen-auth", token}));
    }

    private static byte[] value(String queue, String k, Instant at) {
        return ("{\"op\":\"schedule\",\"queue\":\"" + queue + "\",\"timerKey\":\"" + k + "\",\"deliverAt\":\"" + at
                + "\",\"txn\":\"t-" + k + "\",\"payload\":{\"k\":\"" + k + "\"}}").getBytes(StandardCharsets.UTF_8);
    }

    private static byte[] keyBytes(String queue, String k) {
        return (queue + "/" + k).getBytes(StandardCharsets.UTF_8);
    }

    private static long end(String topic, int partition) throws Exception {
        var tp = new org.apache.kafka.common.TopicPartition(topic, partition);
        try (var admin = TestKafka.admin()) {
            return admin.listOffsets(Map.of(tp, org.apache.kafka.clients.admin.OffsetSpec.latest())).partitionResult(tp).get().offset();
        }
    }

    private static String token(ECKey key) throws Exception {
        Instant now = Instant.now();
        JWTClaimsSet claims = new JWTClaimsSet.Builder().subject("svc").issueTime(Date.from(now.minusSeconds(600)))
                .notBeforeTime(Date.from(now.minusSeconds(600))).expirationTime(Date.from(now.plusSeconds(900)))
                .audience(AUDIENCE).issuer(ISSUER).claim("tenant", TENANT).build();
        SignedJWT jwt = new SignedJWT(new JWSHeader.Builder(JWSAlgorithm.ES256).keyID(key.getKeyID()).type(JOSEObjectType.JWT).build(), claims);
        jwt.sign(new ECDSASigner(key));
        return jwt.serialize();
    }

    private static void admin(String sql) throws Exception {
        try (Connection c = db.dataSource().getConnection(); Statement st = c.createStatement()) {
            st.execute(sql);
        }
    }

    /** Until the bridge's log says its ingest runs (the group joined): the test's records then meet a running bridge. */
    private static void awaitReady(Process bridge, Path log) {
        await().atMost(Duration.ofMinutes(1)).pollInterval(Duration.ofMillis(200)).until(() -> {
            assertThat(bridge.isAlive()).as("the bridge is running; log: " + log.toAbsolutePath()).isTrue();
            return Files.exists(log) && Files.readString(log).contains("consuming [");
        });
    }

    /** The bridge as the image starts it: the image's flags on the command line, the manifests' JAVA_TOOL_OPTIONS. */
    private Process startBridge(List<String> flags, String javaToolOptions, String plain, String jwt, String quiet, Path keys,
                                Path log) throws Exception {
        Properties p = new Properties();
        p.setProperty("jdbc.url", db.jdbcUrl());
        p.setProperty("jdbc.user", BRIDGE_LOGIN);
        p.setProperty("jdbc.password", PASSWORD);
        p.setProperty("db.role.check", "true");
        p.setProperty("kafka.bootstrap.servers", TestKafka.bootstrapServers());
        p.setProperty("command.topics", plain + "," + jwt + "," + quiet);
        p.setProperty("topic." + plain + ".tenant", TENANT);
        p.setProperty("topic." + jwt + ".tenant", TENANT);
        p.setProperty("topic." + quiet + ".tenant", QUIET_TENANT);
        p.setProperty("topic." + jwt + ".auth", "jwt");
        p.setProperty("topic." + jwt + ".auth.keys.file", keys.toString());
        p.setProperty("topic." + jwt + ".auth.audience", AUDIENCE);
        p.setProperty("topic." + jwt + ".auth.issuer", ISSUER);
        p.setProperty("audit.relay.enabled", "false"); // the outbox is read here
        p.setProperty("bridge.group.id", "g-" + plain);
        // the owner binds the group to the bridge's login with its topics' tenants, as `migrate` does (V135)
        BridgeGroups.bind(db.dataSource(), "g-" + plain, BRIDGE_LOGIN, Map.of(plain, UUID.fromString(TENANT), jwt,
                UUID.fromString(TENANT), quiet, UUID.fromString(QUIET_TENANT)));
        p.setProperty("http.port", "0");
        p.setProperty("bridge.start.position", "earliest");
        Path config = Files.createTempFile("any-size-bridge", ".properties");
        config.toFile().deleteOnExit();
        try (Writer w = Files.newBufferedWriter(config)) {
            p.store(w, "bridge of a test");
        }
        Files.createDirectories(log.toAbsolutePath().getParent());
        String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        List<String> cmd = new ArrayList<>();
        cmd.add(java);
        cmd.addAll(flags);
        cmd.addAll(List.of("-cp", System.getProperty("java.class.path"), BridgeMain.class.getName(), "--config", config.toString()));
        ProcessBuilder pb = new ProcessBuilder(cmd).redirectErrorStream(true).redirectOutput(log.toFile());
        pb.environment().put("JAVA_TOOL_OPTIONS", javaToolOptions);
        return pb.start();
    }
}
