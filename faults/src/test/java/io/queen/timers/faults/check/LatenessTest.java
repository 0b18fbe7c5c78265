package io.queen.timers.faults.check;

import static org.assertj.core.api.Assertions.assertThat;

import io.queen.timers.faults.inject.FaultKind;
import io.queen.timers.faults.inject.Outage;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.Test;

/**
 * The bounds on the whole path: from the send (or the command's own instant, if later) to the segment's created_at, and
 * from there to the harness's read of the fired event; the time either spends outside the faults and their recovery
 * budget is held to the fault-free maximum, and the fault-free fires and events to their p99.
 */
class LatenessTest {

    private static final long T = 1_000_000;
    private static final long R = FaultTimeline.RECOVERY_MS;

    /** A broker outage from T+10 s to T+20 s: impaired until T+20 s + the recovery budget. */
    private static final FaultTimeline OUTAGE = FaultTimeline.of(List.of(new Outage(FaultKind.BROKER_KILL, "broker", T + 10_000, T + 20_000)), R);

    private final Findings f = new Findings();
    private final Lateness l = new Lateness(f);
    private final Map<String, Long> reads = new HashMap<>();

    private void fire(String at, long sent, long intended, long created, long read) {
        reads.put(at, read);
        l.fire(Lateness.LATE, at, sent, intended, created, UUID.randomUUID(), "t", at);
    }

    @Test
    void aFireWaitingForAnOutageIsExcusedUntilTheRecoveryBudgetIsSpentAndNotASecondMore() {
        l.observed(reads, Map.of(), Map.of(), OUTAGE, 0);
        // sent at T+9 s, due at once: the outage and its budget cover T+10 s .. T+20 s + R; 1 s before it, 3 s after it allowed
        fire("on-time-after-recovery", T + 9_000, T + 9_000, T + 20_000 + R + 1_900, T + 20_000 + R + 2_000);
        assertThat(f.count(Lateness.LATE)).isZero();
        fire("slow-to-recover", T + 9_000, T + 9_000, T + 20_000 + R + 2_100, T + 20_000 + R + 2_200);
        assertThat(f.count(Lateness.LATE)).isOne();
        assertThat(f.examples().get(Lateness.LATE)).singleElement().asString()
                .contains("slow-to-recover").contains(R + 10_000 + " ms of it within faults").contains("3100 ms outside them");
    }

    @Test
    void lateFromTheSendCountsTheBridgeAndTheBrokerNotOnlyTheSweeper() {
        l.observed(reads, Map.of(), Map.of(), FaultTimeline.none(), 0);
        // due 500 ms after its send, in the log 5 s later with no fault anywhere: the product's whole path was slow
        fire("slow-path", T, T + 500, T + 5_500, T + 5_600);
        assertThat(f.count(Lateness.LATE)).isOne();
        // a deliverAt already past when it was sent: counted from the send, not from the instant it names
        fire("past-instant", T + 60_000, T, T + 60_400, T + 60_500);
        assertThat(f.count(Lateness.LATE)).isOne();
        l.summarize();
        assertThat(f.facts().get("  fault-free: fires, p50 / p99 / max ms")).isEqualTo("2, 400 / 5000 / 5000");
    }

    @Test
    void theFaultFreeP99IsOneSecondAndItsFiresAreCounted() {
        l.observed(reads, Map.of(), Map.of(), FaultTimeline.none(), 100);
        for (int i = 0; i < 100; i++) {
            fire("f" + i, T, T, T + (i < 98 ? 200 : 1_500), T + 2_000);
        }
        l.summarize();
        assertThat(f.count(Lateness.FREE_P99)).isOne();
        assertThat(f.count(Lateness.LATE)).isZero();
        assertThat(f.count(Lateness.TOO_FEW)).isZero();
        assertThat(f.examples().get(Lateness.FREE_P99)).singleElement().asString().contains("p99 1500 ms over 100");
    }

