package io.queen.timers.bridge.fetch;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.queen.timers.bridge.wire.RecordLimits;
import io.queen.timers.testkit.RawBatch;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.apache.kafka.common.IsolationLevel;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.compress.Compression;
import org.apache.kafka.common.message.FetchResponseData;
import org.apache.kafka.common.record.internal.ControlRecordType;
import org.apache.kafka.common.record.internal.EndTransactionMarker;
import org.apache.kafka.common.record.internal.MemoryRecords;
import org.apache.kafka.common.record.internal.SimpleRecord;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * What the bridge reads of one fetch: hostile batches between ordinary ones, on one partition, in this test JVM's heap
 * (-Xmx1g). Every record that declares more than the cap (here 1 MiB; up to 2 GiB declared) is refused without an
 * allocation of its size, exactly it and the rest of its producer batch are unreadable, and every other producer's batch
 * around it is read whole.
 */
class PartitionReaderTest {

    static final TopicPartition TP = new TopicPartition("commands", 0);
    static final int CAP = 1 << 20;
    /** Values up to 1 MiB; the defaults' header limits. */
    static final RecordLimits LIMITS = new RecordLimits(CAP, 64, 32 * 1024);
    /** The decompression budget's default (bridge.decompression.max.bytes). */
    static final long BUDGET = 32 << 20;
    /** What opening or ending a batch allocates besides its stream (PartitionReaderPropertiesTest's constant). */
    static final long BATCH_OPEN_BYTES = PartitionReaderPropertiesTest.BATCH_OPEN_BYTES;
    static final com.sun.management.ThreadMXBean THREADS = PartitionReaderPropertiesTest.THREADS;

    @Test
    void recordsDeclaringUpToTwoGibibytesAreRefusedAndOnlyTheirOwnBatchIsLost() throws IOException {
        MemoryRecords log = log(
                MemoryRecords.withRecords(0, Compression.zstd().build(), rec("a0"), rec("a1")),
                // one producer's batch: a schedule, a record declaring 2 GiB - 1 KiB that holds a few bytes, two schedules
                raw(2, List.of(of("b2"), RawBatch.Rec.declaring(key("b3"), Integer.MAX_VALUE - 1024, List.of()), of("b4"), of("b5"))),
                MemoryRecords.withRecords(6, Compression.NONE, rec("c6"), rec("c7")),
                // a record alone in its batch that declares 300 MB and holds none of it
                raw(8, List.of(RawBatch.Rec.declaring(key("d8"), 300L << 20, List.of()))),
                MemoryRecords.withRecords(9, Compression.gzip().build(), rec("e9")),
                // 64 MiB really there (a decompression bomb, a few KB of zstd): larger than the cap, so not read either
                raw(10, List.of(of("f10"), RawBatch.Rec.run(key("f11"), 64L << 20, (byte) 'x', List.of()), of("f12"))),
                MemoryRecords.withRecords(13, Compression.lz4().build(), rec("g13")));

        List<String> got = readAll(log, 0, IsolationLevel.READ_UNCOMMITTED);

        assertThat(got).containsExactly("0 a0", "1 a1", "2 b2", "3 unreadable@3", "4 unreadable@3", "5 unreadable@3", "6 c6",
                "7 c7", "8 unreadable@8", "9 e9", "10 f10", "11 unreadable@11", "12 unreadable@11", "13 g13");
    }

    @Test
    void aRecordThatDeclaresLessThanTheCapButMoreThanItsStreamHoldsIsUnreadable() throws IOException {
        MemoryRecords log = log(raw(0, List.of(of("a0"), RawBatch.Rec.declaring(key("a1"), 500_000, List.of()))),
                MemoryRecords.withRecords(2, Compression.NONE, rec("b2")));

        assertThat(readAll(log, 0, IsolationLevel.READ_UNCOMMITTED)).containsExactly("0 a0", "1 unreadable@1", "2 b2");
    }

    @Test
    void aRecordNearTheCapIsRead() throws IOException {
        byte[] value = new byte[CAP - 1024];
        MemoryRecords log = log(raw(0, List.of(RawBatch.Rec.of(key("big"), value, List.of()), of("a1"))));

        assertThat(readAll(log, 0, IsolationLevel.READ_UNCOMMITTED)).containsExactly("0 value of " + value.length, "1 a1");
    }

