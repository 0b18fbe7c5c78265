package io.queen.timers.bridge.apply;

import java.util.List;

/** What a batch apply did: committed with one decision per record, or fenced and rolled back. */
public sealed interface Outcome {

    /** Committed: the timers, the outbox rows and the offsets. */
    record Applied(List<Decision> decisions) implements Outcome {}

    /** Rolled back: a partition's stored offset was not the one this consumer sought to. */
    record Fenced(int partitions) implements Outcome {}
}
