package io.queen.timers.bridge.fetch;

import static org.assertj.core.api.Assertions.assertThat;

import io.queen.timers.bridge.wire.RecordLimits;
import io.queen.timers.bridge.wire.WireLimits;
import io.queen.timers.testkit.RawBatch;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.management.ManagementFactory;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.statistics.Statistics;
import net.jqwik.api.Tuple;
import net.jqwik.api.lifecycle.BeforeProperty;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.common.IsolationLevel;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.compress.Compression;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.record.internal.MemoryRecords;
import org.apache.kafka.common.record.internal.RecordBatch;
import org.apache.kafka.common.record.internal.SimpleRecord;

/**
 * The class, not the case: whatever batches a producer builds, the reader answers every offset exactly once, in order,
 * and the heap it spends on a record stays within a stated multiple of the bytes it counted for that record.
 *
 * <p>Generated here: batches in every codec (none, gzip, snappy, lz4, zstd) holding records with keys from none to
 * beyond the key limit, values up to beyond the body limit (present: a run of one letter), listed headers and runs of up
 * to 300,000 headers of any name and value size, lengths that lie by a few bytes, batches of thousands of tiny records,
 * and between them a legacy v1 batch whose compressed wrapper nests its records, and a batch whose checksum fails; each
 * codec's stream framed as Kafka's producer frames it or with the sizes a hostile producer declares (lz4 blocks of 64 KiB
 * to 4 MiB, snappy chunks of 1 KiB to 1 MiB or one raw block of the whole batch, snappy chunks whose declared length lies,
 * zstd frames declaring windows of 1 KiB to 128 MiB): a batch whose codec declares more than the bridge decompresses with
 * is one unreadable run, and what a stream within the caps allocates when it opens is what it was counted for.
 *
 * <p>The heap is measured, not modelled: the bytes this thread allocates during each {@code next()}
 * ({@code com.sun.management.ThreadMXBean#getCurrentThreadAllocatedBytes}), an upper bound of what the reader can retain
 * for the offset it hands over. It must stay within {@value #MULTIPLE} × the offset's {@link Fetched#heldBytes()} (what
 * the poll's budget counts) + what the streams opened meanwhile were counted for ({@link StreamBudget}: what each codec's
 * header declares) + {@value #BATCH_OPEN_BYTES} bytes. Why these: a record's objects are its bytes copied once out of the
 * body buffer plus the object headers {@link RecordLimits#heldBytes} already counts generously, so 2 leaves room for the
 * transient copies of decoding names; a stream's buffers are what its codec declared; the constant pays for what opening
 * or ending a batch allocates besides (its objects, an exception's trace) and for an unreadable offset's reason. Before the reader counted headers, one record of 540,000 empty headers allocated ~50 MB
 * against ~100 bytes counted: five hundred thousand times the bound. And the counted bytes are honest: a size estimate
 * walked over the objects handed out (each array, String, header and record, at 8-byte alignment) never exceeds them.
 */
class PartitionReaderPropertiesTest {

