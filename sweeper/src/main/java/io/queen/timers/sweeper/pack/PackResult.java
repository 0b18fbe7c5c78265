package io.queen.timers.sweeper.pack;

import java.util.List;

/**
 * A claim turned into fires, in the order they must run (for one destination, its first chunk's fire comes
 * first), plus the timers that could not be packed (each fails on its own: permanent). The decompressed
 * payload of each packed timer lives in its frame.
 */
public record PackResult(List<FireBatch> fires, List<Unpackable> unpackable) {

    public PackResult {
        fires = List.copyOf(fires);
        unpackable = List.copyOf(unpackable);
    }
}
