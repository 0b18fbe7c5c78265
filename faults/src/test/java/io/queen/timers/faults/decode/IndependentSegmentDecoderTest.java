package io.queen.timers.faults.decode;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.github.luben.zstd.Zstd;
import com.github.luben.zstd.ZstdCompressCtx;
import io.queen.timers.faults.check.TwoDecoders;
import java.util.HexFormat;
import java.util.List;
import java.util.UUID;
import org.junit.jupiter.api.Test;

/**
 * The decoder against bytes assembled by hand from docs/formats.md's table, and against each error the document names
 * (a frame running past the buffer, a body shorter than its fixed part, unknown flags, invalid UTF-8, trailing bytes),
 * plus the zstd frame's shape (one frame, content size in the header, no checksum).
 */
class IndependentSegmentDecoderTest {

    /** One frame, field by field from the table: flags 3, then id, trace id, txn "t1", sub "s", payload "{}". */
    private static final String FRAME = "2a000000" + "03" + "0193a1b2c3d47e5f8a6b7c8d9e0f1a2b" + "4bf92f3577b34da6a3ce929d0e0e4736"
            + "0200" + "7431" + "0100" + "73" + "7b7d";

    @Test
    void aFrameAssembledFromTheTableReadsAsItsFieldsByBothDecoders() {
        byte[] raw = hex(FRAME + FRAME.replace("7b7d", "5b5d"));
        TwoDecoders read = TwoDecoders.decode(Zstd.compress(raw, 3));

        assertThat(read.agree()).as(String.valueOf(read.difference())).isTrue();
        assertThat(read.frames()).hasSize(2);
        DecodedFrame f = read.frames().get(0);
        assertThat(f.messageId()).isEqualTo(UUID.fromString("0193a1b2-c3d4-7e5f-8a6b-7c8d9e0f1a2b"));
        assertThat(f.traceId()).isEqualTo("4bf92f3577b34da6a3ce929d0e0e4736");
        assertThat(f.txn()).isEqualTo("t1");
        assertThat(f.producerSub()).isEqualTo("s");
        assertThat(f.encrypted()).isFalse();
        assertThat(f.payloadText()).isEqualTo("{}");
        assertThat(read.frames().get(1).payloadText()).isEqualTo("[]");
    }

    @Test
    void anEmptyBodyPartIsAFieldOfLengthZero() {
        // flags 0, txn "" and no payload: the fixed part alone (19 bytes).
        List<DecodedFrame> fs = IndependentSegmentDecoder.frames(hex("13000000" + "00" + "0193a1b2c3d47e5f8a6b7c8d9e0f1a2b" + "0000"));
        assertThat(fs).containsExactly(DecodedFrame.of(UUID.fromString("0193a1b2-c3d4-7e5f-8a6b-7c8d9e0f1a2b"), "", new byte[0]));
    }

    @Test
    void eachErrorTheDocumentNamesIsRefusedAtItsByte() {
        String id = "0193a1b2c3d47e5f8a6b7c8d9e0f1a2b";
        assertRefused(FRAME.replaceFirst("2a000000", "2b000000"), "byte 0: frame 0's body_len 43 runs past the segment");
        assertRefused("12000000" + "00" + id + "00", "byte 4: frame 0's body of 18 bytes is shorter than its fixed part");
        assertRefused("13000000" + "08" + id + "0000", "byte 4: frame 0 has unknown flags 1000");
        assertRefused("15000000" + "00" + id + "0200" + "c328", "byte 23: frame 0's txn is not valid UTF-8");
        assertRefused("13000000" + "01" + id + "0000", "byte 21: frame 0's trace id (16 bytes) runs past its body");
        assertRefused("14000000" + "02" + id + "0000" + "00", "byte 23: frame 0's sub_len (2 bytes) runs past its body");
        assertRefused("13000000" + "00" + id + "0100", "byte 23: frame 0's txn (1 bytes) runs past its body");
        assertRefused(FRAME + "000000", "byte 46: 3 trailing bytes");
    }

    @Test
    void theSegmentIsOneZstdFrameWithItsContentSizeAndNoChecksum() {
        byte[] raw = hex(FRAME);
        assertThat(IndependentSegmentDecoder.decode(Zstd.compress(raw, 3))).hasSize(1);
        try (ZstdCompressCtx ctx = new ZstdCompressCtx()) {
            ctx.setLevel(3).setChecksum(true);
            assertThatThrownBy(() -> IndependentSegmentDecoder.decode(ctx.compress(raw))).hasMessageContaining("checksum");
        }
        try (ZstdCompressCtx ctx = new ZstdCompressCtx()) {
            ctx.setLevel(3).setContentSize(false);
            assertThatThrownBy(() -> IndependentSegmentDecoder.decode(ctx.compress(raw))).hasMessageContaining("no content size");
        }
        byte[] one = Zstd.compress(raw, 3);
        byte[] two = new byte[one.length * 2];
        System.arraycopy(one, 0, two, 0, one.length);
        System.arraycopy(one, 0, two, one.length, one.length);
        assertThatThrownBy(() -> IndependentSegmentDecoder.decode(two)).hasMessageContaining("bytes after the zstd frame");
        assertThatThrownBy(() -> IndependentSegmentDecoder.decode(raw)).hasMessageContaining("is not a zstd frame's");
    }

    @Test
    void onlyVersion7WithTheRfcVariantIsAUuidV7() {
        assertThat(DecodedFrame.isUuidV7(UUID.fromString("0193a1b2-c3d4-7e5f-8a6b-7c8d9e0f1a2b"))).isTrue();
        assertThat(DecodedFrame.isUuidV7(UUID.fromString("2f1c7a4e-9b3d-4c2a-8e5f-0a1b2c3d4e5f"))).as("v4").isFalse();
        assertThat(DecodedFrame.isUuidV7(UUID.fromString("0193a1b2-c3d4-7e5f-ca6b-7c8d9e0f1a2b"))).as("variant 110").isFalse();
        assertThat(DecodedFrame.isUuidV7(UUID.fromString("0193a1b2-c3d4-6e5f-8a6b-7c8d9e0f1a2b"))).as("v6").isFalse();
    }

    private static void assertRefused(String rawHex, String message) {
        assertThatThrownBy(() -> IndependentSegmentDecoder.frames(hex(rawHex))).isInstanceOf(DecodeException.class)
                .hasMessageStartingWith(message);
    }

    private static byte[] hex(String s) {
        return HexFormat.of().parseHex(s);
    }
}
