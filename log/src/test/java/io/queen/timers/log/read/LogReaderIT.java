package io.queen.timers.log.read;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.queen.timers.log.codec.CodecException;
import io.queen.timers.log.codec.Frame;
import io.queen.timers.log.codec.SegmentCodec;
import io.queen.timers.log.codec.UuidV7;
import io.queen.timers.log.push.Appended;
import io.queen.timers.log.push.Destination;
import io.queen.timers.log.push.LogPusher;
import io.queen.timers.sql.Migrations;
import io.queen.timers.testkit.PostgresDatabase;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.stream.IntStream;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

class LogReaderIT {

    @RegisterExtension
    static final PostgresDatabase db = PostgresDatabase.initializedWith(Migrations::migrate);

    private static final UUID TENANT = Destination.DEFAULT_TENANT;
    private static final UUID OTHER = UUID.fromString("00000000-0000-0000-0000-0000000000bb");
    private static final String QUEUE = "orders.reminders";

    /** Segments of 3, 1, 4 and 2 frames in "Default" (offsets 0..9), one of 2 in "P2". */
    private static final List<Frame> SENT = new ArrayList<>();
    private static final List<Appended> APPENDED = new ArrayList<>();

    @BeforeAll
    static void pushSomeSegments() throws Exception {
        LogPusher pusher = new LogPusher(db.dataSource());
        int n = 0;
        for (int size : new int[] {3, 1, 4, 2}) {
            List<Frame> seg = new ArrayList<>();
            for (int j = 0; j < size; j++, n++) {
                seg.add(new Frame(UuidV7.next(), null, "txn-" + n, n % 2 == 0 ? "producer-a" : null, false,
                        ("{\"n\":" + n + ",\"text\":\"überall\"}").getBytes(StandardCharsets.UTF_8)));
            }
            SENT.addAll(seg);
            APPENDED.add(pusher.push(new Destination(TENANT, QUEUE, "Default"), SegmentCodec.pack(seg)));
        }
        // the same txn again in another partition, and in another tenant's queue of the same name
        pusher.push(new Destination(TENANT, QUEUE, "P2"), SegmentCodec.pack(List.of(
                Frame.of(UuidV7.next(), "other", new byte[0]), Frame.of(UuidV7.next(), "txn-5", "{}".getBytes(StandardCharsets.UTF_8)))));
        pusher.push(new Destination(OTHER, QUEUE, "Default"), SegmentCodec.pack(List.of(Frame.of(UuidV7.next(), "txn-5", new byte[0]))));
    }

    @Test
    void readsEveryMessageWithItsOffsetAndSegmentCreatedAt() throws Exception {
        List<LogMessage> all = new LogReader(db.dataSource()).read(TENANT, QUEUE, "Default", 0, 100);
        assertThat(all).hasSize(10);
        assertThat(all).extracting(LogMessage::offset).containsExactly(0L, 1L, 2L, 3L, 4L, 5L, 6L, 7L, 8L, 9L);
        assertThat(all).extracting(LogMessage::frame).containsExactlyElementsOf(SENT);
        assertThat(all.get(4).createdAt()).isEqualTo(APPENDED.get(2).createdAt());
        assertThat(all.get(4).payloadText()).isEqualTo("{\"n\":4,\"text\":\"überall\"}");
        assertThat(all.get(4).producerSub()).isEqualTo("producer-a");
        assertThat(all.get(5).producerSub()).isNull();
        assertThat(all).extracting(LogMessage::partitionId).containsOnly(APPENDED.get(0).partitionId());
    }

    @Test
    void readsFromTheMiddleOfASegmentUpToTheLimit() throws Exception {
        LogReader reader = new LogReader(db.dataSource());
        assertThat(reader.read(TENANT, QUEUE, "Default", 5, 3)).extracting(LogMessage::offset).containsExactly(5L, 6L, 7L);
        assertThat(reader.read(TENANT, QUEUE, "Default", 2, 2)).extracting(LogMessage::txn).containsExactly("txn-2", "txn-3");
        assertThat(reader.read(TENANT, QUEUE, "Default", 9, 10)).extracting(LogMessage::offset).containsExactly(9L);
        assertThat(reader.read(TENANT, QUEUE, "Default", 10, 10)).isEmpty();
        assertThat(reader.read(TENANT, QUEUE, "Default", Long.MAX_VALUE - 1, 10)).isEmpty();
        assertThat(reader.read(TENANT, QUEUE, "nope", 0, 10)).isEmpty();
        assertThat(reader.read(TENANT, "no.such.queue", "Default", 0, 10)).isEmpty();
        assertThat(reader.tail(TENANT, QUEUE, "Default", 3)).extracting(LogMessage::offset).containsExactly(7L, 8L, 9L);
        assertThat(reader.tail(TENANT, QUEUE, "Default", 30)).hasSize(10);
    }

