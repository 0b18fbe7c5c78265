package io.queen.timers.sweeper;

import static org.assertj.core.api.Assertions.assertThat;

import io.queen.timers.log.codec.Compression;
import io.queen.timers.log.codec.Frame;
import io.queen.timers.log.codec.SegmentCodec;
import io.queen.timers.sweeper.claim.ClaimedTimer;
import io.queen.timers.sweeper.pack.FireBatch;
import io.queen.timers.sweeper.pack.PackResult;
import io.queen.timers.sweeper.pack.Packer;
import io.queen.timers.sweeper.pack.Segment;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import org.junit.jupiter.api.Test;

/** Grouping, decompression and splitting: pure code, no database. */
class PackerTest {

    private static final UUID A = UUID.fromString("00000000-0000-0000-0000-00000000000a");
    private static final UUID B = UUID.fromString("00000000-0000-0000-0000-00000000000b");

    private static ClaimedTimer timer(UUID tenant, String queue, String key, byte[] payload, boolean zstd) {
        return new ClaimedTimer(new ClaimedTimer.Key(tenant, queue, key), ClaimedTimer.Schedule.once(Instant.EPOCH, Instant.EPOCH),
                new ClaimedTimer.Message("Default", "txn-" + key, UUID.randomUUID(), null, null), new ClaimedTimer.Payload(payload, zstd, false),
                new ClaimedTimer.Lease(UUID.randomUUID(), Instant.EPOCH, null), ClaimedTimer.History.NONE);
    }

    @Test
    void groupsByTenantQueueAndPartitionKeepingClaimOrderAndDecompresses() {
        byte[] json = "{\"big\":true}".getBytes(StandardCharsets.UTF_8);
        List<ClaimedTimer> claimed = List.of(
                timer(A, "q", "1", "{}".getBytes(StandardCharsets.UTF_8), false),
                timer(B, "q", "2", "{}".getBytes(StandardCharsets.UTF_8), false),
                timer(A, "q", "3", Compression.compress(json), true),
                timer(A, "other", "4", "{}".getBytes(StandardCharsets.UTF_8), false));

        PackResult r = new Packer(1 << 20).pack(claimed);

        assertThat(r.unpackable()).isEmpty();
        assertThat(r.fires()).hasSize(1);
        List<Segment> segs = r.fires().get(0).segments();
        assertThat(segs).extracting(s -> s.destination().tenantId() + "/" + s.destination().queue())
                .containsExactly(A + "/q", B + "/q", A + "/other");
        List<Frame> frames = SegmentCodec.unpack(segs.get(0).packed().blob());
        assertThat(frames).extracting(Frame::txn).containsExactly("txn-1", "txn-3");
        assertThat(new String(frames.get(1).payload(), StandardCharsets.UTF_8)).isEqualTo("{\"big\":true}");
    }

    @Test
    void aPayloadThatDoesNotDecompressIsSetAsideAlone() {
        List<ClaimedTimer> claimed = List.of(timer(A, "q", "ok", "{}".getBytes(StandardCharsets.UTF_8), false),
                timer(A, "q", "broken", "not zstd".getBytes(StandardCharsets.UTF_8), true));
        PackResult r = new Packer(1 << 20).pack(claimed);
        assertThat(r.unpackable()).singleElement().satisfies(u -> {
            assertThat(u.timer().key().timerKey()).isEqualTo("broken");
            assertThat(u.error()).contains("broken").contains("payload_zstd");
        });
        assertThat(r.fires().get(0).timers()).extracting(t -> t.key().timerKey()).containsExactly("ok");
    }

    @Test
    void aLargeDestinationIsSplitAcrossFiresInOrderWithOneSegmentPerDestinationPerFire() {
        List<ClaimedTimer> claimed = new ArrayList<>();
        for (int i = 0; i < 20; i++) {
            claimed.add(timer(A, "big", "k" + i, new byte[30_000], false));
            claimed.add(timer(A, "small", "s" + i, new byte[10], false));
        }
        PackResult r = new Packer(100_000).pack(claimed);
        List<String> bigOrder = new ArrayList<>();
        for (FireBatch f : r.fires()) {
            assertThat(f.segments()).extracting(Segment::destination).doesNotHaveDuplicates();
            f.segments().stream().filter(s -> s.destination().queue().equals("big"))
                    .forEach(s -> s.timers().forEach(t -> bigOrder.add(t.key().timerKey())));
        }
        assertThat(r.fires().size()).isGreaterThan(1);
        assertThat(bigOrder).containsExactlyElementsOf(claimed.stream().filter(t -> t.key().queue().equals("big")).map(t -> t.key().timerKey()).toList());
    }

    @Test
    void decompressionStopsAtTheHeldBoundAndDefersTheRestInClaimOrder() {
        byte[] mib = new byte[1 << 20];
        java.util.Arrays.fill(mib, (byte) 'a');
        byte[] stored = Compression.compress(mib);   // a few dozen bytes that hold 1 MiB
        List<ClaimedTimer> claimed = new ArrayList<>();
        for (int i = 0; i < 10; i++) {
            claimed.add(timer(A, "q" + (i % 2), "k" + i, stored, true));
        }
        // a budget of 3.5 MiB: three decompress, the fourth and every later one wait for the next cycle, in order
        PackResult r = new Packer(8 << 20, 8 << 20, (7L << 20) / 2).pack(claimed);
        assertThat(r.fires().stream().mapToInt(f -> f.timers().size()).sum()).isEqualTo(3);
        assertThat(r.deferred()).extracting(t -> t.key().timerKey()).containsExactly("k3", "k4", "k5", "k6", "k7", "k8", "k9");
        assertThat(r.unpackable()).isEmpty();
        // one timer larger than the whole budget still goes, alone, when it comes first
        PackResult alone = new Packer(8 << 20, 8 << 20, 1 << 19).pack(claimed.subList(0, 2));
        assertThat(alone.fires().stream().mapToInt(f -> f.timers().size()).sum()).isEqualTo(1);
        assertThat(alone.deferred()).extracting(t -> t.key().timerKey()).containsExactly("k1");
        // and one larger than a lone timer may be fails instead of exhausting the heap
        PackResult tooLarge = new Packer(1 << 19, 1 << 19, 1 << 19).pack(claimed.subList(0, 1));
        assertThat(tooLarge.unpackable()).hasSize(1);
        assertThat(tooLarge.fires()).isEmpty();
    }
}
