package io.queen.timers.client.command;

import java.util.Optional;

/** The operations a command can name. schedule and reschedule are the same upsert. */
public enum Op {
    SCHEDULE("schedule"),
    RESCHEDULE("reschedule"),
    CANCEL("cancel");

    private final String wireName;

    Op(String wireName) {
        this.wireName = wireName;
    }

    public String wireName() {
        return wireName;
    }

    public boolean upserts() {
        return this != CANCEL;
    }

    public static Optional<Op> fromWire(String name) {
        for (Op op : values()) {
            if (op.wireName.equals(name)) {
                return Optional.of(op);
            }
        }
        return Optional.empty();
    }
}
