package io.queen.timers.inspect;

import java.util.Locale;

/** Where a staged timer stands, on PostgreSQL's clock (docs/decisions.md#the-lease-has-two-columns). */
public enum TimerState {
    /** In a sweeper's hands (token and a live lease): a command now answers too_late. */
    CLAIMED,
    /** A failed fire waiting for its retry: no token, so it can be cancelled. */
    BACKOFF,
    /** Visible: the next sweeper cycle takes it (an expired lease also lands here). */
    DUE,
    /** Its delivery time is still ahead. */
    WAITING;

    static TimerState of(String sql) {
        return valueOf(sql.toUpperCase(Locale.ROOT));
    }
}
