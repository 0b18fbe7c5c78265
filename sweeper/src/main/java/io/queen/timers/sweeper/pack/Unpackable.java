package io.queen.timers.sweeper.pack;

import io.queen.timers.sweeper.claim.ClaimedTimer;

/** A claimed timer that cannot become a frame (its stored payload does not decompress, its txn is too long, ...). */
public record Unpackable(ClaimedTimer timer, String error) {}
