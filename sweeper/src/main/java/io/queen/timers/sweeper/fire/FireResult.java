package io.queen.timers.sweeper.fire;

/** The verdict of the fire on one segment (V033). */
public enum FireResult {
    /** Pushed into the log; its timers are deleted from the staging table in the same commit. */
    FIRED,
    /**
     * Not pushed: at least one of its timers no longer carried this sweeper's token with a live lease
     * (reclaimed after a lease expiry, or held by somebody else at that instant). Its other timers were
     * released and are claimable in the next cycle.
     */
    STALE
}
