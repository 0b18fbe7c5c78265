package io.queen.timers.sweeper.pack;

import io.queen.timers.log.codec.Frame;
import io.queen.timers.log.codec.PackedSegment;
import io.queen.timers.log.push.Destination;
import io.queen.timers.sweeper.claim.ClaimedTimer;
import java.util.List;

/**
 * One packed segment for one destination: its timers in claim order (= frame order = offset order)
 * and the frames they became. {@code packed} is what the fire pushes.
 */
public record Segment(Destination destination, List<ClaimedTimer> timers, List<Frame> frames, PackedSegment packed) {

    public Segment {
        timers = List.copyOf(timers);
        frames = List.copyOf(frames);
        if (timers.size() != frames.size() || packed.count() != frames.size()) {
            throw new IllegalArgumentException("a segment has one frame per timer");
        }
    }

    public int size() {
        return timers.size();
    }
}
