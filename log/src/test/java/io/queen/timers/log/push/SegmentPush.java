package io.queen.timers.log.push;

import io.queen.timers.log.codec.PackedSegment;
import java.util.Objects;

/** One packed segment and where it goes. */
public record SegmentPush(Destination destination, PackedSegment segment) {

    public SegmentPush {
        Objects.requireNonNull(destination, "destination");
        Objects.requireNonNull(segment, "segment");
    }
}