    @Test
    void aSeekIntoABatchReadsFromThereAndABombBeforeThePositionMakesTheRestUnreadable() throws IOException {
        MemoryRecords ok = log(MemoryRecords.withRecords(0, Compression.zstd().build(), rec("a0"), rec("a1"), rec("a2")));
        assertThat(readAll(ok, 1, IsolationLevel.READ_UNCOMMITTED)).containsExactly("1 a1", "2 a2");

        MemoryRecords bomb = log(raw(0, List.of(of("a0"), RawBatch.Rec.declaring(key("a1"), 1L << 30, List.of()), of("a2"), of("a3"))));
        assertThat(readAll(bomb, 2, IsolationLevel.READ_UNCOMMITTED)).containsExactly("2 unreadable@2", "3 unreadable@2");
    }

    @Test
    void aBatchWhoseChecksumFailsIsUnreadableWholeAndTheNextIsRead() throws IOException {
        ByteBuffer broken = MemoryRecords.withRecords(0, Compression.NONE, rec("a0"), rec("a1")).buffer();
        broken.put(broken.limit() - 1, (byte) (broken.get(broken.limit() - 1) ^ 0x55));
        MemoryRecords log = log(MemoryRecords.readableRecords(broken), MemoryRecords.withRecords(2, Compression.NONE, rec("b2")));

        assertThat(readAll(log, 0, IsolationLevel.READ_UNCOMMITTED)).containsExactly("0 unreadable@0", "1 unreadable@0", "2 b2");
    }

    @Test
    void readCommittedDropsAbortedTransactionsAndMarkersAsKafkaDoes() {
        long aborted = 7;
        long committed = 8;
        MemoryRecords log = log(
                MemoryRecords.withTransactionalRecords(0, Compression.zstd().build(), aborted, (short) 0, 0, 0, rec("x0"), rec("x1")),
                MemoryRecords.withTransactionalRecords(2, Compression.NONE, committed, (short) 0, 0, 0, rec("y2")),
                MemoryRecords.withEndTransactionMarker(3, 0L, 0, aborted, (short) 0, new EndTransactionMarker(ControlRecordType.ABORT, 0)),
                MemoryRecords.withEndTransactionMarker(4, 0L, 0, committed, (short) 0, new EndTransactionMarker(ControlRecordType.COMMIT, 0)),
                MemoryRecords.withRecords(5, Compression.NONE, rec("z5")));
        List<FetchResponseData.AbortedTransaction> abortedTxns = List.of(
                new FetchResponseData.AbortedTransaction().setProducerId(aborted).setFirstOffset(0));

        PartitionReader r = new PartitionReader(TP, log, abortedTxns, 0,
                new PartitionReader.Reading(IsolationLevel.READ_COMMITTED, new RecordDecoder(LIMITS), true, new StreamBudget(BUDGET)));
        assertThat(drain(r)).containsExactly("2 y2", "5 z5");
        assertThat(r.position()).isEqualTo(6);
        assertThat(readAll(log, 0, IsolationLevel.READ_UNCOMMITTED)).containsExactly("0 x0", "1 x1", "2 y2", "5 z5");
    }

