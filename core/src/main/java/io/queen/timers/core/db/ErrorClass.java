package io.queen.timers.core.db;

/** What a database error means for the work that met it. */
public enum ErrorClass {
    /** Retry later, spend no attempt: the data is fine, the moment was not (deadlock, lost connection, overload). */
    TRANSIENT,
    /** Retry with backoff and spend an attempt: the statement itself fails for this data. */
    PERMANENT
}
