package io.queen.timers.sweeper.pack;

import io.queen.timers.sweeper.claim.ClaimedTimer;
import java.util.List;

/**
 * The segments one fire transaction pushes: at most one per destination (the fire rejects two), and
 * at most {@code sweeper.max.fire.bytes} of compressed blobs unless a single segment is larger alone.
 */
public record FireBatch(List<Segment> segments) {

    public FireBatch {
        segments = List.copyOf(segments);
        if (segments.isEmpty()) {
            throw new IllegalArgumentException("a fire pushes at least one segment");
        }
    }

    public static FireBatch of(Segment segment) {
        return new FireBatch(List.of(segment));
    }

    public List<ClaimedTimer> timers() {
        return segments.stream().flatMap(s -> s.timers().stream()).toList();
    }

    public long blobBytes() {
        return segments.stream().mapToLong(s -> s.packed().blob().length).sum();
    }
}
