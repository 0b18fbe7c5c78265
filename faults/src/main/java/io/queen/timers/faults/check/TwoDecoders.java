package io.queen.timers.faults.check;

import io.queen.timers.faults.decode.DecodeException;
import io.queen.timers.faults.decode.DecodedFrame;
import io.queen.timers.faults.decode.IndependentSegmentDecoder;
import io.queen.timers.log.codec.Frame;
import io.queen.timers.log.codec.SegmentCodec;
import java.util.List;

/**
 * One segment read by both decoders: the harness's own ({@link IndependentSegmentDecoder}, from docs/formats.md) and
 * the product's ({@code SegmentCodec}, which the sweeper writes with and peek, find and Queen-style pops read with).
 * The checker judges the independent reading, so a writer defect the product's reader shares is still seen; it also
 * compares the two, so a reader defect the writer does not share (a misread that would mislead an operator's
 * {@code find}) is seen too. Decoding twice costs the checker a second decompression per segment, once per run.
 *
 * @param frames           the independent decoder's frames, or null when it refused the segment
 * @param productFrames    the product codec's frames in the same terms, or null when it refused the segment
 * @param independentError why it refused, or null
 * @param productError     why the product's codec refused, or null
 */
public record TwoDecoders(List<DecodedFrame> frames, List<DecodedFrame> productFrames, String independentError, String productError) {

    public static TwoDecoders decode(byte[] blob) {
        List<DecodedFrame> ours = null;
        String oursError = null;
        try {
            ours = IndependentSegmentDecoder.decode(blob);
        } catch (DecodeException e) {
            oursError = e.getMessage();
        }
        List<DecodedFrame> theirs = null;
        String theirsError = null;
        try {
            theirs = SegmentCodec.unpack(blob).stream().map(TwoDecoders::asDecoded).toList();
        } catch (RuntimeException e) {
            theirsError = e.toString();
        }
        return new TwoDecoders(ours, theirs, oursError, theirsError);
    }

    /** The product's frame in the harness's terms: the trace id as W3C hex, the UUID's bytes most significant first. */
    static DecodedFrame asDecoded(Frame f) {
        return new DecodedFrame(f.messageId(), f.traceId() == null ? null : f.traceId().toString().replace("-", ""), f.txn(),
                f.producerSub(), f.encrypted(), f.payload());
    }

    /** Both refused, or both read the same frames. */
    public boolean agree() {
        return frames == null ? productFrames == null : frames.equals(productFrames);
    }

    /** Where the two readings part, for a violation's example; null when they agree. */
    public String difference() {
        if (agree()) {
            return null;
        }
        if (frames == null || productFrames == null) {
            return frames == null ? "only the product's codec reads it (" + productFrames.size() + " frames); the independent decoder: "
                    + independentError : "only the independent decoder reads it (" + frames.size() + " frames); the product's codec: " + productError;
        }
        for (int i = 0; i < Math.min(frames.size(), productFrames.size()); i++) {
            if (!frames.get(i).equals(productFrames.get(i))) {
                return "frame " + i + ": independent " + frames.get(i) + ", product " + productFrames.get(i);
            }
        }
        return "independent " + frames.size() + " frames, product " + productFrames.size();
    }
}
