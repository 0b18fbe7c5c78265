package io.queen.timers.sweeper.pack;

import io.queen.timers.log.codec.CodecException;
import io.queen.timers.log.codec.Frame;
import io.queen.timers.log.codec.PackedSegment;
import io.queen.timers.log.codec.SegmentCodec;
import io.queen.timers.log.push.Destination;
import io.queen.timers.sweeper.claim.ClaimedTimer;
import java.util.ArrayList;
import java.util.IdentityHashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Turns a claim into fires, outside any transaction (docs/architecture.md#transaction-boundaries):
 * <ol>
 *   <li>group by (tenant, queue, partition), never by (queue, partition) alone, keeping claim order
 *       (= pre-claim visible_at order = the order the timers enter the log);</li>
 *   <li>decompress {@code payload_zstd} payloads (never decrypt) and build one frame per timer;</li>
 *   <li>split a destination into chunks of at most {@code maxFireBytes} raw bytes and pack each chunk
 *       (one zstd stream, txn hashes) with the log's one codec;</li>
 *   <li>lay the chunks out as fires: fire k holds the k-th chunk of every destination (so no fire has two
 *       segments of one destination, and a destination's chunks fire in order), cut further so no fire
 *       carries more than {@code maxFireBytes} of blobs.</li>
 * </ol>
 * A timer that cannot become a frame (its stored payload does not decompress, its txn does not fit the
 * frame format) is set aside as {@link Unpackable}: it fails alone and holds back nobody.
 */
public final class Packer {

    private final int maxFireBytes;

    public Packer(int maxFireBytes) {
        this.maxFireBytes = maxFireBytes;
    }

    public PackResult pack(List<ClaimedTimer> claimed) {
        List<Unpackable> unpackable = new ArrayList<>();
        Map<Destination, List<ClaimedTimer>> groups = new LinkedHashMap<>();
        Map<ClaimedTimer, Frame> frames = new IdentityHashMap<>();
        for (ClaimedTimer t : claimed) {
            try {
                frames.put(t, new Frame(t.messageId(), t.traceId(), t.txn(), t.producerSub(), t.encrypted(), Payloads.of(t, Payloads.MAX_DECOMPRESSED_BYTES)));
            } catch (IllegalArgumentException e) {
                unpackable.add(new Unpackable(t, e.getMessage()));
                continue;
            }
            groups.computeIfAbsent(new Destination(t.tenantId(), t.queue(), t.partition()), d -> new ArrayList<>()).add(t);
        }
        List<List<Segment>> rounds = new ArrayList<>();
        for (Map.Entry<Destination, List<ClaimedTimer>> g : groups.entrySet()) {
            int round = 0;
            for (List<ClaimedTimer> chunk : chunks(g.getValue(), frames)) {
                Segment s = segment(g.getKey(), chunk, chunk.stream().map(frames::get).toList(), unpackable);
                if (s == null) {
                    continue;
                }
                if (rounds.size() == round) {
                    rounds.add(new ArrayList<>());
                }
                rounds.get(round++).add(s);
            }
        }
        List<FireBatch> fires = new ArrayList<>();
        for (List<Segment> round : rounds) {
            List<Segment> current = new ArrayList<>();
            long bytes = 0;
            for (Segment s : round) {
                int len = s.packed().blob().length;
                if (!current.isEmpty() && bytes + len > maxFireBytes) {
                    fires.add(new FireBatch(current));
                    current = new ArrayList<>();
                    bytes = 0;
                }
                current.add(s);
                bytes += len;
            }
            if (!current.isEmpty()) {
                fires.add(new FireBatch(current));
            }
        }
        return new PackResult(fires, unpackable);
    }

    /** The two halves of a segment, each packed on its own, first half first (to isolate a poisoned timer). */
    public List<Segment> halves(Segment s) {
        int mid = s.size() / 2;
        List<Unpackable> ignored = new ArrayList<>();
        Segment first = segment(s.destination(), s.timers().subList(0, mid), s.frames().subList(0, mid), ignored);
        Segment second = segment(s.destination(), s.timers().subList(mid, s.size()), s.frames().subList(mid, s.size()), ignored);
        if (!ignored.isEmpty()) {
            throw new IllegalStateException("frames that packed together do not pack in halves: " + ignored);
        }
        return List.of(first, second);
    }

    private List<List<ClaimedTimer>> chunks(List<ClaimedTimer> timers, Map<ClaimedTimer, Frame> frames) {
        List<List<ClaimedTimer>> out = new ArrayList<>();
        List<ClaimedTimer> current = new ArrayList<>();
        long bytes = 0;
        for (ClaimedTimer t : timers) {
            long size = SegmentCodec.rawBytesAtMost(frames.get(t)); // an upper bound: chunks never exceed the limit
            if (!current.isEmpty() && bytes + size > maxFireBytes) {
                out.add(current);
                current = new ArrayList<>();
                bytes = 0;
            }
            current.add(t);
            bytes += size;
        }
        if (!current.isEmpty()) {
            out.add(current);
        }
        return out;
    }

    /**
     * Packs one chunk. When the codec refuses the chunk, each frame is tried alone so that only the
     * offending timers are set aside; null when nothing of the chunk packs.
     */
    private static Segment segment(Destination d, List<ClaimedTimer> timers, List<Frame> frames, List<Unpackable> unpackable) {
        try {
            return new Segment(d, timers, frames, SegmentCodec.pack(frames));
        } catch (CodecException whole) {
            List<ClaimedTimer> good = new ArrayList<>();
            List<Frame> goodFrames = new ArrayList<>();
            for (int i = 0; i < frames.size(); i++) {
                try {
                    SegmentCodec.pack(List.of(frames.get(i)));
                    good.add(timers.get(i));
                    goodFrames.add(frames.get(i));
                } catch (CodecException e) {
                    unpackable.add(new Unpackable(timers.get(i), "timer " + timers.get(i).name() + " cannot be framed: " + e.getMessage()));
                }
            }
            if (good.isEmpty()) {
                return null;
            }
            PackedSegment packed = SegmentCodec.pack(goodFrames);
            return new Segment(d, good, goodFrames, packed);
        }
    }
}
