package io.queen.timers.log.codec;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.github.luben.zstd.Zstd;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.HexFormat;
import java.util.List;
import java.util.UUID;
import org.junit.jupiter.api.Test;

class SegmentCodecTest {

    private static final UUID ID = UUID.fromString("01890a5d-ac96-774b-bcce-b302099a8057");
    private static final UUID TRACE = UUID.fromString("0af76519-16cd-43dd-8448-eb211c80319c");

    @Test
    void txnHashMatchesTheDesignVectors() {
        assertThat(HexFormat.of().formatHex(TxnHash.of(""))).isEqualTo("99aa06d3014798d86001c324468d497f");
        assertThat(HexFormat.of().formatHex(TxnHash.of("txn-0001"))).isEqualTo("e6db1a376171f085299a000943065f9c");
        assertThat(HexFormat.of().formatHex(TxnHash.of("hello"))).isEqualTo("b5e9c1ad071b3e7fc779cfaa5e523818");
    }

    @Test
    void packWritesTheDocumentedLayoutByteForByte() {
        Frame f = new Frame(ID, TRACE, "t1", "sub", true, "{}".getBytes(StandardCharsets.UTF_8));
        PackedSegment seg = SegmentCodec.pack(List.of(f));
        byte[] raw = Zstd.decompress(seg.blob(), seg.rawBytes());

        ByteBuffer expected = ByteBuffer.allocate(4 + 1 + 16 + 16 + 2 + 2 + 2 + 3 + 2).order(ByteOrder.LITTLE_ENDIAN);
        expected.putInt(1 + 16 + 16 + 2 + 2 + 2 + 3 + 2);
        expected.put((byte) 7);
        expected.order(ByteOrder.BIG_ENDIAN).putLong(ID.getMostSignificantBits()).putLong(ID.getLeastSignificantBits());
        expected.putLong(TRACE.getMostSignificantBits()).putLong(TRACE.getLeastSignificantBits());
        expected.order(ByteOrder.LITTLE_ENDIAN).putShort((short) 2).put("t1".getBytes(StandardCharsets.UTF_8));
        expected.putShort((short) 3).put("sub".getBytes(StandardCharsets.UTF_8));
        expected.put("{}".getBytes(StandardCharsets.UTF_8));

        assertThat(raw).isEqualTo(expected.array());
        assertThat(seg.rawBytes()).isEqualTo(raw.length);
        assertThat(seg.count()).isEqualTo(1);
        assertThat(seg.hashes()).isEqualTo(TxnHash.of("t1"));
    }

    @Test
    void flagsAreClearWhenOptionalPartsAreAbsent() {
        PackedSegment seg = SegmentCodec.pack(List.of(Frame.of(ID, "", new byte[0])));
        byte[] raw = Zstd.decompress(seg.blob(), seg.rawBytes());
        assertThat(raw).hasSize(4 + 1 + 16 + 2);
        assertThat(raw[0]).isEqualTo((byte) 19); // body_len, little-endian
        assertThat(raw[4]).isZero();
    }

    @Test
    void hashesAreInFrameOrder() {
        PackedSegment seg = SegmentCodec.pack(List.of(Frame.of(ID, "a", new byte[1]), Frame.of(ID, "b", new byte[2])));
        assertThat(seg.hashes()).hasSize(32);
        assertThat(java.util.Arrays.copyOfRange(seg.hashes(), 0, 16)).isEqualTo(TxnHash.of("a"));
        assertThat(java.util.Arrays.copyOfRange(seg.hashes(), 16, 32)).isEqualTo(TxnHash.of("b"));
    }

    @Test
    void roundTripKeepsEmptyProducerSubDistinctFromNone() {
        List<Frame> frames = List.of(
                new Frame(ID, null, "x", "", false, new byte[] {1}),
                new Frame(ID, null, "x", null, false, new byte[] {1}));
        assertThat(SegmentCodec.unpack(SegmentCodec.pack(frames).blob())).isEqualTo(frames);
    }

    @Test
    void packRefusesOverlongTxnAndProducerSub() {
        String big = "x".repeat(65536);
        assertThat(SegmentCodec.pack(List.of(Frame.of(ID, "x".repeat(65535), new byte[0]))).count()).isEqualTo(1);
        assertThatThrownBy(() -> SegmentCodec.pack(List.of(Frame.of(ID, big, new byte[0]))))
                .isInstanceOf(CodecException.class).hasMessageContaining("txn of frame 0 is 65536 UTF-8 bytes");
        // 21846 three-byte characters: 65538 bytes although only 21846 chars
        assertThatThrownBy(() -> SegmentCodec.pack(List.of(new Frame(ID, null, "t", "€".repeat(21846), false, new byte[0]))))
                .isInstanceOf(CodecException.class).hasMessageContaining("producer sub of frame 0 is 65538 UTF-8 bytes");
    }

    @Test
    void packRefusesAnEmptySegmentAndAnUnpairedSurrogate() {
        assertThatThrownBy(() -> SegmentCodec.pack(List.of())).isInstanceOf(CodecException.class);
        assertThatThrownBy(() -> SegmentCodec.pack(List.of(Frame.of(ID, "a\uD800b", new byte[0]))))
                .isInstanceOf(CodecException.class).hasMessageContaining("unpaired surrogate");
    }

