package io.queen.timers.core.ops;

import java.util.Optional;

/** One thing /health/ready depends on (the database, the broker, the schema version). */
public interface ReadinessCheck {

    /** Short name shown in the /health/ready body, e.g. "database". */
    String name();

    /** Empty when ready; otherwise one line a person can act on. Must not block for long (bounded by its own timeout). */
    Optional<String> problem();
}
