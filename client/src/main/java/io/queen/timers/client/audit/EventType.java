package io.queen.timers.client.audit;

import java.util.Optional;

/** The {@code type} of an audit event: the closed list (docs/formats.md#audit-events-on-the-topic). */
public enum EventType {
    SCHEDULED("scheduled"),
    RESCHEDULED("rescheduled"),
    CANCELLED("cancelled"),
    ABSENT("absent"),
    TOO_LATE("too_late"),
    REJECTED("rejected"),
    FIRED("fired"),
    RETRYING("retrying"),
    DEAD_LETTERED("dead_lettered"),
    /**
     * A recurring timer's occurrence that was not delivered because its series' catchUp is {@code none} and a later
     * occurrence was already due when the sweeper reached it (docs/commands.md#recurring-timers); carries the next one.
     */
    SKIPPED("skipped"),
    /** An operator (`queen-timers offsets set`) or a new group's bridge.start.position=latest moved a stored offset. */
    OFFSET_MOVED("offset_moved"),
    /** An operator (`queen-timers dead-letters replay|drop`) removed a dead letter: replayed or given up. */
    DEAD_LETTER_REMOVED("dead_letter_removed");

    private final String wireName;

    EventType(String wireName) {
        this.wireName = wireName;
    }

    public String wireName() {
        return wireName;
    }

    /** Whether this type answers one command record (it then carries {@code source}). */
    public boolean isVerdict() {
        return ordinal() <= REJECTED.ordinal();
    }

    public static Optional<EventType> fromWire(String name) {
        for (EventType t : values()) {
            if (t.wireName.equals(name)) {
                return Optional.of(t);
            }
        }
        return Optional.empty();
    }
}
