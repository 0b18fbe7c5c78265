package io.queen.timers.core.db;

/** What a database error means for the work that met it. */
public enum ErrorClass {
    /** Retry later, spend no attempt: the data is fine, the moment was not (deadlock, lost connection, overload, a lock or statement timeout). */
    TRANSIENT,
    /** Retry with backoff and spend an attempt: the statement itself fails for this data. */
    PERMANENT,
    /**
     * The deployment is wrong, not the data: a function, table or column is missing (schema older or newer
     * than this build, a dropped object) or this role may not use it (a revoked grant). Pause and report;
     * never spend an attempt or dead-letter for it: every timer would fail the same way until an operator acts.
     */
    DEPLOYMENT
}
