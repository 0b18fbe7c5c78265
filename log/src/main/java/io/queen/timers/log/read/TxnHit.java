package io.queen.timers.log.read;

import java.time.Instant;
import java.util.UUID;

/** Where a txn appears in the log: confirmed by decoding the frame, not only by its hash. */
public record TxnHit(UUID partitionId, String partition, long offset, UUID messageId, Instant createdAt) {}