    @ParameterizedTest
    @EnumSource(RawBatch.Codec.class)
    void aRecordBeyondTheRecordLimitsIsUnreadableAloneAndTheRestOfItsBatchIsRead(RawBatch.Codec codec) throws IOException {
        MemoryRecords log = log(
                raw(codec, 0, List.of(
                        of("a0"),
                        of("a1").withHeaderRun(540_000, 0, 0), // 1.08 MB of empty headers, a few KB of zstd
                        of("a2"),
                        of("a3").withHeaderRun(2_000, 8, 500), // too many and too many bytes
                        of("a4").withHeaderRun(10, 8, 4096), // ten headers, 41 KB of them
                        of("a5").withHeaderRun(20, 8, 1024), // within both limits
                        RawBatch.Rec.of(new byte[RecordLimits.KEY_MAX_BYTES + 1], bytes("a6"), List.of()),
                        of("a7").withHeaderRun(64, 0, -1))), // exactly the count limit, null values
                MemoryRecords.withRecords(8, Compression.NONE, rec("b8")));

        PartitionReader reader = reader(log, 0);
        List<Fetched> got = new ArrayList<>();
        for (Fetched f = reader.next(); f != null; f = reader.next()) {
            got.add(f);
        }

        assertThat(got.stream().map(PartitionReaderTest::describe)).containsExactly("0 a0", "1 unreadable@1", "2 a2",
                "3 unreadable@3", "4 unreadable@4", "5 a5", "6 unreadable@6", "7 a7", "8 b8");
        assertThat(got).filteredOn(f -> f instanceof Fetched.Unreadable).allSatisfy(f ->
                assertThat(((Fetched.Unreadable) f).alone()).as("unreadable alone: " + f).isTrue());
        assertThat(((Fetched.Unreadable) got.get(1)).why()).isEqualTo("it has 540000 headers, more than "
                + "bridge.record.headers.max.count (64)");
        assertThat(((Fetched.Unreadable) got.get(4)).why()).isEqualTo("its 10 headers hold 41040 bytes, more than "
                + "bridge.record.headers.max.bytes (32768)");
        assertThat(((Fetched.Unreadable) got.get(6)).why()).startsWith("its key is 4097 bytes");
        ConsumerRecord<byte[], byte[]> a5 = ((Fetched.Readable) got.get(5)).record();
        assertThat(a5.headers().toArray()).hasSize(20).allSatisfy(h -> assertThat(h.value()).hasSize(1024));
        assertThat(((Fetched.Readable) got.get(7)).record().headers().toArray()).hasSize(64)
                .allSatisfy(h -> assertThat(h.value()).isNull());
    }

    @ParameterizedTest
    @EnumSource(RawBatch.Codec.class)
    void aLengthItsFieldsDoNotFillMakesTheRestOfItsBatchUnreadable(RawBatch.Codec codec) throws IOException {
        for (int lie : new int[] {-3, -1, 1, 7}) {
            MemoryRecords log = log(
                    raw(codec, 0, List.of(of("a0"), of("a1").withHeaderRun(3, 4, 4).withLengthLie(lie), of("a2"), of("a3"))),
                    raw(codec, 4, List.of(of("b4"), of("b5").withLengthLie(lie))),
                    MemoryRecords.withRecords(6, Compression.lz4().build(), rec("c6")));

            assertThat(readAll(log, 0, IsolationLevel.READ_UNCOMMITTED)).as("a length " + lie + " bytes off").containsExactly(
                    "0 a0", "1 unreadable@1", "2 unreadable@1", "3 unreadable@1", "4 b4", "5 unreadable@5", "6 c6");
        }
    }

    @Test
    void anUncompressedRecordLongerThanTheBodyLimitIsSteppedOverAloneAndACompressedOneEndsItsBatch() throws IOException {
        long longer = LIMITS.bodyMaxBytes() + 1000L;
        List<RawBatch.Rec> records = List.of(of("a0"), RawBatch.Rec.run(key("a1"), longer, (byte) 'x', List.of()), of("a2"));
        assertThat(readAll(log(raw(RawBatch.Codec.NONE, 0, records)), 0, IsolationLevel.READ_UNCOMMITTED))
                .containsExactly("0 a0", "1 unreadable@1", "2 a2");
        assertThat(readAll(log(raw(RawBatch.Codec.GZIP, 0, records)), 0, IsolationLevel.READ_UNCOMMITTED))
                .containsExactly("0 a0", "1 unreadable@1", "2 unreadable@1");
    }

    // --- what a decompression stream may hold -------------------------------------------------------------------------

