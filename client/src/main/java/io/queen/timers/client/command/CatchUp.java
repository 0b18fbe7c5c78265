package io.queen.timers.client.command;

import java.util.Optional;

/**
 * What a recurring timer does with the occurrences an outage made it miss (docs/commands.md#recurring-timers);
 * the wire values are {@link WireFormat#CATCH_UP_POLICIES}.
 */
public enum CatchUp {
    /** Fire one late occurrence now, then resume the rule at the first occurrence still ahead (the default). */
    ONE("one"),
    /** Fire every missed occurrence, at most {@value WireFormat#CATCH_UP_ALL_MAX} after one outage; older ones are skipped. */
    ALL("all"),
    /** Deliver none of the missed occurrences: a {@code skipped} event names them, and the rule resumes. */
    NONE("none");

    private final String wireName;

    CatchUp(String wireName) {
        this.wireName = wireName;
    }

    public String wireName() {
        return wireName;
    }

    public static Optional<CatchUp> fromWire(String name) {
        for (CatchUp c : values()) {
            if (c.wireName.equals(name)) {
                return Optional.of(c);
            }
        }
        return Optional.empty();
    }
}
