package io.queen.timers.bridge.fetch;

import static org.assertj.core.api.Assertions.assertThat;

import io.queen.timers.bridge.wire.RecordLimits;
import io.queen.timers.bridge.wire.WireLimits;
import java.io.IOException;
import java.lang.reflect.Constructor;
import java.lang.reflect.Executable;
import java.lang.reflect.Field;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.net.URISyntaxException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.common.IsolationLevel;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.compress.Compression;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.header.internals.RecordHeader;
import org.apache.kafka.common.record.TimestampType;
import org.apache.kafka.common.record.internal.MemoryRecords;
import org.apache.kafka.common.record.internal.MemoryRecordsBuilder;
import org.apache.kafka.common.record.internal.Record;
import org.apache.kafka.common.record.internal.RecordBatch;
import org.junit.jupiter.api.Test;

/**
 * The bridge leans on kafka-clients classes in packages Kafka calls internal, which its compatibility promise does not
 * cover. This test is what fails, instead of a user, when an upgrade of kafka-clients changes them:
 *
 * <ul>
 *   <li>the internal classes the bridge's compiled code names are exactly {@link #SURFACE}'s (found in the class files'
 *       constant pools, so a new use cannot slip in unlisted), and docs/decisions.md names each;
 *   <li>each member the bridge calls on them exists with the parameter and return types it was compiled against
 *       (reflectively: a changed signature is a {@code NoSuchMethodError} at run time for a bridge on a newer
 *       kafka-clients, as in an application that embeds it);
 *   <li>batches built by Kafka's own producer-side writer ({@code MemoryRecordsBuilder}, what the producer's accumulator
 *       uses) in every codec and both timestamp types read through {@link PartitionReader} field for field as Kafka's own
 *       decoder reads them: a change in the layout behind {@code recordInputStream} or the batch header shows here, and so
 *       would a difference between Kafka's snappy and zstd writers and the bridge's own reading of them ({@link Decompression}).
 * </ul>
 */
class KafkaInternalSurfaceTest {

    /** Every internal class the bridge's main code names, with each member it uses ("name(parameter types) return type"). */
    static final Map<String, List<String>> SURFACE = new LinkedHashMap<>();

    static {
        SURFACE.put("org.apache.kafka.clients.consumer.internals.ConsumerNetworkClient", List.of(
                "send(org.apache.kafka.common.Node,org.apache.kafka.common.requests.AbstractRequest$Builder) org.apache.kafka.clients.consumer.internals.RequestFuture",
                "poll(org.apache.kafka.common.utils.Timer,org.apache.kafka.clients.consumer.internals.ConsumerNetworkClient$PollCondition) void",
                "transmitSends() void", "isUnavailable(org.apache.kafka.common.Node) boolean", "wakeup() void", "close() void"));
        SURFACE.put("org.apache.kafka.clients.consumer.internals.ConsumerNetworkClient$PollCondition", List.of("shouldBlock() boolean"));
        SURFACE.put("org.apache.kafka.clients.consumer.internals.ConsumerUtils", List.of(
                "static createConsumerNetworkClient(org.apache.kafka.clients.consumer.ConsumerConfig,org.apache.kafka.common.metrics.Metrics,"
                        + "org.apache.kafka.common.utils.internals.LogContext,org.apache.kafka.clients.ApiVersions,org.apache.kafka.common.utils.Time,"
                        + "org.apache.kafka.clients.Metadata,org.apache.kafka.common.metrics.Sensor,long,"
                        + "org.apache.kafka.common.telemetry.internals.ClientTelemetrySender) org.apache.kafka.clients.consumer.internals.ConsumerNetworkClient"));
        SURFACE.put("org.apache.kafka.clients.consumer.internals.RequestFuture", List.of(
                "isDone() boolean", "failed() boolean", "exception() java.lang.RuntimeException", "value() java.lang.Object"));
        SURFACE.put("org.apache.kafka.common.internals.ClusterResourceListeners", List.of("<init>()"));
        SURFACE.put("org.apache.kafka.common.telemetry.internals.ClientTelemetrySender", List.of()); // a parameter type, passed null
        SURFACE.put("org.apache.kafka.common.header.internals.RecordHeader", List.of("<init>(java.lang.String,byte[])"));
        SURFACE.put("org.apache.kafka.common.header.internals.RecordHeaders", List.of("<init>(org.apache.kafka.common.header.Header[])"));
        SURFACE.put("org.apache.kafka.common.record.internal.Records", List.of()); // the type of a fetch response's records
        SURFACE.put("org.apache.kafka.common.record.internal.MemoryRecords", List.of("static field EMPTY", "batches() java.lang.Iterable",
                "buffer() java.nio.ByteBuffer"));
        SURFACE.put("org.apache.kafka.common.record.internal.RecordBatch", List.of(
                "baseOffset() long", "lastOffset() long", "nextOffset() long", "sizeInBytes() int", "magic() byte", "ensureValid() void",
                "hasProducerId() boolean", "producerId() long", "isControlBatch() boolean", "isTransactional() boolean",
                "countOrNull() java.lang.Integer", "static field MAGIC_VALUE_V2", "static field NO_PARTITION_LEADER_EPOCH"));
        SURFACE.put("org.apache.kafka.common.record.internal.DefaultRecordBatch", List.of(
                "recordInputStream(org.apache.kafka.common.utils.internals.BufferSupplier) java.io.InputStream",
                "baseTimestamp() long", "maxTimestamp() long", "timestampType() org.apache.kafka.common.record.TimestampType",
                "partitionLeaderEpoch() int", "isCompressed() boolean"));
        SURFACE.put("org.apache.kafka.common.utils.internals.BufferSupplier", List.of("static field NO_CACHING"));
        SURFACE.put("org.apache.kafka.common.utils.internals.LogContext", List.of("<init>(java.lang.String)"));
    }