    /**
     * A codec's own header declaring more than the bridge decompresses with, or framing that cannot be read to find out:
     * the batch is unreadable whole, in place, and nothing of what it declares is allocated (its stream never opens); the
     * batches around it are read. Before: Kafka's snappy reader allocated each declared size (16 MiB, 400 MiB, 300 MiB)
     * before it failed, and a zstd frame declaring a 16 or 128 MiB window was decoded into a native window of that size.
     */
    @Test
    void aBatchWhoseCodecDeclaresMoreThanTheBridgeDecompressesWithIsUnreadableWholeAndNothingOfItIsAllocated() throws IOException {
        List<RawBatch.Rec> three = List.of(of("x1"), of("x2"), of("x3"));
        Map<String, MemoryRecords> hostile = new LinkedHashMap<>();
        hostile.put("a zstd frame declaring a 16 MiB window", raw(RawBatch.Codec.ZSTD, RawBatch.zstdWindow(24), 1, three));
        hostile.put("a zstd frame declaring a 128 MiB window", raw(RawBatch.Codec.ZSTD, RawBatch.zstdWindow(27), 1, three));
        hostile.put("a zstd frame of 8 MiB then one declaring 16 MiB", raw(RawBatch.Codec.ZSTD,
                RawBatch.bytes(concat(zstd(23, "first frame"), zstd(24, "second frame"))), 1, three));
        hostile.put("a single-segment zstd frame of 9 MiB", raw(RawBatch.Codec.ZSTD, RawBatch.bytes(zstdSingleSegment(9 << 20)), 1, three));
        hostile.put("a legacy zstd frame (v0.7)", raw(RawBatch.Codec.ZSTD, RawBatch.bytes(new byte[] {0x27, (byte) 0xB5, 0x2F,
            (byte) 0xFD, 0, 0, 0, 0, 0, 0, 0, 0}), 1, three));
        hostile.put("a snappy chunk declaring 16 MiB in a few bytes", raw(RawBatch.Codec.SNAPPY,
                RawBatch.bytes(snappyFramed(chunk(varint(16 << 20), 40))), 1, three));
        hostile.put("a snappy chunk declaring 400 MiB of compressed bytes", raw(RawBatch.Codec.SNAPPY,
                RawBatch.bytes(snappyFramed(ByteBuffer.allocate(14).putInt(400 << 20).put(new byte[10]).array())), 1, three));
        hostile.put("raw snappy declaring 300 MiB", raw(RawBatch.Codec.SNAPPY, RawBatch.bytes(concat(varint(300 << 20), new byte[40])), 1, three));

        for (Map.Entry<String, MemoryRecords> e : hostile.entrySet()) {
            MemoryRecords log = log(MemoryRecords.withRecords(0, Compression.NONE, rec("a0")), e.getValue(),
                    MemoryRecords.withRecords(4, Compression.lz4().build(), rec("b4")));
            Measured m = measure(log);
            assertThat(m.described()).as(e.getKey()).containsExactly("0 a0", "1 unreadable@1", "2 unreadable@1", "3 unreadable@1", "4 b4");
            assertThat(((Fetched.Unreadable) m.fetched().get(1)).why()).as(e.getKey()).startsWith("its batch 1..3 is not decompressed: ");
            assertThat(m.allocated()).as(e.getKey() + ": heap allocated reading the five offsets").isLessThan(2 << 20);
        }
    }

