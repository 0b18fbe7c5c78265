package io.queen.timers.faults.decode;

import static io.queen.timers.faults.decode.SegmentVectors.LOG_PUSH;
import static io.queen.timers.faults.decode.SegmentVectors.LOG_PUSH_FRAMES;
import static io.queen.timers.faults.decode.SegmentVectors.PRODUCT;
import static io.queen.timers.faults.decode.SegmentVectors.PRODUCT_FRAMES;
import static io.queen.timers.faults.decode.SegmentVectors.TRACE;
import static org.assertj.core.api.Assertions.assertThat;

import com.dynatrace.hash4j.hashing.HashValue128;
import com.dynatrace.hash4j.hashing.Hashing;
import io.queen.timers.faults.check.TwoDecoders;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.junit.jupiter.api.Test;

/**
 * The committed segments (issue 38 point 3) read by both decoders, the harness's own (from docs/formats.md) and the
 * product's: the same frames, and the fixed values written into {@link SegmentVectors}. A defect the product's writer
 * and reader share changes the committed bytes' reading by one decoder and not the other; one they do not share shows
 * here too. The bytes are the committed ones only: nothing here packs.
 */
class SegmentVectorsTest {

    @Test
    void theProductsPackReadsTheSameWithBothDecoders() {
        Map<String, String> v = SegmentVectors.read(PRODUCT);
        TwoDecoders read = TwoDecoders.decode(SegmentVectors.hex(v.get("blob")));

        assertThat(read.independentError()).isNull();
        assertThat(read.productError()).isNull();
        assertThat(read.agree()).as(String.valueOf(read.difference())).isTrue();
        assertThat(read.frames()).hasSize(Integer.parseInt(v.get("frames"))).containsExactlyElementsOf(PRODUCT_FRAMES);
        // The same values spelled out, so a change of PRODUCT_FRAMES alone cannot move them.
        DecodedFrame plain = read.frames().get(0);
        assertThat(plain.messageId()).isEqualTo(UUID.fromString("0193a1b2-c3d4-7e5f-8a6b-7c8d9e0f1a2b"));
        assertThat(plain.traceId()).isNull();
        assertThat(plain.txn()).isEqualTo("remind-order-42");
        assertThat(plain.producerSub()).isNull();
        assertThat(plain.encrypted()).isFalse();
        assertThat(plain.payloadText()).isEqualTo("{\"orderId\":42}");
        assertThat(read.frames().get(1).traceId()).isEqualTo("4bf92f3577b34da6a3ce929d0e0e4736");
        assertThat(read.frames().get(2).txn()).isEqualTo("zahlung-ü-€-😀");
        assertThat(read.frames().get(2).producerSub()).isEqualTo("svc:billing");
        DecodedFrame allFlags = read.frames().get(3);
        assertThat(allFlags.traceId()).isEqualTo(TRACE);
        assertThat(allFlags.txn()).isEmpty();
        assertThat(allFlags.producerSub()).isEqualTo("sub");
        assertThat(allFlags.encrypted()).isTrue();
        assertThat(allFlags.payload()).isEmpty();
        assertThat(read.frames().get(4).payloadText()).hasSize(410).startsWith("{\"pad\":\"abab");
        assertThat(read.frames()).allSatisfy(f -> assertThat(DecodedFrame.isUuidV7(f.messageId())).as(f.toString()).isTrue());
    }

    @Test
    void aSegmentAsLogPushV1StoredItReadsTheSameWithBothDecoders() {
        Map<String, String> v = SegmentVectors.read(LOG_PUSH);
        TwoDecoders read = TwoDecoders.decode(SegmentVectors.hex(v.get("blob")));

        assertThat(read.agree()).as(String.valueOf(read.difference())).isTrue();
        assertThat(read.frames()).containsExactlyElementsOf(LOG_PUSH_FRAMES);
        assertThat(read.frames()).extracting(DecodedFrame::txn).containsExactly("push-a", "push-b", "push-c");
        assertThat(read.frames()).extracting(DecodedFrame::payloadText).containsExactly("{\"k\":\"a\"}", "{\"k\":\"b\"}", "[1,2,3]");
        assertThat(read.frames().get(2).messageId()).isEqualTo(UUID.fromString("0193a1b3-0000-7002-8000-00000000000c"));
        // Pushed after a segment of one frame: offsets 1..3, one per frame (docs/formats.md "Log segment").
        assertThat(Long.parseLong(v.get("base_offset"))).isEqualTo(1);
        assertThat(Long.parseLong(v.get("end_offset"))).isEqualTo(3);
        assertThat(Instant.parse(v.get("created_at"))).isAfter(Instant.parse("2026-01-01T00:00:00Z"));
        // log_txns.hashes: XXH3-128, seed 0, of each txn's UTF-8, 16 bytes big-endian, in frame order ("Txn hashes").
        ByteBuffer expected = ByteBuffer.allocate(16 * read.frames().size());
        for (DecodedFrame f : read.frames()) {
            HashValue128 h = Hashing.xxh3_128().hashBytesTo128Bits(f.txn().getBytes(StandardCharsets.UTF_8));
            expected.putLong(h.getMostSignificantBits()).putLong(h.getLeastSignificantBits());
        }
        assertThat(SegmentVectors.hex(v.get("hashes"))).isEqualTo(expected.array());
    }

    @Test
    void theTxnHashVectorsOfTheFormatHold() {
        assertThat(hex(Hashing.xxh3_128().hashBytesTo128Bits(new byte[0]))).isEqualTo("99aa06d3014798d86001c324468d497f");
        assertThat(hex(Hashing.xxh3_128().hashBytesTo128Bits("txn-0001".getBytes(StandardCharsets.UTF_8))))
                .isEqualTo("e6db1a376171f085299a000943065f9c");
    }

    /**
     * Every byte of a committed blob matters: flipped, the independent decoder refuses the segment or reads other frames.
     * (zstd has no checksum here, so this is the format's own redundancy and the expected values, not a digest.)
     */
    @ParameterizedTest
    @ValueSource(strings = {PRODUCT, LOG_PUSH})
    void aFlippedByteIsNeverReadAsTheCommittedFrames(String vector) {
        byte[] blob = SegmentVectors.hex(SegmentVectors.read(vector).get("blob"));
        List<DecodedFrame> expected = vector.equals(PRODUCT) ? PRODUCT_FRAMES : LOG_PUSH_FRAMES;
        List<String> unnoticed = new ArrayList<>();
        for (int i = 0; i < blob.length; i++) {
            for (int mask : new int[] {0x01, 0x80, 0xFF}) {
                byte[] flipped = blob.clone();
                flipped[i] ^= (byte) mask;
                try {
                    if (IndependentSegmentDecoder.decode(flipped).equals(expected)) {
                        unnoticed.add("byte " + i + " ^ " + Integer.toHexString(mask));
                    }
                } catch (DecodeException refused) {
                    // noticed
                }
            }
        }
        assertThat(unnoticed).isEmpty();
    }

    private static String hex(HashValue128 h) {
        return String.format("%016x%016x", h.getMostSignificantBits(), h.getLeastSignificantBits());
    }
}
