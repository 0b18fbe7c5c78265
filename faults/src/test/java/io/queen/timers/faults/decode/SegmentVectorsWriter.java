package io.queen.timers.faults.decode;

import static io.queen.timers.faults.decode.SegmentVectors.LOG_PUSH;
import static io.queen.timers.faults.decode.SegmentVectors.LOG_PUSH_FRAMES;
import static io.queen.timers.faults.decode.SegmentVectors.PRODUCT;
import static io.queen.timers.faults.decode.SegmentVectors.PRODUCT_FRAMES;

import io.queen.timers.log.codec.Frame;
import io.queen.timers.log.codec.PackedSegment;
import io.queen.timers.log.codec.SegmentCodec;
import io.queen.timers.log.push.Appended;
import io.queen.timers.log.push.Destination;
import io.queen.timers.log.push.LogPusher;
import io.queen.timers.sql.Migrations;
import io.queen.timers.testkit.PostgresDatabase;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.time.OffsetDateTime;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledIfSystemProperty;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Rewrites the committed vectors from the product: {@code -Dvectors.write=true -Dtest=SegmentVectorsWriter} in module
 * faults. Never part of a normal run (the assertions are on the committed bytes, {@link SegmentVectorsTest}); rewrite
 * only when the format changes on purpose, and say why in the commit.
 */
@EnabledIfSystemProperty(named = "vectors.write", matches = "true")
class SegmentVectorsWriter {

    @RegisterExtension
    static final PostgresDatabase db = PostgresDatabase.initializedWith(Migrations::migrate);

    @Test
    void productPack() throws Exception {
        PackedSegment packed = pack(PRODUCT_FRAMES);
        Map<String, String> fields = new LinkedHashMap<>();
        fields.put("frames", String.valueOf(packed.count()));
        fields.put("blob", HexFormat.of().formatHex(packed.blob()));
        SegmentVectors.write(PRODUCT, List.of(
                "A segment packed by the product's writer, SegmentCodec.pack (module log), as the sweeper's packer calls it.",
                "Written by SegmentVectorsWriter; the frames are SegmentVectors.PRODUCT_FRAMES."), fields);
    }

    @Test
    void logPushV1() throws Exception {
        LogPusher pusher = new LogPusher(db.dataSource());
        Destination d = new Destination(Destination.DEFAULT_TENANT, "vectors.push", "Default");
        // A first segment, so the vector's base_offset is not 0: frame j of a segment is base_offset + j.
        pusher.push(d, pack(List.of(DecodedFrame.of(UUID.fromString("0193a1b3-0000-7fff-8000-000000000000"), "push-0",
                SegmentVectors.utf8("{}")))));
        Appended a = pusher.push(d, pack(LOG_PUSH_FRAMES));
        Map<String, String> fields = new LinkedHashMap<>();
        try (Connection c = db.dataSource().getConnection(); PreparedStatement st = c.prepareStatement(
                "SELECT s.base_offset, s.end_offset, s.created_at, s.blob, t.hashes FROM queen.log_segments s"
                        + " JOIN queen.log_txns t ON t.partition_id = s.partition_id AND t.base_offset = s.base_offset"
                        + " WHERE s.partition_id = ? AND s.base_offset = ?")) {
            st.setObject(1, a.partitionId());
            st.setLong(2, a.baseOffset());
            try (ResultSet rs = st.executeQuery()) {
                rs.next();
                fields.put("base_offset", String.valueOf(rs.getLong(1)));
                fields.put("end_offset", String.valueOf(rs.getLong(2)));
                fields.put("created_at", rs.getObject(3, OffsetDateTime.class).toInstant().toString());
                fields.put("hashes", HexFormat.of().formatHex(rs.getBytes(5)));
                fields.put("blob", HexFormat.of().formatHex(rs.getBytes(4)));
            }
        }
        SegmentVectors.write(LOG_PUSH, List.of(
                "A queen.log_segments row (and its queen.log_txns hashes) as queen.log_push_v1 stored it in a migrated",
                "database, pushed through LogPusher (log's test-jar) after a first segment of one frame.",
                "Written by SegmentVectorsWriter; the frames are SegmentVectors.LOG_PUSH_FRAMES."), fields);
    }

    private static PackedSegment pack(List<DecodedFrame> frames) {
        return SegmentCodec.pack(frames.stream().map(SegmentVectorsWriter::asProduct).toList());
    }

    private static Frame asProduct(DecodedFrame f) {
        UUID trace = f.traceId() == null ? null
                : new UUID(Long.parseUnsignedLong(f.traceId().substring(0, 16), 16), Long.parseUnsignedLong(f.traceId().substring(16), 16));
        return new Frame(f.messageId(), trace, f.txn(), f.producerSub(), f.encrypted(), f.payload());
    }
}