    static final TopicPartition TP = new TopicPartition("commands", 0);
    /** The defaults: values up to bridge.payload.max.bytes + envelope, 64 headers of 32 KiB in all. */
    static final RecordLimits LIMITS = RecordLimits.of(WireLimits.DEFAULTS, 64, 32 * 1024);
    static final int MULTIPLE = 2;
    /** The decompression budget's default (bridge.decompression.max.bytes). */
    static final long BUDGET = 32 << 20;
    static final int BATCH_OPEN_BYTES = 256 * 1024;
    static final com.sun.management.ThreadMXBean THREADS = (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();

    private final RecordDecoder decoder = new RecordDecoder(LIMITS);
    private final StreamBudget streams = new StreamBudget(BUDGET);

    /** One generated record: what RawBatch writes, and what the reader must answer for it. */
    record Spec(int keyBytes, int valueBytes, int listedHeaders, RawBatch.HeaderRun run, int lengthLie) {

        RawBatch.Rec rec(int i) {
            byte[] key = keyBytes < 0 ? null : fill(keyBytes, (byte) ('k' + i % 3));
            List<String[]> headers = new ArrayList<>();
            for (int h = 0; h < listedHeaders; h++) {
                headers.add(new String[] {"x-h" + h, h % 4 == 3 ? null : "v".repeat(h * 7)});
            }
            RawBatch.Rec r = valueBytes > 1 << 16 ? RawBatch.Rec.run(key, valueBytes, (byte) 'r', headers)
                    : RawBatch.Rec.of(key, fill(valueBytes, (byte) 'v'), headers);
            if (run != null) {
                r = r.withHeaderRun(run.count(), run.nameBytes(), run.valueBytes());
            }
            return lengthLie == 0 ? r : r.withLengthLie(lengthLie);
        }

        int headerCount() {
            return listedHeaders + (run == null ? 0 : run.count());
        }

        long headerBytes() {
            long b = 0;
            for (int h = 0; h < listedHeaders; h++) {
                b += ("x-h" + h).length() + (h % 4 == 3 ? 0 : h * 7);
            }
            return b + (run == null ? 0 : (long) run.count() * (run.nameBytes() + Math.max(0, run.valueBytes())));
        }

        /** The record's body as RawBatch writes it at offset delta {@code i}: what its length declares when it does not lie. */
        long bodyBytes(int i) {
            long b = 1 + varint(0) + varint(i) + varint(keyBytes) + Math.max(0, keyBytes) + varint(valueBytes) + valueBytes
                    + varint(headerCount());
            for (int h = 0; h < listedHeaders; h++) {
                int name = ("x-h" + h).length();
                int value = h % 4 == 3 ? -1 : h * 7;
                b += varint(name) + name + varint(value) + Math.max(0, value);
            }
            if (run != null) {
                b += (long) run.count() * (varint(run.nameBytes()) + run.nameBytes() + varint(run.valueBytes())
                        + Math.max(0, run.valueBytes()));
            }
            return b;
        }

        boolean withinLimits() {
            return keyBytes <= RecordLimits.KEY_MAX_BYTES && headerCount() <= LIMITS.headersMaxCount()
                    && headerBytes() <= LIMITS.headersMaxBytes();
        }
    }

    /**
     * How a batch's codec frames its stream: as Kafka's producer frames it (null), or with the sizes a producer chooses.
     * {@code lies}: the framing declares what it does not hold, so the batch is one unreadable run whatever its records.
     */
    record Framing(String what, RawBatch.Compressor compressor, int zstdWindowLog, boolean lies) {
        static final Framing KAFKA = new Framing("as Kafka's producer", null, 0, false);
    }

    record BatchSpec(RawBatch.Codec codec, List<Spec> records, Framing framing) {
        BatchSpec(RawBatch.Codec codec, List<Spec> records) {
            this(codec, records, Framing.KAFKA);
        }
    }

    /** Between the generated batches: nothing, a legacy v1 batch (compressed: a wrapper nesting its records), or a broken checksum. */
    enum Extra { NONE, LEGACY_NESTED, BAD_CHECKSUM }

    @BeforeProperty
    void warmUp() throws IOException {
        // the first read of each path loads its classes and fills the buffer supplier's pools: not the reader's per record
        List<Spec> every = List.of(new Spec(3, 10, 2, null, 0), new Spec(3, 10, 0, new RawBatch.HeaderRun(100, 1, 1), 0),
                new Spec(3, 10, 0, new RawBatch.HeaderRun(10, 1, 5_000), 0), new Spec(RecordLimits.KEY_MAX_BYTES + 1, 1, 0, null, 0),
                new Spec(3, LIMITS.bodyMaxBytes() + 1, 0, null, 0), new Spec(3, 10, 0, null, 0), new Spec(3, 10, 0, null, 2));
        for (int i = 0; i < 3; i++) {
            for (Extra extra : Extra.values()) {
                List<BatchSpec> all = new ArrayList<>();
                for (RawBatch.Codec c : RawBatch.Codec.values()) {
                    all.add(new BatchSpec(c, every));
                }
                read(build(all, extra));
            }
        }
    }

    @Property(tries = 500)
    void everyOffsetIsAnsweredOnceInOrderAsItsRecordDeservesWithinItsCountedHeap(
            @ForAll("logs") List<BatchSpec> batches, @ForAll Extra extra) throws IOException {
        Built log = build(batches, extra);
        List<Read> got = read(log);

        // exactly one answer per offset, in order, and the reader ends after the last
        assertThat(got.stream().map(r -> r.fetched().offset()).toList()).isEqualTo(range(log.end()));
        for (Read r : got) {
            assertThat(r.allocated()).as("bytes allocated reading offset %d (%s), counted %d, streams opened for %d",
                    r.fetched().offset(), r.fetched() instanceof Fetched.Unreadable u ? u.why() : "readable", r.fetched().heldBytes(),
                    r.streamBytes())
                    .isLessThanOrEqualTo(MULTIPLE * r.fetched().heldBytes() + r.streamBytes() + BATCH_OPEN_BYTES);
            assertThat(retainedEstimate(r.fetched())).as("objects handed over for offset %d", r.fetched().offset())
                    .isLessThanOrEqualTo(r.fetched().heldBytes());
        }
        // the generator reaches what matters, in enough tries to mean something (checked, not just printed)
        boolean bomb = batches.stream().flatMap(x -> x.records().stream()).anyMatch(x -> x.headerCount() >= 100_000);
        Statistics.label("a record of 100,000 headers or more").collect(bomb)
                .coverage(c -> c.check(true).percentage(p -> p >= 5));
        Statistics.label("an offset unreadable alone").collect(log.expected().stream().anyMatch(x -> x.kind() == Kind.ALONE))
                .coverage(c -> c.check(true).percentage(p -> p >= 20));
        Statistics.label("an unreadable run").collect(log.expected().stream().anyMatch(x -> x.kind() == Kind.RUN))
                .coverage(c -> c.check(true).percentage(p -> p >= 20));
        Statistics.label("records read").collect(log.expected().stream().anyMatch(x -> x.kind() == Kind.READ))
                .coverage(c -> c.check(true).percentage(p -> p >= 50));
        Statistics.label("a batch refused for what its codec declares").collect(refusedAny(batches))
                .coverage(c -> c.check(true).percentage(p -> p >= 5));
        Statistics.label("a stream of 4 MiB or more").collect(got.stream().anyMatch(r -> r.streamBytes() >= 4 << 20))
                .coverage(c -> c.check(true).percentage(p -> p >= 3));
        // and each answer is the one its record deserves
        for (int i = 0; i < got.size(); i++) {
            Expected want = log.expected().get(i);
            Fetched f = got.get(i).fetched();
            switch (want.kind()) {
                case READ -> {
                    assertThat(f).as("offset %d: %s", i, want.spec()).isInstanceOf(Fetched.Readable.class);
                    ConsumerRecord<byte[], byte[]> rec = ((Fetched.Readable) f).record();
                    Spec s = want.spec();
                    assertThat(rec.key() == null ? -1 : rec.key().length).isEqualTo(s.keyBytes());
                    assertThat(rec.value().length).isEqualTo(s.valueBytes());
                    assertThat(rec.headers().toArray()).hasSize(s.headerCount());
                    assertThat(f.heldBytes()).isEqualTo(RecordLimits.heldBytes(s.keyBytes(), s.valueBytes(), s.headerCount(),
                            nameBytes(rec), valueBytes(rec)));
                }
                case ALONE -> {
                    assertThat(f).as("offset %d: %s", i, want.spec()).isInstanceOf(Fetched.Unreadable.class);
                    assertThat(((Fetched.Unreadable) f).alone()).as("offset %d alone", i).isTrue();
                }
                case RUN -> {
                    assertThat(f).as("offset %d: %s", i, want.spec()).isInstanceOf(Fetched.Unreadable.class);
                    assertThat(((Fetched.Unreadable) f).first()).as("offset %d's run", i).isEqualTo(want.runFirst());
                }
            }
        }
    }

    /**
     * Partitions of one to three topics, each with batches of any codec and framing, read in turn as the bridge's poll
     * reads them, sharing one budget of any size it may be set to: the open streams never hold more than the budget
     * (checked after every offset), never more than one stream per topic, every partition is read to its end (no
     * partition waits for ever), each offset answered once and in order, and the budget is whole again at the end.
     */
    @Property(tries = 100)
    void partitionsSharingOneBudgetStayWithinItAndAreAllRead(@ForAll("partitionLogs") List<List<BatchSpec>> partitions,
                                                             @ForAll("topicCounts") int topics, @ForAll("budgets") long budget,
                                                             @ForAll("turnSizes") int perTurn) throws IOException {
        StreamBudget shared = new StreamBudget(budget);
        List<PartitionReaderTest.Turns.Partition> all = new ArrayList<>();
        for (int i = 0; i < partitions.size(); i++) {
            Built log = build(partitions.get(i), Extra.NONE);
            all.add(new PartitionReaderTest.Turns.Partition(new TopicPartition("t" + i % topics, i), log.records(), log.end()));
        }
        PartitionReaderTest.Turns turns = new PartitionReaderTest.Turns(all, decoder, shared, perTurn);
        turns.toTheEnd(100_000);
        for (PartitionReaderTest.Turns.Partition p : all) {
            assertThat(turns.offsets(p)).as(p.tp() + ": each offset once, in order").isEqualTo(range(p.end()));
        }
        assertThat(turns.maxHeld()).as("one stream per topic at most").isLessThanOrEqualTo(Math.min(budget, topics * Decompression.LARGEST_STREAM_BYTES));
        assertThat(shared.heldBytes()).isZero();
        Statistics.label("a partition waited for its stream").collect(turns.waits() > 0)
                .coverage(c -> c.check(true).percentage(p -> p >= 30));
    }

    @Provide
    Arbitrary<List<List<BatchSpec>>> partitionLogs() {
        return framedLogs().list().ofMinSize(2).ofMaxSize(12);
    }

    @Provide
    Arbitrary<Integer> topicCounts() {
        return Arbitraries.integers().between(1, 3);
    }

    @Provide
    Arbitrary<Long> budgets() {
        return Arbitraries.longs().between(Decompression.LARGEST_STREAM_BYTES, 40L << 20);
    }

    @Provide
    Arbitrary<Integer> turnSizes() {
        return Arbitraries.integers().between(1, 10);
    }

    private static boolean refusedAny(List<BatchSpec> batches) throws IOException {
        for (BatchSpec b : batches) {
            List<RawBatch.Rec> recs = new ArrayList<>();
            for (int i = 0; i < b.records().size(); i++) {
                recs.add(b.records().get(i).rec(i));
            }
            if (refused(b, recs)) {
                return true;
            }
        }
        return false;
    }

    /**
     * Bytes nobody chose: generated uncompressed batches whose records are then corrupted (bytes flipped, cut short, or
     * overwritten with long varints) and re-sealed with a valid checksum. What each offset gets is then anyone's guess;
     * that no offset gets two answers or one out of order, that the reader ends after the last batch, and that each
     * answer stays within the bound, is not. (Not every offset: a corrupted offset delta that jumps ahead inside its batch
     * is read as a compacted batch is, and the offsets it jumps over hold no record to answer.)
     */
    @Property(tries = 500)
    void corruptedRecordsStillGetOneAnswerPerOffsetWithinTheBound(@ForAll("logs") List<BatchSpec> batches,
                                                                   @ForAll long seed) throws IOException {
        Built clean = build(batches, Extra.NONE);
        java.util.Random random = new java.util.Random(seed);
        List<ByteBuffer> out = new ArrayList<>();
        for (RecordBatch b : clean.records().batches()) {
            out.add(b.isCompressed() || random.nextBoolean() ? batchBytes(b) : corrupt(batchBytes(b), random));
        }
        MemoryRecords log = concat(out);
        List<Read> got = read(new Built(log, clean.end(), clean.expected()));
        long last = -1;
        for (Read r : got) {
            assertThat(r.fetched().offset()).as("offsets answered in order, once each").isGreaterThan(last).isLessThan(clean.end());
            last = r.fetched().offset();
        }
        for (Read r : got) {
            assertThat(r.allocated()).as("offset %d: %s", r.fetched().offset(), r.fetched())
                    .isLessThanOrEqualTo(MULTIPLE * r.fetched().heldBytes() + r.streamBytes() + BATCH_OPEN_BYTES);
        }
    }

    // --- generation ---------------------------------------------------------------------------------------------

    @Provide
    Arbitrary<List<BatchSpec>> logs() {
        Arbitrary<Spec> ordinary = Combinators.combine(Arbitraries.integers().between(-1, 64), Arbitraries.integers().between(0, 2_000),
                Arbitraries.integers().between(0, 6)).as((k, v, h) -> new Spec(k, v, h, null, 0));
        Arbitrary<Spec> bigKey = Arbitraries.integers().between(RecordLimits.KEY_MAX_BYTES - 8, 3 * RecordLimits.KEY_MAX_BYTES)
                .map(k -> new Spec(k, 20, 0, null, 0));
        Arbitrary<Spec> manyHeaders = Combinators.combine(Arbitraries.integers().between(1, 300_000),
                Arbitraries.integers().between(0, 4), Arbitraries.integers().between(-1, 3))
                .as((n, name, value) -> new Spec(5, 30, 0, new RawBatch.HeaderRun(n, name, value), 0));
        Arbitrary<Spec> heavyHeaders = Combinators.combine(Arbitraries.integers().between(1, 70),
                Arbitraries.integers().between(1, 16), Arbitraries.integers().between(100, 6_000))
                .as((n, name, value) -> new Spec(5, 30, 1, new RawBatch.HeaderRun(n, name, value), 0));
        Arbitrary<Spec> bigValue = Arbitraries.integers().between(LIMITS.bodyMaxBytes() - 2_000, LIMITS.bodyMaxBytes() + 200_000)
                .map(v -> new Spec(5, v, 0, null, 0));
        Arbitrary<Spec> lying = Combinators.combine(ordinary, Arbitraries.integers().between(-6, 6).filter(l -> l != 0))
                .as((s, lie) -> new Spec(s.keyBytes(), s.valueBytes(), s.listedHeaders(), s.run(), lie));
        Arbitrary<Spec> any = Arbitraries.frequencyOf(Tuple.of(10, ordinary), Tuple.of(2, bigKey), Tuple.of(3, manyHeaders),
                Tuple.of(3, heavyHeaders), Tuple.of(1, bigValue), Tuple.of(2, lying));
        Arbitrary<List<Spec>> mixed = any.list().ofMinSize(1).ofMaxSize(8);
        Arbitrary<List<Spec>> tiny = Arbitraries.integers().between(200, 3_000).map(n -> {
            List<Spec> l = new ArrayList<>(n);
            for (int i = 0; i < n; i++) {
                l.add(new Spec(-1, 0, 0, null, 0));
            }
            return l;
        });
        Arbitrary<RawBatch.Codec> codec = Arbitraries.of(RawBatch.Codec.values());
        Arbitrary<List<Spec>> records = Arbitraries.frequencyOf(Tuple.of(6, mixed), Tuple.of(1, tiny));
        Arbitrary<BatchSpec> batch = codec.flatMap(c -> Combinators.combine(records, framings(c)).as((r, f) -> new BatchSpec(c, r, f)));
        return batch.list().ofMinSize(1).ofMaxSize(5);
    }

    /** Ordinary records (a few to a few hundred) in batches of any codec and any framing: what the budget is tried with. */
    @Provide
    Arbitrary<List<BatchSpec>> framedLogs() {
        Arbitrary<Spec> ordinary = Combinators.combine(Arbitraries.integers().between(-1, 64), Arbitraries.integers().between(0, 3_000),
                Arbitraries.integers().between(0, 4)).as((k, v, h) -> new Spec(k, v, h, null, 0));
        Arbitrary<List<Spec>> records = ordinary.list().ofMinSize(1).ofMaxSize(300);
        Arbitrary<BatchSpec> batch = Arbitraries.of(RawBatch.Codec.values())
                .flatMap(c -> Combinators.combine(records, framings(c)).as((r, f) -> new BatchSpec(c, r, f)));
        return batch.list().ofMinSize(1).ofMaxSize(3);
    }

    /** The framings a producer of {@code codec} may choose, Kafka's own the most often. */
    static Arbitrary<Framing> framings(RawBatch.Codec codec) {
        Arbitrary<Framing> kafka = Arbitraries.just(Framing.KAFKA);
        return switch (codec) {
            case NONE, GZIP -> kafka;
            case LZ4 -> Arbitraries.frequencyOf(Tuple.of(2, kafka), Tuple.of(3, Arbitraries.of(64 << 10, 256 << 10, 1 << 20, 4 << 20)
                    .map(b -> new Framing("lz4 blocks of " + b, RawBatch.lz4Blocks(b), 0, false))));
            case SNAPPY -> Arbitraries.frequencyOf(Tuple.of(2, kafka),
                    Tuple.of(2, Arbitraries.of(1 << 10, 32 << 10, 1 << 20).map(b -> new Framing("snappy chunks of " + b, RawBatch.snappyChunks(b), 0, false))),
                    Tuple.of(1, Arbitraries.just(new Framing("raw snappy", RawBatch.snappyRaw(), 0, false))),
                    Tuple.of(2, Arbitraries.of(100, 5 << 20, 9 << 20, 300 << 20).map(n -> new Framing("a snappy chunk declaring " + n,
                            RawBatch.bytes(snappyChunkDeclaring(n)), 0, true))));
            case ZSTD -> Arbitraries.frequencyOf(Tuple.of(2, kafka), Tuple.of(2, Arbitraries.integers().between(10, 23)
                    .map(log -> new Framing("a zstd window of 2^" + log, RawBatch.zstdWindow(log), log, false))),
                    Tuple.of(1, Arbitraries.integers().between(24, 27)
                    .map(log -> new Framing("a zstd window of 2^" + log, RawBatch.zstdWindow(log), log, false))));
        };
    }

    /** Snappy-java's header and one chunk whose declared uncompressed length is {@code n}, followed by 20 bytes of nothing. */
    static byte[] snappyChunkDeclaring(int n) {
        ByteBuffer varint = ByteBuffer.allocate(5);
        for (int v = n; ; v >>>= 7) {
            if ((v & ~0x7F) == 0) {
                varint.put((byte) v);
                break;
            }
            varint.put((byte) ((v & 0x7F) | 0x80));
        }
        varint.flip();
        return ByteBuffer.allocate(16 + 4 + varint.remaining() + 20).put(new byte[] {(byte) 0x82, 'S', 'N', 'A', 'P', 'P', 'Y', 0})
                .putInt(1).putInt(1).putInt(varint.remaining() + 20).put(varint).put(new byte[20]).array();
    }

    // --- what the reader must answer ----------------------------------------------------------------------------

    enum Kind { READ, ALONE, RUN }

    record Expected(Kind kind, Spec spec, long runFirst) {}

    record Built(MemoryRecords records, long end, List<Expected> expected) {}

    /**
     * The log of {@code batches} from offset 0, with {@code extra} after the first, and what each offset deserves: a
     * record beyond a limit whose length is honest is unreadable alone; a lie, or in a compressed batch a body beyond the
     * body limit, makes it and the rest of its batch a run; an uncompressed body beyond the limit is stepped over.
     */
    static Built build(List<BatchSpec> batches, Extra extra) throws IOException {
        List<ByteBuffer> parts = new ArrayList<>();
        List<Expected> expected = new ArrayList<>();
        long base = 0;
        for (int b = 0; b < batches.size(); b++) {
            BatchSpec batch = batches.get(b);
            List<RawBatch.Rec> recs = new ArrayList<>();
            for (int i = 0; i < batch.records().size(); i++) {
                recs.add(batch.records().get(i).rec(i));
            }
            ByteBuffer bytes = batch.framing().compressor() == null ? RawBatch.build(batch.codec(), 1_796_212_800_000L, recs)
                    : RawBatch.build(batch.codec(), batch.framing().compressor(), 1_796_212_800_000L, recs);
            bytes.putLong(0, base); // the broker's part; outside the checksum
            parts.add(bytes);
            long runFirst = refused(batch, recs) ? base : -1;
            for (int i = 0; i < batch.records().size(); i++) {
                Spec s = batch.records().get(i);
                long offset = base + i;
                if (runFirst < 0) {
                    boolean longer = s.bodyBytes(i) + s.lengthLie() > LIMITS.bodyMaxBytes();
                    if (s.lengthLie() != 0 || longer && batch.codec() != RawBatch.Codec.NONE) {
                        runFirst = offset;
                    }
                }
                Kind kind = runFirst >= 0 ? Kind.RUN
                        : s.bodyBytes(i) > LIMITS.bodyMaxBytes() || !s.withinLimits() ? Kind.ALONE : Kind.READ;
                expected.add(new Expected(kind, s, runFirst));
            }
            base += batch.records().size();
            if (b == 0 && extra != Extra.NONE) {
                MemoryRecords more = extra == Extra.LEGACY_NESTED
                        ? MemoryRecords.withRecords(RecordBatch.MAGIC_VALUE_V1, base, Compression.gzip().build(),
                                new SimpleRecord("k".getBytes(StandardCharsets.UTF_8), "v".getBytes(StandardCharsets.UTF_8)),
                                new SimpleRecord(null, new byte[40]))
                        : badChecksum(base);
                parts.add(more.buffer().duplicate());
                for (int i = 0; i < 2; i++) {
                    expected.add(new Expected(Kind.RUN, null, base));
                }
                base += 2;
            }
        }
        return new Built(concat(parts), base, expected);
    }

    /**
     * Whether the bridge refuses {@code batch} whole for what its codec declares: a framing that lies, a zstd window
     * beyond 8 MiB, or raw snappy declaring the whole batch's records beyond 8 MiB.
     */
    static boolean refused(BatchSpec batch, List<RawBatch.Rec> recs) throws IOException {
        Framing f = batch.framing();
        if (f.lies() || f.zstdWindowLog() > 23) {
            return true;
        }
        if (f.what().equals("raw snappy")) {
            return RawBatch.build(RawBatch.Codec.NONE, 0, recs).remaining() - 61 > Decompression.DECLARED_MAX_BYTES;
        }
        return false;
    }

    private static MemoryRecords badChecksum(long base) {
        ByteBuffer b = MemoryRecords.withRecords(base, Compression.NONE, new SimpleRecord(new byte[3], new byte[3]),
                new SimpleRecord(null, new byte[5])).buffer();
        b.put(b.limit() - 1, (byte) (b.get(b.limit() - 1) ^ 0x5A));
        return MemoryRecords.readableRecords(b);
    }

    // --- reading and measuring ----------------------------------------------------------------------------------

    /** One offset as read: what reading it allocated, and what the streams opened meanwhile were counted for. */
    record Read(Fetched fetched, long allocated, long streamBytes) {}

    private List<Read> read(Built log) {
        PartitionReader reader = new PartitionReader(TP, log.records(), List.of(), 0,
                new PartitionReader.Reading(IsolationLevel.READ_UNCOMMITTED, decoder, true, streams));
        List<Read> out = new ArrayList<>();
        while (true) {
            long opened = streams.openedBytes();
            long before = THREADS.getCurrentThreadAllocatedBytes();
            Fetched f = reader.next();
            long allocated = THREADS.getCurrentThreadAllocatedBytes() - before;
            if (f == null) {
                assertThat(reader.waiting()).as("a reader alone never waits for its stream").isFalse();
                assertThat(reader.position()).isEqualTo(log.end());
                assertThat(streams.heldBytes()).as("every stream closed with its batch").isZero();
                return out;
            }
            out.add(new Read(f, allocated, streams.openedBytes() - opened));
            assertThat(streams.heldBytes()).isLessThanOrEqualTo(Decompression.LARGEST_STREAM_BYTES);
        }
    }

    /**
     * The objects handed over for an offset, walked and sized as HotSpot lays them out with compressed references: 12
     * bytes of header, fields, arrays' 16, all rounded to 8.
     */
    static long retainedEstimate(Fetched f) {
        if (f instanceof Fetched.Unreadable u) {
            return align(12 + 4 * 4 + 8 * 3) + string(u.why());
        }
        ConsumerRecord<byte[], byte[]> r = ((Fetched.Readable) f).record();
        long size = align(12 + 8) // the Readable: its record and its counted bytes
                + align(12 + 4 + 4 + 8 + 8 + 4 + 4 + 4 + 4 + 4 + 4 + 4 + 4) // the ConsumerRecord
                + array(r.key()) + array(r.value())
                + align(12 + 4) + align(12 + 4) // the leader epoch: an Optional and an Integer
                + align(12 + 4 + 1) + align(12 + 4 + 4) + align(16 + 4L * r.headers().toArray().length); // headers, list, array
        for (Header h : r.headers()) {
            size += align(12 + 4 * 4) + string(h.key()) + array(h.value());
        }
        return size;
    }

    private static long string(String s) {
        boolean latin1 = s.chars().allMatch(c -> c < 256);
        return align(24) + align(16 + (long) s.length() * (latin1 ? 1 : 2));
    }

    private static long array(byte[] b) {
        return b == null ? 0 : align(16 + b.length);
    }

    private static long align(long n) {
        return (n + 7) & ~7L;
    }

    private static long nameBytes(ConsumerRecord<byte[], byte[]> r) {
        long n = 0;
        for (Header h : r.headers()) {
            n += h.key().getBytes(StandardCharsets.UTF_8).length;
        }
        return n;
    }

    private static long valueBytes(ConsumerRecord<byte[], byte[]> r) {
        long n = 0;
        for (Header h : r.headers()) {
            n += h.value() == null ? 0 : h.value().length;
        }
        return n;
    }

    // --- bytes --------------------------------------------------------------------------------------------------

    private static ByteBuffer batchBytes(RecordBatch b) {
        ByteBuffer copy = ByteBuffer.allocate(b.sizeInBytes());
        b.writeTo(copy);
        return copy.flip();
    }

    /** Corrupts an uncompressed batch's records (after its 61-byte header) and seals it with a valid checksum again. */
    private static ByteBuffer corrupt(ByteBuffer batch, java.util.Random random) {
        byte[] b = Arrays.copyOf(batch.array(), batch.remaining());
        int records = b.length - 61;
        if (records > 0) {
            switch (random.nextInt(3)) {
                case 0 -> {
                    for (int i = 1 + random.nextInt(8); i > 0; i--) {
                        b[61 + random.nextInt(records)] = (byte) random.nextInt(256);
                    }
                }
                case 1 -> {
                    int at = 61 + random.nextInt(records);
                    for (int i = 0; i < 5 && at + i < b.length; i++) {
                        b[at + i] = (byte) (0x80 | random.nextInt(256));
                    }
                }
                default -> {
                    int cut = 61 + random.nextInt(records);
                    b = Arrays.copyOf(b, cut);
                    ByteBuffer.wrap(b).putInt(8, cut - 12); // the batch length: after its own field
                }
            }
        }
        java.util.zip.CRC32C crc = new java.util.zip.CRC32C();
        crc.update(b, 21, b.length - 21);
        ByteBuffer out = ByteBuffer.wrap(b);
        out.putInt(17, (int) crc.getValue());
        return out;
    }

    private static MemoryRecords concat(List<ByteBuffer> parts) {
        int size = parts.stream().mapToInt(ByteBuffer::remaining).sum();
        ByteBuffer all = ByteBuffer.allocate(size);
        parts.forEach(p -> all.put(p.duplicate()));
        return MemoryRecords.readableRecords(all.flip());
    }

    private static List<Long> range(long end) {
        List<Long> out = new ArrayList<>();
        for (long o = 0; o < end; o++) {
            out.add(o);
        }
        return out;
    }

    private static byte[] fill(int n, byte b) {
        byte[] out = new byte[Math.max(0, n)];
        Arrays.fill(out, b);
        return out;
    }

    private static int varint(long v) {
        long z = (v << 1) ^ (v >> 63);
        int n = 1;
        while ((z & ~0x7FL) != 0) {
            z >>>= 7;
            n++;
        }
        return n;
    }

    static {
        if (!THREADS.isThreadAllocatedMemorySupported()) {
            throw new UncheckedIOException(new IOException("this JVM does not count allocated bytes per thread"));
        }
        THREADS.setThreadAllocatedMemoryEnabled(true);
    }
}