    @Test
    void truncatedLengthFieldIsTrailingBytesAtItsOffset() {
        byte[] raw = concat(rawOf(Frame.of(ID, "t", new byte[] {1, 2})), new byte[] {9, 9});
        int at = raw.length - 2;
        assertThatThrownBy(() -> SegmentCodec.unpack(Zstd.compress(raw, 3)))
                .isInstanceOf(CodecException.class).hasMessageContaining("2 trailing bytes at byte offset " + at);
    }

    @Test
    void frameRunningPastTheBufferNamesItsOffset() {
        byte[] first = rawOf(Frame.of(ID, "t", new byte[] {1}));
        byte[] second = rawOf(Frame.of(ID, "u", new byte[] {1, 2, 3}));
        byte[] raw = concat(first, java.util.Arrays.copyOf(second, second.length - 1));
        assertThatThrownBy(() -> SegmentCodec.unpack(Zstd.compress(raw, 3)))
                .isInstanceOf(CodecException.class)
                .hasMessageContaining("frame at byte offset " + first.length + " runs past the buffer");
    }

    @Test
    void bodyShorterThanItsFixedPartNamesItsOffset() {
        // body_len 10: too short for flags + message id
        byte[] raw = ByteBuffer.allocate(14).order(ByteOrder.LITTLE_ENDIAN).putInt(10).array();
        assertThatThrownBy(() -> SegmentCodec.unpack(Zstd.compress(raw, 3)))
                .isInstanceOf(CodecException.class).hasMessageContaining("frame at byte offset 0: body shorter than its fixed part");

        // txn_len says 5, body has 1 byte left
        byte[] ok = rawOf(Frame.of(ID, "t", new byte[0]));
        ok[4 + 1 + 16] = 5;
        assertThatThrownBy(() -> SegmentCodec.unpack(Zstd.compress(ok, 3)))
                .isInstanceOf(CodecException.class).hasMessageContaining("txn needs 5 bytes at byte offset 23");
    }

    @Test
    void unknownFlagsAndBadUtf8AreErrors() {
        byte[] raw = rawOf(Frame.of(ID, "t", new byte[0]));
        raw[4] = 8;
        assertThatThrownBy(() -> SegmentCodec.unpack(Zstd.compress(raw, 3)))
                .isInstanceOf(CodecException.class).hasMessageContaining("unknown flags 0x8");
        byte[] raw2 = rawOf(Frame.of(ID, "t", new byte[0]));
        raw2[4 + 1 + 16 + 2] = (byte) 0xFF;
        assertThatThrownBy(() -> SegmentCodec.unpack(Zstd.compress(raw2, 3)))
                .isInstanceOf(CodecException.class).hasMessageContaining("not valid UTF-8");
    }

    @Test
    void badZstdIsACodecError() {
        PackedSegment seg = SegmentCodec.pack(List.of(Frame.of(ID, "t", new byte[100])));
        assertThatThrownBy(() -> SegmentCodec.unpack(new byte[] {1, 2, 3, 4, 5, 6, 7, 8}))
                .isInstanceOf(CodecException.class).hasMessageContaining("bad zstd");
        assertThatThrownBy(() -> SegmentCodec.unpack(new byte[0])).isInstanceOf(CodecException.class);
        assertThatThrownBy(() -> SegmentCodec.unpack(concat(seg.blob(), new byte[] {0})))
                .isInstanceOf(CodecException.class).hasMessageContaining("1 bytes after the zstd frame");
        assertThatThrownBy(() -> SegmentCodec.unpack(concat(seg.blob(), seg.blob())))
                .isInstanceOf(CodecException.class).hasMessageContaining("after the zstd frame");
        assertThatThrownBy(() -> SegmentCodec.unpack(java.util.Arrays.copyOf(seg.blob(), seg.blob().length - 1)))
                .isInstanceOf(CodecException.class).hasMessageContaining("bad zstd");
    }

    @Test
    void aStreamWithoutContentSizeStillDecodes() throws Exception {
        byte[] raw = rawOf(Frame.of(ID, "t", "payload".getBytes(StandardCharsets.UTF_8)));
        java.io.ByteArrayOutputStream out = new java.io.ByteArrayOutputStream();
        try (com.github.luben.zstd.ZstdOutputStream z = new com.github.luben.zstd.ZstdOutputStream(out, 3)) {
            z.write(raw); // streaming compression writes no content size
        }
        assertThat(SegmentCodec.unpack(out.toByteArray())).containsExactly(Frame.of(ID, "t", "payload".getBytes(StandardCharsets.UTF_8)));
    }

    private static byte[] rawOf(Frame f) {
        PackedSegment seg = SegmentCodec.pack(List.of(f));
        return Zstd.decompress(seg.blob(), seg.rawBytes());
    }

    private static byte[] concat(byte[] a, byte[] b) {
        byte[] out = java.util.Arrays.copyOf(a, a.length + b.length);
        System.arraycopy(b, 0, out, a.length, b.length);
        return out;
    }
}
