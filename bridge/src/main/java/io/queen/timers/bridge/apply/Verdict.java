package io.queen.timers.bridge.apply;

/** The closed taxonomy of command outcomes (docs/commands.md#verdicts). Each is one audit event type. */
public enum Verdict {
    /** schedule or reschedule of a timer that did not exist: a new timer with a new message id. */
    SCHEDULED("scheduled"),
    /** schedule or reschedule of a pending timer: replaced (time, txn, payload), attempts and lease reset, message id kept. */
    RESCHEDULED("rescheduled"),
    /** cancel of a pending timer (also one backing off after a failed fire): deleted. */
    CANCELLED("cancelled"),
    /** cancel of a timer that is not pending: never scheduled, cancelled already, or ALREADY DELIVERED (no tombstone). */
    ABSENT("absent"),
    /** the timer is in somebody's hands (a sweeper holds a live lease): nothing changed. */
    TOO_LATE("too_late"),
    /** the record is not a valid command; see its reason. */
    REJECTED("rejected");

    private final String wireName;

    Verdict(String wireName) {
        this.wireName = wireName;
    }

    public String wireName() {
        return wireName;
    }
}
