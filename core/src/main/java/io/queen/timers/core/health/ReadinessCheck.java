package io.queen.timers.core.health;

import java.util.Optional;
import java.util.function.Supplier;

/** One thing /health/ready depends on (the database, the broker, the schema version). */
public interface ReadinessCheck {

    /** Short name shown in the /health/ready body, e.g. "database". */
    String name();

    /** Empty when ready; otherwise one line a person can act on. Must not block for long (bounded by its own timeout). */
    Optional<String> problem();

    /** A check answered by {@code problem}, which must answer from memory. */
    static ReadinessCheck of(String name, Supplier<Optional<String>> problem) {
        return new ReadinessCheck() {
            @Override
            public String name() {
                return name;
            }

            @Override
            public Optional<String> problem() {
                return problem.get();
            }
        };
    }
}