    /**
     * Within the caps a batch is read, and its stream is counted from the moment it opens to its batch's end for what its
     * codec declares: the heap the opening allocates is within that (a 4 MiB lz4 block, a 6 MiB snappy chunk), and a
     * zstd stream's window, native, is the one the frame declares, rounded to a power of two.
     */
    @Test
    void aStreamWithinTheCapsIsCountedForWhatItsCodecDeclaresUntilItsBatchEnds() throws IOException {
        record Case(String what, MemoryRecords log, long declared) {}
        List<RawBatch.Rec> tenSmall = new ArrayList<>();
        for (int i = 0; i < 10; i++) {
            tenSmall.add(of("s" + i));
        }
        List<RawBatch.Rec> tenLarge = new ArrayList<>();
        for (int i = 0; i < 10; i++) {
            tenLarge.add(RawBatch.Rec.run(key("l" + i), 900 << 10, (byte) ('a' + i), List.of()));
        }
        List<Case> cases = List.of(
                new Case("lz4 blocks of 4 MiB", raw(RawBatch.Codec.LZ4, RawBatch.lz4Blocks(4 << 20), 0, tenSmall),
                        (4 << 20) + Decompression.LZ4_FIXED_BYTES),
                new Case("snappy chunks of 6 MiB", raw(RawBatch.Codec.SNAPPY, RawBatch.snappyChunks(6 << 20), 0, tenLarge),
                        (6 << 20) + Decompression.SNAPPY_FIXED_BYTES),
                new Case("raw snappy", raw(RawBatch.Codec.SNAPPY, RawBatch.snappyRaw(), 0, tenSmall),
                        rawSnappyLength(tenSmall) + Decompression.SNAPPY_FIXED_BYTES),
                new Case("a zstd window of 8 MiB", raw(RawBatch.Codec.ZSTD, RawBatch.zstdWindow(23), 0, tenLarge),
                        (8 << 20) + Decompression.ZSTD_FIXED_BYTES),
                new Case("Kafka's zstd (a 2 MiB window)", raw(RawBatch.Codec.ZSTD, 0, tenLarge), (2 << 20) + Decompression.ZSTD_FIXED_BYTES),
                new Case("gzip", raw(RawBatch.Codec.GZIP, 0, tenLarge), Decompression.GZIP_BYTES));
        for (Case c : cases) {
            StreamBudget streams = new StreamBudget(BUDGET);
            PartitionReader reader = new PartitionReader(TP, c.log(), List.of(), 0,
                    new PartitionReader.Reading(IsolationLevel.READ_UNCOMMITTED, new RecordDecoder(LIMITS), true, streams));
            long before = THREADS.getCurrentThreadAllocatedBytes();
            Fetched first = reader.next();
            long opening = THREADS.getCurrentThreadAllocatedBytes() - before;
            assertThat(first).as(c.what()).isInstanceOf(Fetched.Readable.class);
            assertThat(streams.heldBytes()).as(c.what() + ": counted while its batch is read").isEqualTo(c.declared());
            assertThat(opening).as(c.what() + ": heap allocated opening it and reading its first record")
                    .isLessThanOrEqualTo(c.declared() + 2 * first.heldBytes() + BATCH_OPEN_BYTES);
            List<String> rest = drain(reader);
            assertThat(rest).as(c.what()).hasSize(9).allMatch(d -> !d.contains("unreadable"));
            assertThat(streams.heldBytes()).as(c.what() + ": given back at its batch's end").isZero();
        }
    }

    /**
     * The native bound holds in zstd itself: the decoder's window log max is what was counted, so a frame needing more
     * fails in zstd before its window is allocated, whatever the header read before said.
     */
    @Test
    void zstdsDecoderIsHeldToTheWindowLogThatWasCounted() throws Exception {
        byte[] frame = zstd(23, "a frame declaring an 8 MiB window");
        Decompression.Declared declared = declare(Decompression.ZSTD, frame);
        assertThat(declared.zstdWindowLog()).isEqualTo(23);
        assertThat(declared.bytes()).isEqualTo((8 << 20) + Decompression.ZSTD_FIXED_BYTES);
        try (InputStream in = Decompression.open(null, declared, frame, 0, frame.length)) {
            assertThat(new String(in.readAllBytes(), StandardCharsets.UTF_8)).isEqualTo("a frame declaring an 8 MiB window");
        }

        Decompression.Declared less = new Decompression.Declared(Decompression.ZSTD, declared.bytes(), 22, 0);
        try (InputStream in = Decompression.open(null, less, frame, 0, frame.length)) {
            assertThatThrownBy(in::read).isInstanceOf(IOException.class).hasMessageContaining("Frame requires too much memory");
        }

        byte[] two = concat(zstd(20, "small window"), zstd(22, "larger window"));
        assertThat(declare(Decompression.ZSTD, two).zstdWindowLog()).as("the largest frame's window counts").isEqualTo(22);
        assertThatThrownBy(() -> declare(Decompression.ZSTD, zstd(24, "16 MiB"))).isInstanceOf(Decompression.Refused.class)
                .hasMessage("its zstd frame needs a window of 16777216 bytes, more than the 8388608 the bridge decompresses with");
    }

