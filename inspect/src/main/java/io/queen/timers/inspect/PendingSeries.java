package io.queen.timers.inspect;

import java.time.Instant;

/**
 * A recurring series with a pending occurrence: its key, the occurrence's instant and txn
 * ({@code <series txn>@<instant>}), the row's state and the rule.
 */
public record PendingSeries(String timerKey, Instant nextOccurrence, String txn, TimerState state, Recurring recurring) {}