    @Test
    void readsOnlyTheTenantsOwnQueue() throws Exception {
        List<LogMessage> other = new LogReader(db.dataSource()).read(OTHER, QUEUE, "Default", 0, 100);
        assertThat(other).extracting(LogMessage::txn).containsExactly("txn-5");
    }

    @Test
    void findAnswersWasItSentOverAllPartitionsOfTheTenantsQueue() throws Exception {
        LogReader reader = new LogReader(db.dataSource());
        List<TxnHit> hits = reader.find(TENANT, QUEUE, "txn-5");
        assertThat(hits).extracting(TxnHit::partition, TxnHit::offset)
                .containsExactly(org.assertj.core.groups.Tuple.tuple("Default", 5L), org.assertj.core.groups.Tuple.tuple("P2", 1L));
        assertThat(hits.get(0).messageId()).isEqualTo(SENT.get(5).messageId());
        assertThat(hits.get(0).createdAt()).isEqualTo(APPENDED.get(2).createdAt());
        assertThat(reader.find(TENANT, QUEUE, "txn-0")).extracting(TxnHit::offset).containsExactly(0L);
        assertThat(reader.find(TENANT, QUEUE, "never-sent")).isEmpty();
        assertThat(reader.find(OTHER, QUEUE, "txn-0")).isEmpty();
        assertThat(reader.find(TENANT, "no.such.queue", "txn-0")).isEmpty();
    }

    @Test
    void findConfirmsByDecodingSoAForgedHashIsNotAHit() throws Exception {
        // a segment whose log_txns row claims "forged" but whose frame carries another txn
        LogPusher pusher = new LogPusher(db.dataSource());
        Destination dest = new Destination(TENANT, "forged.q", "Default");
        var real = SegmentCodec.pack(List.of(Frame.of(UuidV7.next(), "real", new byte[0])));
        var forged = new io.queen.timers.log.codec.PackedSegment(real.blob(),
                io.queen.timers.log.codec.TxnHash.of("forged"), 1, real.rawBytes());
        pusher.push(dest, forged);
        LogReader reader = new LogReader(db.dataSource());
        assertThat(reader.find(TENANT, "forged.q", "forged")).isEmpty();
        assertThat(reader.find(TENANT, "forged.q", "real")).as("the hash scan comes first").isEmpty();
    }

    @Test
    void aCorruptSegmentIsACodecErrorNamingPartitionAndOffsetAndOnlyNeededSegmentsAreDecoded() throws Exception {
        LogPusher pusher = new LogPusher(db.dataSource());
        Destination dest = new Destination(TENANT, "corrupt.q", "Default");
        List<Appended> segs = new ArrayList<>();
        for (int s = 0; s < 3; s++) {
            int seg = s;
            segs.add(pusher.push(dest, SegmentCodec.pack(IntStream.range(0, 2)
                    .mapToObj(i -> Frame.of(UuidV7.next(), "c" + seg + "-" + i, new byte[8])).toList())));
        }
        // corrupt the middle segment (offsets 2..3)
        try (Connection c = db.dataSource().getConnection();
                PreparedStatement st = c.prepareStatement(
                        "UPDATE queen.log_segments SET blob = ? WHERE partition_id = ? AND base_offset = 2")) {
            st.setBytes(1, new byte[] {1, 2, 3});
            st.setObject(2, segs.get(1).partitionId());
            assertThat(st.executeUpdate()).isEqualTo(1);
        }
        LogReader reader = new LogReader(db.dataSource());
        assertThatThrownBy(() -> reader.read(TENANT, "corrupt.q", "Default", 0, 10))
                .isInstanceOf(CodecException.class)
                .hasMessageContaining("segment " + segs.get(1).partitionId() + "@2");
        // ranges that do not touch the corrupt segment never decode it
        assertThat(reader.read(TENANT, "corrupt.q", "Default", 0, 2)).extracting(LogMessage::offset).containsExactly(0L, 1L);
        assertThat(reader.read(TENANT, "corrupt.q", "Default", 4, 10)).extracting(LogMessage::offset).containsExactly(4L, 5L);
        assertThat(reader.read(TENANT, "corrupt.q", "Default", 5, 10)).extracting(LogMessage::offset).containsExactly(5L);
    }
}