    /**
     * Many partitions of one tenant's topic, each stopped part way into batches whose codecs declare the most they may
     * (4 MiB lz4 blocks, 6 MiB snappy chunks, 8 MiB zstd windows), read in turn as the bridge's poll reads them (at most
     * seven offsets per partition per turn, partitions in rotation), beside another tenant's topic: the open streams
     * never hold more than the budget, that topic never more than one stream, the other tenant's offsets are read in the
     * first round, every offset is answered once and in order, and the heap allocated in the first round (every partition
     * given its turn once) is within the budget. Before: each partition opened its own stream, 24 × 4 MiB of lz4 blocks in
     * the first round, and 24 × 6 MiB of snappy chunks after.
     */
    @Test
    void manyPartitionsEachStoppedPartWayInAHostileBatchHoldOneStreamBetweenThemAndTheOtherTenantIsRead() throws IOException {
        int partitions = 24;
        StreamBudget streams = new StreamBudget(BUDGET);
        RecordDecoder decoder = new RecordDecoder(LIMITS);
        List<Turns.Partition> all = new ArrayList<>();
        for (int p = 0; p < partitions; p++) {
            List<RawBatch.Rec> small = new ArrayList<>();
            for (int i = 0; i < 20; i++) {
                small.add(of("p" + p + "-" + i));
            }
            List<RawBatch.Rec> large = new ArrayList<>();
            for (int i = 0; i < 8; i++) {
                large.add(RawBatch.Rec.run(key("p" + p + "-l" + i), 800 << 10, (byte) ('a' + i), List.of()));
            }
            MemoryRecords log = log(raw(RawBatch.Codec.LZ4, RawBatch.lz4Blocks(4 << 20), 0, small),
                    raw(RawBatch.Codec.SNAPPY, RawBatch.snappyChunks(6 << 20), 20, large),
                    raw(RawBatch.Codec.ZSTD, RawBatch.zstdWindow(23), 28, large));
            all.add(new Turns.Partition(new TopicPartition("commands", p), log, 36));
        }
        all.add(new Turns.Partition(new TopicPartition("other-tenant", 0),
                log(MemoryRecords.withRecords(0, Compression.zstd().build(), rec("o0"), rec("o1"), rec("o2"))), 3));
        Turns turns = new Turns(all, decoder, streams, 7);

        long before = THREADS.getCurrentThreadAllocatedBytes();
        turns.round();
        long firstRound = THREADS.getCurrentThreadAllocatedBytes() - before;

        assertThat(firstRound).as("heap allocated while each of %d partitions was read part way or waited", partitions)
                .isLessThanOrEqualTo(BUDGET);
        assertThat(turns.answered(all.get(partitions))).as("the other tenant's offsets, in the first round").isEqualTo(3);
        assertThat(turns.maxHeld()).isLessThanOrEqualTo((4 << 20) + Decompression.LZ4_FIXED_BYTES + (2 << 20) + Decompression.ZSTD_FIXED_BYTES);
        turns.toTheEnd(10_000);
        assertThat(turns.maxHeld()).as("one stream of the topic at a time, and the other tenant's")
                .isLessThanOrEqualTo(Decompression.LARGEST_STREAM_BYTES + (2 << 20) + Decompression.ZSTD_FIXED_BYTES);
        for (Turns.Partition p : all) {
            assertThat(turns.offsets(p)).as(p.tp() + ": each offset once, in order").isEqualTo(range(p.end()));
        }
        assertThat(turns.unreadable()).as("nothing within the caps is refused").isZero();
        assertThat(turns.waits()).as("the topic's partitions waited for its stream").isPositive();
        assertThat(streams.heldBytes()).isZero();
    }

    // ---------------------------------------------------------------------------------------------------------------

    private static List<String> readAll(MemoryRecords log, long from, IsolationLevel isolation) {
        return drain(new PartitionReader(TP, log, List.of(), from,
                new PartitionReader.Reading(isolation, new RecordDecoder(LIMITS), true, new StreamBudget(BUDGET))));
    }

    private static PartitionReader reader(MemoryRecords log, long from) {
        return new PartitionReader(TP, log, List.of(), from,
                new PartitionReader.Reading(IsolationLevel.READ_UNCOMMITTED, new RecordDecoder(LIMITS), true, new StreamBudget(BUDGET)));
    }

    private static List<String> drain(PartitionReader r) {
        List<String> out = new ArrayList<>();
        for (Fetched f = r.next(); f != null; f = r.next()) {
            out.add(describe(f));
        }
        return out;
    }

