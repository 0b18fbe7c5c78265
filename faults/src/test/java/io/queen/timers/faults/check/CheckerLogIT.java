package io.queen.timers.faults.check;

import static org.assertj.core.api.Assertions.assertThat;

import com.github.luben.zstd.Zstd;
import com.github.luben.zstd.ZstdCompressCtx;
import io.queen.timers.faults.load.Intent;
import io.queen.timers.processes.stack.Stack;
import io.queen.timers.log.codec.Frame;
import io.queen.timers.log.codec.PackedSegment;
import io.queen.timers.log.codec.SegmentCodec;
import io.queen.timers.log.codec.UuidV7;
import io.queen.timers.log.push.Destination;
import io.queen.timers.log.push.LogPusher;
import io.queen.timers.sql.Migrations;
import io.queen.timers.testkit.PostgresDatabase;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.List;
import java.util.UUID;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The checker's reading of real {@code queen.log_segments} rows (pushed with {@code queen.log_push_v1}): a segment the
 * independent decoder refuses is a violation, not an exception that ends the check; one the two decoders read
 * differently is another; a frame whose message id is not a UUIDv7 is a third.
 */
class CheckerLogIT {

    @RegisterExtension
    static final PostgresDatabase db = PostgresDatabase.initializedWith(Migrations::migrate);

    private static final byte[] JSON = "{}".getBytes(StandardCharsets.UTF_8);

    @Test
    void theLogIsReadByBothDecodersAndEveryMessageIdMustBeAUuidV7() throws Exception {
        LogPusher pusher = new LogPusher(db.dataSource());
        Destination d = new Destination(UUID.fromString(Stack.TENANT_A), "log.check", "Default");
        pusher.push(d, SegmentCodec.pack(List.of(Frame.of(UuidV7.next(), "t-v7", JSON), Frame.of(UUID.randomUUID(), "t-v4", JSON))));
        // The same frames in a zstd frame with a checksum: the product's codec reads it, the documented format has none.
        PackedSegment plain = SegmentCodec.pack(List.of(Frame.of(UuidV7.next(), "t-sum", JSON)));
        byte[] raw = Zstd.decompress(plain.blob(), plain.rawBytes());
        try (ZstdCompressCtx ctx = new ZstdCompressCtx()) {
            ctx.setLevel(3).setChecksum(true);
            pusher.push(d, new PackedSegment(ctx.compress(raw), plain.hashes(), 1, raw.length));
        }
        // A blob cut short: neither reads it.
        PackedSegment cut = SegmentCodec.pack(List.of(Frame.of(UuidV7.next(), "t-cut", JSON)));
        pusher.push(d, new PackedSegment(Arrays.copyOf(cut.blob(), cut.blob().length - 1), cut.hashes(), 1, cut.rawBytes()));

        Checker checker = Checker.on(() -> db.dataSource().getConnection(), new Intent[0]);
        checker.decodeLog();
        Findings f = checker.findings();

        assertThat(f.count("message ids not UUIDv7")).isEqualTo(1);
        assertThat(f.examples().get("message ids not UUIDv7")).singleElement().asString().contains("txn t-v4").contains("version 4");
        assertThat(f.count("segments the decoders disagree on")).isEqualTo(1);
        assertThat(f.examples().get("segments the decoders disagree on")).singleElement().asString()
                .contains("segment 2..2").contains("only the product's codec reads it").contains("checksum");
        assertThat(f.count("undecodable segments")).isEqualTo(2);
        assertThat(f.count("offset gaps")).isZero();
        // The frames of the readable segment reach the checks (nothing scheduled them here: unknown messages).
        assertThat(f.count("unknown messages in the log")).isEqualTo(2);
        assertThat(f.facts()).containsEntry("log segments decoded", 3L).containsEntry("log frames decoded", 2L);
    }
}
