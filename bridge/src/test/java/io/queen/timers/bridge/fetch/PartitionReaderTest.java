package io.queen.timers.bridge.fetch;

import static org.assertj.core.api.Assertions.assertThat;

import io.queen.timers.bridge.wire.RecordLimits;
import io.queen.timers.testkit.RawBatch;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
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

        PartitionReader r = new PartitionReader(TP, log, 0, IsolationLevel.READ_COMMITTED, abortedTxns, new RecordDecoder(LIMITS), true,
                new StreamBudget(BUDGET));
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

    // ---------------------------------------------------------------------------------------------------------------

    private static List<String> readAll(MemoryRecords log, long from, IsolationLevel isolation) {
        return drain(new PartitionReader(TP, log, from, isolation, List.of(), new RecordDecoder(LIMITS), true, new StreamBudget(BUDGET)));
    }

    private static PartitionReader reader(MemoryRecords log, long from) {
        return new PartitionReader(TP, log, from, IsolationLevel.READ_UNCOMMITTED, List.of(), new RecordDecoder(LIMITS), true,
                new StreamBudget(BUDGET));
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
}