    private static String describe(Fetched f) {
        if (f instanceof Fetched.Readable rd) {
            byte[] v = rd.record().value();
            return f.offset() + " " + (v.length > 100 ? "value of " + v.length : new String(v, StandardCharsets.UTF_8));
        }
        return f.offset() + " unreadable@" + ((Fetched.Unreadable) f).first();
    }

    private static MemoryRecords log(MemoryRecords... batches) {
        int size = 0;
        for (MemoryRecords b : batches) {
            size += b.sizeInBytes();
        }
        ByteBuffer all = ByteBuffer.allocate(size);
        for (MemoryRecords b : batches) {
            all.put(b.buffer().duplicate());
        }
        all.flip();
        return MemoryRecords.readableRecords(all);
    }

    /** A hostile producer's zstd batch at {@code base}, as RawBatch builds it byte by byte. */
    private static MemoryRecords raw(long base, List<RawBatch.Rec> records) throws IOException {
        return raw(RawBatch.Codec.ZSTD, base, records);
    }

    private static MemoryRecords raw(RawBatch.Codec codec, long base, List<RawBatch.Rec> records) throws IOException {
        ByteBuffer b = RawBatch.build(codec, System.currentTimeMillis(), records);
        b.putLong(0, base); // the broker's part; outside the checksum
        return MemoryRecords.readableRecords(b);
    }

    /** A batch of {@code codec} whose records are compressed by {@code compressor}: framed with the sizes it chooses. */
    private static MemoryRecords raw(RawBatch.Codec codec, RawBatch.Compressor compressor, long base, List<RawBatch.Rec> records)
            throws IOException {
        ByteBuffer b = RawBatch.build(codec, compressor, System.currentTimeMillis(), records);
        b.putLong(0, base); // the broker's part; outside the checksum
        return MemoryRecords.readableRecords(b);
    }

    private static SimpleRecord rec(String v) {
        return new SimpleRecord(key(v), v.getBytes(StandardCharsets.UTF_8));
    }

    private static RawBatch.Rec of(String v) {
        return RawBatch.Rec.of(key(v), v.getBytes(StandardCharsets.UTF_8), List.of());
    }

    private static byte[] bytes(String v) {
        return v.getBytes(StandardCharsets.UTF_8);
    }

    private static byte[] key(String v) {
        return ("q/" + v).getBytes(StandardCharsets.UTF_8);
    }

    record Measured(List<Fetched> fetched, long allocated) {
        List<String> described() {
            return fetched.stream().map(PartitionReaderTest::describe).toList();
        }
    }

    /** Reads {@code log} whole with a decoder and a budget made beforehand, counting the heap the reading allocates. */
    private static Measured measure(MemoryRecords log) {
        PartitionReader r = new PartitionReader(TP, log, List.of(), 0,
                new PartitionReader.Reading(IsolationLevel.READ_UNCOMMITTED, new RecordDecoder(LIMITS), true, new StreamBudget(BUDGET)));
        List<Fetched> out = new ArrayList<>();
        long before = THREADS.getCurrentThreadAllocatedBytes();
        for (Fetched f = r.next(); f != null; f = r.next()) {
            out.add(f);
        }
        return new Measured(out, THREADS.getCurrentThreadAllocatedBytes() - before);
    }

    /**
     * Partitions read as {@link CommandSource}'s poll reads them: in rotation, each turn at most {@code perTurn} offsets
     * of one partition, a partition whose next batch's stream waits passed over until a later turn.
     */
    static final class Turns {
        record Partition(TopicPartition tp, MemoryRecords log, long end) {}

        private final List<Partition> partitions;
        private final Map<Partition, PartitionReader> readers = new LinkedHashMap<>();
        private final Map<Partition, List<Long>> offsets = new LinkedHashMap<>();
        private final StreamBudget streams;
        private final int perTurn;
        private long maxHeld;
        private long unreadable;
        private long waits;

        Turns(List<Partition> partitions, RecordDecoder decoder, StreamBudget streams, int perTurn) {
            this.partitions = partitions;
            this.streams = streams;
            this.perTurn = perTurn;
            for (Partition p : partitions) {
                readers.put(p, new PartitionReader(p.tp(), p.log(), List.of(), 0,
                        new PartitionReader.Reading(IsolationLevel.READ_UNCOMMITTED, decoder, true, streams)));
                offsets.put(p, new ArrayList<>());
            }
        }

