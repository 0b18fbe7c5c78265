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
    private final int maxTimerBytes;
    private final long maxHeldBytes;

    /**
     * @param maxFireBytes  the most bytes of blobs one fire pushes (sweeper.max.fire.bytes)
     * @param maxTimerBytes the most one timer may decompress to when it comes first (alone, if larger than the rest of
     *                      the budget): a timer above it is unpackable, so it fails and dead-letters instead of exhausting the heap
     * @param maxHeldBytes  the most decompressed payload bytes one pack holds (the cycle's bound, sweeper.max.fire.bytes)
     */
    public Packer(int maxFireBytes, int maxTimerBytes, long maxHeldBytes) {
        this.maxFireBytes = maxFireBytes;
        this.maxTimerBytes = Math.max(maxFireBytes, maxTimerBytes);
        this.maxHeldBytes = maxHeldBytes;
    }

    /** A pack bounded per timer by the frame format's limit only (tests and benchmarks that stage what they claim). */
    public Packer(int maxFireBytes) {
        this(maxFireBytes, Payloads.MAX_DECOMPRESSED_BYTES, Long.MAX_VALUE);
    }

    /**
     * Decompresses in claim order while the payloads' declared sizes fit {@code maxHeldBytes}; the first timer
     * may take up to {@code maxTimerBytes}. The claim already stops at that bound (it counts payload_bytes),
     * so this cut only bites on rows whose raw length the claim could not know (staged without payload_bytes): once one
     * timer does not fit, it and every later one are deferred, never reordered. A payload that declares no size
     * is decompressed within what is left of the budget.
     */
    public PackResult pack(List<ClaimedTimer> claimed) {
        List<Unpackable> unpackable = new ArrayList<>();
        List<ClaimedTimer> deferred = new ArrayList<>();
        Map<Destination, List<ClaimedTimer>> groups = new LinkedHashMap<>();
        Map<ClaimedTimer, Frame> frames = new IdentityHashMap<>();
        long held = 0;
        for (ClaimedTimer t : claimed) {
            if (!deferred.isEmpty()) {
                deferred.add(t);
                continue;
            }
            long declared = Payloads.declaredBytes(t);
            boolean first = held == 0;
            if (!first && held + Math.max(0, declared) > maxHeldBytes) {
                deferred.add(t);
                continue;
            }
            byte[] payload;
            try {
                payload = Payloads.of(t, (int) Math.min(maxTimerBytes, first ? maxTimerBytes : maxHeldBytes - held));
            } catch (IllegalArgumentException e) {
                unpackable.add(new Unpackable(t, e.getMessage()));
                continue;
            }
            held += Math.max(1, payload.length);
            frames.put(t, new Frame(t.message().messageId(), t.traceId(), t.message().txn(), t.message().producerSub(), t.payload().encrypted(), payload));
            groups.computeIfAbsent(new Destination(t.key().tenantId(), t.key().queue(), t.message().partition()), d -> new ArrayList<>()).add(t);
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
        return new PackResult(fires, unpackable, deferred);
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