    static final Pattern INTERNAL = Pattern.compile("org/apache/kafka/(?:[a-z0-9]+/)*internals?/[A-Za-z0-9_$]+");

    @Test
    void theInternalClassesTheBridgeNamesAreExactlyTheListedOnes() throws IOException, URISyntaxException {
        Path classes = Path.of(PartitionReader.class.getProtectionDomain().getCodeSource().getLocation().toURI());
        Set<String> named = new TreeSet<>();
        try (Stream<Path> files = Files.walk(classes)) {
            for (Path p : files.filter(f -> f.toString().endsWith(".class")).toList()) {
                Matcher m = INTERNAL.matcher(new String(Files.readAllBytes(p), StandardCharsets.ISO_8859_1));
                while (m.find()) {
                    named.add(m.group().replace('/', '.'));
                }
            }
        }
        assertThat(named).as("kafka-clients internal classes named by the bridge's code (" + classes + "); a new one is listed"
                + " here and priced in docs/decisions.md (The bridge reads its own fetches)").isEqualTo(new TreeSet<>(SURFACE.keySet()));

        String decisions = Files.readString(Path.of("..", "docs", "decisions.md"));
        for (String c : SURFACE.keySet()) {
            String simple = c.substring(c.lastIndexOf('.') + 1).replace('$', '.');
            assertThat(decisions).as("docs/decisions.md names " + c).contains("`" + simple);
        }
    }

    @Test
    void everyMemberTheBridgeUsesHasTheSignatureItWasCompiledAgainst() throws ClassNotFoundException {
        List<String> missing = new ArrayList<>();
        for (Map.Entry<String, List<String>> e : SURFACE.entrySet()) {
            Class<?> c = Class.forName(e.getKey());
            assertThat(Modifier.isPublic(c.getModifiers())).as(e.getKey() + " is public").isTrue();
            for (String member : e.getValue()) {
                if (!has(c, member)) {
                    missing.add(e.getKey() + " " + member);
                }
            }
        }
        assertThat(missing).as("members of kafka-clients' internal classes the bridge calls that this kafka-clients lacks").isEmpty();
    }

    @Test
    void batchesKafkasOwnWriterBuildsReadFieldForFieldAsKafkaReadsThem() throws IOException {
        RecordDecoder decoder = new RecordDecoder(RecordLimits.of(WireLimits.DEFAULTS, 64, 32 * 1024));
        StreamBudget streams = new StreamBudget(32 << 20);
        for (Compression compression : List.of(Compression.NONE, Compression.gzip().build(), Compression.snappy().build(),
                Compression.lz4().build(), Compression.zstd().build())) {
            for (TimestampType type : List.of(TimestampType.CREATE_TIME, TimestampType.LOG_APPEND_TIME)) {
                MemoryRecords log = producerBatch(compression, type, 40);
                List<Fetched> got = new ArrayList<>();
                PartitionReader reader = new PartitionReader(new TopicPartition("t", 3), log, List.of(), 40,
                        new PartitionReader.Reading(IsolationLevel.READ_UNCOMMITTED, decoder, true, streams));
                for (Fetched f = reader.next(); f != null; f = reader.next()) {
                    got.add(f);
                }
                RecordBatch batch = log.batches().iterator().next();
                Iterator<Record> kafka = batch.iterator();
                assertThat(got).as(compression + ", " + type).hasSize(batch.countOrNull());
                for (Fetched f : got) {
                    Record want = kafka.next();
                    ConsumerRecord<byte[], byte[]> r = ((Fetched.Readable) f).record();
                    String what = compression.type() + ", " + type + ", offset " + want.offset();
                    assertThat(r.topic() + "-" + r.partition()).as(what).isEqualTo("t-3");
                    assertThat(r.offset()).as(what).isEqualTo(want.offset());
                    assertThat(r.timestamp()).as(what).isEqualTo(want.timestamp());
                    assertThat(r.timestampType()).as(what).isEqualTo(type);
                    assertThat(r.leaderEpoch()).as(what).isEqualTo(Optional.of(7));
                    assertThat(r.key()).as(what).isEqualTo(want.hasKey() ? bytes(want.key()) : null);
                    assertThat(r.value()).as(what).isEqualTo(want.hasValue() ? bytes(want.value()) : null);
                    assertThat(r.serializedKeySize()).as(what).isEqualTo(want.keySize());
                    assertThat(r.serializedValueSize()).as(what).isEqualTo(want.valueSize());
                    assertThat(names(r.headers().toArray())).as(what).isEqualTo(names(want.headers()));
                    assertThat(values(r.headers().toArray())).as(what).isEqualTo(values(want.headers()));
                }
                assertThat(reader.position()).isEqualTo(batch.nextOffset());
            }
        }
    }

