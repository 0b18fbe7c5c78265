package io.queen.timers.faults.load;

/** What the generator meant a record to be; the checker compares it with the verdict the bridge gave. */
public enum CommandKind {
    /** A valid schedule, reschedule or cancel. */
    VALID,
    /** Not a valid command: must be answered {@code rejected}, and must stop nothing. */
    HOSTILE,
    /** A valid schedule whose txn the destination refuses on every fire: must end in the DLQ. */
    POISON;
}
