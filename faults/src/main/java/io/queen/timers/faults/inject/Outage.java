package io.queen.timers.faults.inject;

/**
 * One fault as it was in effect, on the harness's clock (epoch ms): from the moment it was applied (the kill, the stop,
 * the SIGSTOP, the termination) until its resource worked again (the service logged that it runs, PostgreSQL accepted
 * connections, the broker named leaders, the SIGCONT). The lateness bound under faults is derived from these
 * (check.FaultTimeline), so a fault counts whether or not it bit: a stop of an idle sweeper still stopped it.
 *
 * @param target the process it hit ({@code bridge-1}, {@code postgres}, {@code broker})
 */
public record Outage(FaultKind kind, String target, long startMs, long endMs) {

    public Outage {
        if (endMs < startMs) {
            throw new IllegalArgumentException("an outage ends before it starts: " + kind + " " + startMs + ".." + endMs);
        }
    }
}