    /** One batch at offset 40 as the producer writes it: keys and values present, empty and null, headers of every kind. */
    private static MemoryRecords producerBatch(Compression compression, TimestampType type, long base) {
        ByteBuffer buffer = ByteBuffer.allocate(1 << 16);
        MemoryRecordsBuilder b = MemoryRecords.builder(buffer, RecordBatch.CURRENT_MAGIC_VALUE, compression, type, base,
                type == TimestampType.LOG_APPEND_TIME ? 1_796_212_899_000L : RecordBatch.NO_TIMESTAMP);
        long ts = 1_796_212_800_000L;
        b.append(ts, bytes("q/a"), bytes("{\"op\":\"cancel\"}"), new Header[0]);
        b.append(ts + 5, (byte[]) null, (byte[]) null, new Header[] {new RecordHeader("queen-auth", bytes("eyJ...")), new RecordHeader("x", null)});
        b.append(ts - 3, new byte[0], new byte[0], new Header[] {new RecordHeader("", new byte[0]),
            new RecordHeader("tracestate", bytes("a=1")), new RecordHeader("tracestate", bytes("b=2"))});
        b.append(ts + 1_000_000, bytes("q/ü"), new byte[5000], new Header[] {new RecordHeader("naïve-名前", new byte[] {(byte) 0xFF})});
        MemoryRecords built = b.build();
        ByteBuffer bytes = built.buffer().duplicate();
        bytes.putInt(12, 7); // the partition leader epoch, as the broker stamps it (outside the checksum)
        return MemoryRecords.readableRecords(bytes);
    }

    private static boolean has(Class<?> c, String member) {
        boolean isStatic = member.startsWith("static ");
        String m = isStatic ? member.substring("static ".length()) : member;
        if (m.startsWith("field ")) {
            try {
                Field f = c.getField(m.substring("field ".length()));
                return Modifier.isStatic(f.getModifiers()) == isStatic;
            } catch (NoSuchFieldException e) {
                return false;
            }
        }
        String name = m.substring(0, m.indexOf('('));
        String params = m.substring(m.indexOf('(') + 1, m.indexOf(')'));
        String returns = m.substring(m.indexOf(')') + 1).trim();
        List<Executable> candidates = new ArrayList<>();
        if (name.equals("<init>")) {
            candidates.addAll(Arrays.asList(c.getConstructors()));
        } else {
            Arrays.stream(c.getMethods()).filter(x -> x.getName().equals(name)).forEach(candidates::add);
        }
        for (Executable x : candidates) {
            String got = Arrays.stream(x.getParameterTypes()).map(Class::getTypeName).collect(Collectors.joining(","));
            if (!got.equals(params)) {
                continue;
            }
            if (x instanceof Constructor<?>) {
                return true;
            }
            Method method = (Method) x;
            if (Modifier.isStatic(method.getModifiers()) == isStatic && method.getReturnType().getTypeName().equals(returns)) {
                return true;
            }
        }
        return false;
    }

    private static List<String> names(Header[] headers) {
        return Arrays.stream(headers).map(Header::key).toList();
    }

    private static List<String> values(Header[] headers) {
        return Arrays.stream(headers).map(h -> h.value() == null ? "null" : Arrays.toString(h.value())).toList();
    }

    private static byte[] bytes(ByteBuffer b) {
        byte[] out = new byte[b.remaining()];
        b.duplicate().get(out);
        return out;
    }

    private static byte[] bytes(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }
}
