package io.queen.timers.sweeper.pack;

import io.queen.timers.sweeper.claim.ClaimedTimer;
import java.util.List;

/**
 * A claim turned into fires, in the order they must run (for one destination, its first chunk's fire comes
 * first), plus the timers that could not be packed (each fails on its own: permanent) and the timers left
 * for a later cycle because their decompressed payloads would have taken the fire past its byte bound
 * ({@code deferred}: handed back unspent, in claim order, so a destination's order in the log holds). The
 * decompressed payload of each packed timer lives in its frame.
 */
public record PackResult(List<FireBatch> fires, List<Unpackable> unpackable, List<ClaimedTimer> deferred) {

    public PackResult {
        fires = List.copyOf(fires);
        unpackable = List.copyOf(unpackable);
        deferred = List.copyOf(deferred);
    }

    public PackResult(List<FireBatch> fires, List<Unpackable> unpackable) {
        this(fires, unpackable, List.of());
    }
}