    @Test
    void aRunThatJudgedTooFewFaultFreeFiresFails() {
        l.observed(reads, Map.of(), Map.of(), OUTAGE, 500);
        fire("under-faults", T + 15_000, T + 15_000, T + 16_000, T + 16_100);
        fire("free", T + 90_000, T + 90_000, T + 90_100, T + 90_200);
        l.summarize();
        assertThat(f.count(Lateness.TOO_FEW)).isOne();
        assertThat(f.facts().get("  under faults: fires, p50 / p99 / max ms")).isEqualTo("1, 1000 / 1000 / 1000");
        assertThat(f.facts().get("  fault-free: fires, p50 / p99 / max ms")).isEqualTo("1, 100 / 100 / 100");
    }

    @Test
    void theFiredEventIsHeldToTheSameRule() {
        l.observed(reads, Map.of(), Map.of(), OUTAGE, 0);
        // the fire on time at T+12 s inside the outage; its event read 20 s after the recovery ended: 20 s outside the faults
        fire("stalled-relay", T + 12_000, T + 12_000, T + 12_000, T + 20_000 + R + 20_000);
        // an event read 2.9 s after its fault-free fire: within the max, over the p99
        fire("slow-event", T + 100_000, T + 100_000, T + 100_000, T + 102_900);
        l.summarize();
        assertThat(f.count(Lateness.AUDIT_LATE)).isOne();
        assertThat(f.examples().get(Lateness.AUDIT_LATE)).singleElement().asString().contains("stalled-relay").contains("20000 ms outside them");
        assertThat(f.count(Lateness.AUDIT_FREE_P99)).isOne();
        assertThat(f.count(Lateness.LATE)).isZero();
    }

    @Test
    void aFiredEventTheConsumerNeverReadIsAViolationAndWithoutObservationsNothingIsJudged() {
        l.observed(reads, Map.of(), Map.of(), FaultTimeline.none(), 0);
        l.fire(Lateness.LATE, "unread", T, T, T + 10, UUID.randomUUID(), "t", "never-read");
        assertThat(f.count(Lateness.UNOBSERVED)).isOne();
        Findings g = new Findings();
        Lateness none = new Lateness(g);
        none.fire(Lateness.LATE, "a", T, T, T + 100_000, UUID.randomUUID(), "t", "x");
        none.summarize();
        assertThat(g.clean()).isTrue();
        assertThat(g.facts()).containsEntry("fired event after created_at", "not judged (no live observation)");
    }

    @Test
    void theReportListsTheSlowestFiresLatestFirst() {
        l.observed(reads, Map.of(), Map.of(), FaultTimeline.none(), 0);
        long[] lates = {2_000, 100, 50, 300, 200, 900, 900, 900};
        for (int i = 0; i < lates.length; i++) {
            fire("fire-" + i, T, T, T + lates[i], T + lates[i] + 10);
        }
        l.summarize();
        assertThat(f.facts().get("slowest fire 1")).asString().startsWith("fire-0:");
        for (int i = 2; i <= 4; i++) {
            assertThat(f.facts().get("slowest fire " + i)).asString().contains("created_at 900 ms after");
        }
        assertThat(f.facts().get("slowest fire 5")).asString().startsWith("fire-3:");
        assertThat(f.facts()).doesNotContainKey("slowest fire 6");
    }

    @Test
    void overlappingOutagesMergeAndTheirRecoveryCounts() {
        FaultTimeline t = FaultTimeline.of(List.of(new Outage(FaultKind.PG_FAST, "postgres", 100, 200),
                new Outage(FaultKind.KILL_BRIDGE, "bridge-1", 150, 400), new Outage(FaultKind.PAUSE, "sweeper-1", 1_000, 1_100)), 50);
        assertThat(t.impaired(0, 2_000)).isEqualTo(350 + 150);
        assertThat(t.impaired(300, 1_050)).isEqualTo(150 + 50);
        assertThat(t.clear(451, 999)).isTrue();
        assertThat(t.clear(449, 999)).isFalse();
        assertThat(t.impairedUntilMs()).isEqualTo(1_150);
        assertThat(FaultTimeline.none().clear(0, Long.MAX_VALUE)).isTrue();
    }
}
