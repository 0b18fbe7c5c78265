package io.queen.timers.local;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.Optional;

/** For a {@code fired} audit event: the message as the log holds it, found by its txn. */
interface LogReadback {

    record Found(String human, String json) {}

    Optional<Found> find(JsonNode firedEvent);
}
