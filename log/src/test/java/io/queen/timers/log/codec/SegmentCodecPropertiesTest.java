package io.queen.timers.log.codec;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

import java.util.Arrays;
import java.util.List;
import java.util.UUID;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.constraints.IntRange;
import net.jqwik.api.constraints.Size;

class SegmentCodecPropertiesTest {

    @Property(tries = 300)
    void packThenUnpackIsTheIdentity(@ForAll("segments") List<Frame> frames) {
        PackedSegment seg = SegmentCodec.pack(frames);
        assertThat(seg.count()).isEqualTo(frames.size());
        assertThat(seg.hashes()).hasSize(16 * frames.size());
        for (int i = 0; i < frames.size(); i++) {
            assertThat(Arrays.copyOfRange(seg.hashes(), 16 * i, 16 * i + 16)).isEqualTo(TxnHash.of(frames.get(i).txn()));
        }
        assertThat(SegmentCodec.unpack(seg.blob())).isEqualTo(frames);
    }

    /** The bound a packer cuts segments by holds for every frame, and is exact for ASCII strings. */
    @Property(tries = 300)
    void rawBytesAtMostBoundsTheFramesRawBytes(@ForAll("segments") List<Frame> frames) {
        long bound = frames.stream().mapToLong(SegmentCodec::rawBytesAtMost).sum();
        assertThat((long) SegmentCodec.pack(frames).rawBytes()).isLessThanOrEqualTo(bound);
        Frame ascii = new Frame(UUID.randomUUID(), UUID.randomUUID(), "", "", false, new byte[7]);
        assertThat(SegmentCodec.rawBytesAtMost(ascii)).isEqualTo(SegmentCodec.pack(List.of(ascii)).rawBytes());
    }

    @Property(tries = 5)
    void oneMebibytePayloadsRoundTrip(@ForAll("frames") Frame frame, @ForAll @IntRange(min = 1, max = 3) int copies) {
        byte[] big = new byte[1 << 20];
        new java.util.Random(copies).nextBytes(big);
        Frame withBig = new Frame(frame.messageId(), frame.traceId(), frame.txn(), frame.producerSub(), frame.encrypted(), big);
        List<Frame> frames = java.util.Collections.nCopies(copies, withBig);
        assertThat(SegmentCodec.unpack(SegmentCodec.pack(frames).blob())).isEqualTo(frames);
    }

    /** Corrupt the raw frame bytes (then compress validly): only CodecException, or a clean decode. */
    @Property(tries = 500)
    void corruptFramesNeverThrowAnythingButCodecException(@ForAll("segments") List<Frame> frames,
            @ForAll @Size(min = 1, max = 8) List<@IntRange(min = 0, max = Integer.MAX_VALUE) Integer> positions,
            @ForAll byte value, @ForAll @IntRange(min = 0, max = 64) int cut) {
        PackedSegment seg = SegmentCodec.pack(frames);
        byte[] raw = Compression.decompress(seg.blob(), seg.rawBytes());
        for (int p : positions) {
            raw[p % raw.length] ^= (byte) (value == 0 ? 1 : value);
        }
        byte[] cutRaw = Arrays.copyOf(raw, Math.max(0, raw.length - cut));
        assertOnlyCodecException(Compression.compress(cutRaw));
    }

    /** Corrupt the zstd blob itself: flipped bytes, truncation, extension. */
    @Property(tries = 500)
    void corruptBlobsNeverThrowAnythingButCodecException(@ForAll("segments") List<Frame> frames,
            @ForAll @Size(min = 1, max = 8) List<@IntRange(min = 0, max = Integer.MAX_VALUE) Integer> positions,
            @ForAll byte value, @ForAll @IntRange(min = -16, max = 16) int resize) {
        byte[] blob = SegmentCodec.pack(frames).blob();
        for (int p : positions) {
            blob[p % blob.length] ^= (byte) (value == 0 ? 1 : value);
        }
        assertOnlyCodecException(Arrays.copyOf(blob, Math.max(0, blob.length + resize)));
    }

    @Property(tries = 300)
    void arbitraryBytesNeverThrowAnythingButCodecException(@ForAll byte[] blob) {
        assertOnlyCodecException(blob);
    }

    private static void assertOnlyCodecException(byte[] blob) {
        Throwable t = catchThrowable(() -> SegmentCodec.unpack(blob));
        if (t != null) {
            assertThat(t).isInstanceOf(CodecException.class);
        }
    }

    @Provide
    Arbitrary<List<Frame>> segments() {
        return frames().list().ofMinSize(1).ofMaxSize(20);
    }

    @Provide
    Arbitrary<Frame> frames() {
        Arbitrary<UUID> ids = Arbitraries.longs().tuple2().map(t -> new UUID(t.get1(), t.get2()));
        Arbitrary<String> text = Arbitraries.oneOf(
                Arbitraries.strings().ofMaxLength(40),
                Arbitraries.strings().all().ofMaxLength(40).filter(SegmentCodecPropertiesTest::encodable),
                Arbitraries.of("", "txn-0001", "заказ-42", "注文-🎉", "\u0000nul"));
        Arbitrary<byte[]> payloads = Arbitraries.oneOf(
                Arbitraries.just(new byte[0]),
                Arbitraries.bytes().array(byte[].class).ofMaxSize(300),
                Arbitraries.strings().ofMaxLength(200).map(s -> ("{\"v\":\"" + s + "\"}").getBytes(java.nio.charset.StandardCharsets.UTF_8)));
        return Combinators.combine(ids, ids.injectNull(0.5), text, text.injectNull(0.5), Arbitraries.of(true, false), payloads)
                .as(Frame::new);
    }

    private static boolean encodable(String s) {
        return java.nio.charset.StandardCharsets.UTF_8.newEncoder().canEncode(s);
    }
}
