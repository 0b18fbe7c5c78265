package io.queen.timers.sweeper.fire;

/** The verdict of the fire on one segment (R__timer_fire.sql). */
public enum FireResult {
    /** Pushed into the log; its timers are deleted from the staging table in the same commit. */
    FIRED,
    /**
     * Not pushed: at least one of its timers no longer carried this sweeper's token with a live lease
     * (reclaimed after a lease expiry, or held by somebody else at that instant). Its other timers were
     * released and are claimable in the next cycle.
     */
    STALE,
    /**
     * Not pushed: its destination queue has {@code queen.queues.encryption_enabled} (read in the fire's transaction)
     * and some of its timers were staged in clear. Those ({@link SegmentOutcome#refused()}) were dead-lettered in
     * the same transaction with error {@code encryption_unavailable}, no attempt spent; its other timers were
     * released and fire in the next cycle. No plaintext enters an encrypted queue.
     */
    REFUSED
}
