package io.queen.timers.faults.check;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Map;
import org.junit.jupiter.api.Test;

/** The declared bound, on the harness's own reads: from the later of the intended instant and the verdict's read. */
class LatenessTest {

    private static final long FAULTS_ENDED = 1_000_000;

    @Test
    void underFaultsAFireMayTakeTheLeasePlusTheBackoffOfItsFailuresPlusTheSlack() {
        long bound = Lateness.LEASE_MS + 2 * Lateness.BACKOFF_MAX_MS + Lateness.UNDER_FAULTS_SLACK_MS;
        Findings f = new Findings();
        Lateness l = new Lateness(f);
        // verdict read at 500 000, intended 400 000: counted from the read (the product had not been given it before)
        l.observed(Map.of("v", 500_000L, "on-time", 500_000L + bound, "late", 500_001L + bound), FAULTS_ENDED);
        l.fire(Lateness.LATE, "a", 400_000, "v", "on-time", 2);
        assertThat(f.count(Lateness.LATE)).isZero();
        l.fire(Lateness.LATE, "b", 400_000, "v", "late", 2);
        assertThat(f.count(Lateness.LATE)).isOne();
        assertThat(f.examples().get(Lateness.LATE)).singleElement().asString().contains("after its verdict was read").contains("2 failed");
    }

    @Test
    void inTheFaultFreeWindowEachFireHasAMaxAndTheirP99ABound() {
        long from = FAULTS_ENDED + Lateness.FAULT_FREE_GRACE_MS;
        Findings f = new Findings();
        Lateness l = new Lateness(f);
        l.observed(Map.of("v", 0L, "slow", from + Lateness.FAULT_FREE_P99_MS + 1, "too-slow", from + Lateness.FAULT_FREE_MAX_MS + 1), FAULTS_ENDED);
        l.fire(Lateness.LATE, "a", from, "v", "slow", 0);
        assertThat(f.count(Lateness.LATE)).isZero();
        l.summarize();
        assertThat(f.count(Lateness.FAULT_FREE_P99)).isOne();
        l.fire(Lateness.LATE, "b", from, "v", "too-slow", 0);
        assertThat(f.count(Lateness.LATE)).isOne();
        // Before the window (under faults) the same lateness passes.
        Findings g = new Findings();
        Lateness m = new Lateness(g);
        m.observed(Map.of("v", 0L, "too-slow", from - 1 + Lateness.FAULT_FREE_MAX_MS + 1), FAULTS_ENDED);
        m.fire(Lateness.LATE, "c", from - 1, "v", "too-slow", 0);
        m.summarize();
        assertThat(g.clean()).isTrue();
    }

    @Test
    void aFireTheHarnessDidNotReadIsAViolationAndWithoutObservationsNothingIsJudged() {
        Findings f = new Findings();
        Lateness l = new Lateness(f);
        l.observed(Map.of("v", 0L), Long.MIN_VALUE);
        l.fire(Lateness.LATE, "a", 0, "v", "never-read", 0);
        assertThat(f.count(Lateness.UNOBSERVED)).isOne();
        Findings g = new Findings();
        Lateness none = new Lateness(g);
        none.fire(Lateness.LATE, "a", 0, "v", "x", 0);
        none.summarize();
        assertThat(g.clean()).isTrue();
        assertThat(g.facts()).containsEntry("observed lateness", "not judged (no live observation)");
    }
}