        /** Every partition not done yet is given one turn; true while some are not done. */
        boolean round() {
            boolean more = false;
            for (Partition p : partitions) {
                PartitionReader r = readers.get(p);
                if (r == null) {
                    continue;
                }
                more = true;
                for (int i = 0; i < perTurn; i++) {
                    Fetched f = r.next();
                    maxHeld = Math.max(maxHeld, streams.heldBytes());
                    assertThat(streams.heldBytes()).isLessThanOrEqualTo(streams.maxBytes());
                    if (f == null) {
                        if (r.waiting()) {
                            waits++;
                        } else {
                            readers.remove(p);
                        }
                        break;
                    }
                    offsets.get(p).add(f.offset());
                    if (f instanceof Fetched.Unreadable) {
                        unreadable++;
                    }
                }
            }
            return more;
        }

        /** Rounds until every partition is read, at most {@code rounds}: a partition that waits for ever fails here. */
        void toTheEnd(int rounds) {
            for (int i = 0; i < rounds; i++) {
                if (!round()) {
                    return;
                }
            }
            throw new AssertionError("partitions still not read after " + rounds + " rounds: " + readers.keySet());
        }

        int answered(Partition p) {
            return offsets.get(p).size();
        }

        List<Long> offsets(Partition p) {
            return offsets.get(p);
        }

        long maxHeld() {
            return maxHeld;
        }

        long unreadable() {
            return unreadable;
        }

        /** Turns that ended because the partition's next batch's stream waited. */
        long waits() {
            return waits;
        }
    }

    static List<Long> range(long end) {
        List<Long> out = new ArrayList<>();
        for (long o = 0; o < end; o++) {
            out.add(o);
        }
        return out;
    }

    private static Decompression.Declared declare(int codec, byte[] data) throws Decompression.Refused {
        return Decompression.declare(codec, data, 0, data.length);
    }

    /** One zstd frame of {@code text} declaring a window of 2^{@code windowLog}, as a streaming producer writes it. */
    static byte[] zstd(int windowLog, String text) throws IOException {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        try (OutputStream z = RawBatch.zstdWindow(windowLog).wrap(out)) {
            z.write(text.getBytes(StandardCharsets.UTF_8));
        }
        return out.toByteArray();
    }

    /** A zstd frame header alone: single segment, a content size (so a window) of {@code size}, one empty raw block. */
    private static byte[] zstdSingleSegment(int size) {
        return ByteBuffer.allocate(4 + 1 + 4 + 3).order(ByteOrder.LITTLE_ENDIAN).putInt(0xFD2FB528).put((byte) 0xA0).putInt(size)
                .put(new byte[] {1, 0, 0}).array();
    }

    /** Snappy-java's stream header, then {@code chunks} as they are. */
    private static byte[] snappyFramed(byte[] chunks) {
        return ByteBuffer.allocate(16 + chunks.length).put(new byte[] {(byte) 0x82, 'S', 'N', 'A', 'P', 'P', 'Y', 0}).putInt(1).putInt(1)
                .put(chunks).array();
    }

    /** A snappy-java chunk: its length, then {@code start} and {@code more} bytes of nothing. */
    private static byte[] chunk(byte[] start, int more) {
        return ByteBuffer.allocate(4 + start.length + more).putInt(start.length + more).put(start).array();
    }

    private static long rawSnappyLength(List<RawBatch.Rec> records) throws IOException {
        ByteBuffer batch = RawBatch.build(RawBatch.Codec.NONE, 0, records);
        return batch.remaining() - 61;
    }

    /** A varint as snappy declares its uncompressed length: base 128, least significant group first. */
    private static byte[] varint(int n) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        while ((n & ~0x7F) != 0) {
            out.write((n & 0x7F) | 0x80);
            n >>>= 7;
        }
        out.write(n);
        return out.toByteArray();
    }

    private static byte[] concat(byte[] a, byte[] b) {
        byte[] out = Arrays.copyOf(a, a.length + b.length);
        System.arraycopy(b, 0, out, a.length, b.length);
        return out;
    }
}
