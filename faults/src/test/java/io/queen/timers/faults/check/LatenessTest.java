package io.queen.timers.faults.check;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.Test;

/**
 * The declared bounds, on the harness's own observations: from the later of the intended instant and the verdict's read,
 * to the log watch's sight of the frame (the fire) and to the consumer's read of its fired event (the audit event).
 */
class LatenessTest {

    private static final long FAULTS_ENDED = 1_000_000;
    private static final UUID ON_TIME = UUID.randomUUID();
    private static final UUID LATE = UUID.randomUUID();

    @Test
    void underFaultsAFireMayTakeTheLeasePlusTheBackoffOfItsFailuresPlusTheSlack() {
        long bound = Lateness.LEASE_MS + 2 * Lateness.BACKOFF_MAX_MS + Lateness.UNDER_FAULTS_SLACK_MS;
        Findings f = new Findings();
        Lateness l = new Lateness(f);
        // staged (seen in the staging table) at 500 000, intended 400 000: counted from the staging (the product had not
        // been given it before)
        l.observed(Map.of("v", 500_000L, "e1", 500_000L + bound + 10, "e2", 500_001L + bound + 10),
                Map.of(ON_TIME, 500_000L + bound, LATE, 500_001L + bound),
                Map.of(LogWatch.staging(ON_TIME, "t"), 500_000L, LogWatch.staging(LATE, "t"), 500_000L), FAULTS_ENDED);
        l.fire(Lateness.LATE, "a", 400_000, "v", ON_TIME, "t", "e1", 2);
        assertThat(f.count(Lateness.LATE)).isZero();
        l.fire(Lateness.LATE, "b", 400_000, "v", LATE, "t", "e2", 2);
        assertThat(f.count(Lateness.LATE)).isOne();
        assertThat(f.examples().get(Lateness.LATE)).singleElement().asString().contains("after it was staged").contains("2 failed");
    }

    @Test
    void aVerdictReadLateDoesNotExcuseALateFireTheStagingDoes() {
        long bound = Lateness.LEASE_MS + Lateness.UNDER_FAULTS_SLACK_MS;
        Findings f = new Findings();
        Lateness l = new Lateness(f);
        // staged on time (seen at 400 500); its verdict read 50 s later (the broker away); the fire seen past the bound
        // from the staging: late, though not 50 s later than the verdict's read
        l.observed(Map.of("v", 450_000L, "e1", 400_500L + bound + 2),
                Map.of(LATE, 400_500L + bound + 1), Map.of(LogWatch.staging(LATE, "t"), 400_500L), FAULTS_ENDED);
        l.fire(Lateness.LATE, "a", 400_000, "v", LATE, "t", "e1", 0);
        assertThat(f.count(Lateness.LATE)).isOne();
        // staged and fired within one poll (never seen staged): from the earlier of the verdict's read and the fire's sight
        Findings g = new Findings();
        Lateness m = new Lateness(g);
        m.observed(Map.of("v", 600_000L, "e1", 600_001L), Map.of(LATE, 500_100L), Map.of(), FAULTS_ENDED);
        m.fire(Lateness.LATE, "b", 400_000, "v", LATE, "t", "e1", 0);
        m.summarize();
        assertThat(g.clean()).isTrue();
        assertThat(g.facts().get("observed lateness into the log p50 / p99 / max ms")).isEqualTo("0 / 0 / 0");
    }

    @Test
    void underFaultsTheAuditEventMayWaitForTheBrokerButNotForever() {
        Findings f = new Findings();
        Lateness l = new Lateness(f);
        // the fire on time; its event read 2 minutes later (the broker away): passes; past the bound: a stalled relay
        l.observed(Map.of("v", 0L, "waited", 1_000L + 120_000, "stalled", 1_000L + Lateness.AUDIT_UNDER_FAULTS_MS + 1),
                Map.of(ON_TIME, 1_000L, LATE, 1_000L), Map.of(), FAULTS_ENDED);
        l.fire(Lateness.LATE, "a", 0, "v", ON_TIME, "t", "waited", 0);
        assertThat(f.clean()).isTrue();
        l.fire(Lateness.LATE, "b", 0, "v", LATE, "t", "stalled", 0);
        assertThat(f.count(Lateness.AUDIT_LATE)).isOne();
        assertThat(f.count(Lateness.LATE)).isZero();
    }

    @Test
    void inTheFaultFreeWindowEachFiredEventHasAMaxAndTheirP99ABound() {
        long from = FAULTS_ENDED + Lateness.FAULT_FREE_GRACE_MS;
        Findings f = new Findings();
        Lateness l = new Lateness(f);
        l.observed(Map.of("v", 0L, "slow", from + Lateness.FAULT_FREE_P99_MS + 1, "too-slow", from + Lateness.FAULT_FREE_MAX_MS + 1),
                Map.of(ON_TIME, from + 100, LATE, from + 100), Map.of(), FAULTS_ENDED);
        l.fire(Lateness.LATE, "a", from, "v", ON_TIME, "t", "slow", 0);
        assertThat(f.count(Lateness.LATE)).isZero();
        l.summarize();
        assertThat(f.count(Lateness.FAULT_FREE_P99)).isOne();
        l.fire(Lateness.LATE, "b", from, "v", LATE, "t", "too-slow", 0);
        assertThat(f.count(Lateness.LATE)).isOne();
        // Before the window (under faults) the same lateness passes.
        Findings g = new Findings();
        Lateness m = new Lateness(g);
        m.observed(Map.of("v", 0L, "too-slow", from - 1 + Lateness.FAULT_FREE_MAX_MS + 1), Map.of(ON_TIME, from + 100), Map.of(), FAULTS_ENDED);
        m.fire(Lateness.LATE, "c", from - 1, "v", ON_TIME, "t", "too-slow", 0);
        m.summarize();
        assertThat(g.clean()).isTrue();
    }

    @Test
    void aFireTheHarnessDidNotSeeOrReadIsAViolationAndWithoutObservationsNothingIsJudged() {
        Findings f = new Findings();
        Lateness l = new Lateness(f);
        l.observed(Map.of("v", 0L, "e", 5L), Map.of(ON_TIME, 1L), Map.of(), Long.MIN_VALUE);
        l.fire(Lateness.LATE, "a", 0, "v", ON_TIME, "t", "never-read", 0);
        l.fire(Lateness.LATE, "b", 0, "v", LATE, "t", "e", 0);
        assertThat(f.count(Lateness.UNOBSERVED)).isEqualTo(2);
        assertThat(f.examples().get(Lateness.UNOBSERVED)).anySatisfy(e -> assertThat(e).contains("not seen in the log"));
        Findings g = new Findings();
        Lateness none = new Lateness(g);
        none.fire(Lateness.LATE, "a", 0, "v", ON_TIME, "t", "x", 0);
        none.summarize();
        assertThat(g.clean()).isTrue();
        assertThat(g.facts()).containsEntry("observed lateness", "not judged (no live observation)");
    }

    @Test
    void theReportListsTheSlowestFiresLatestFirstTiesIncluded() {
        Findings f = new Findings();
        Lateness l = new Lateness(f);
        // eight fires: three 900 ms late (a tie, after five others were kept), one 2 s, the rest quicker; the five slowest
        // are listed, latest first
        long[] lates = {2_000, 100, 50, 300, 200, 900, 900, 900};
        Map<String, Long> reads = new java.util.HashMap<>(Map.of("v", 0L));
        Map<UUID, Long> seen = new java.util.HashMap<>();
        UUID[] ids = new UUID[lates.length];
        for (int i = 0; i < lates.length; i++) {
            ids[i] = UUID.randomUUID();
            seen.put(ids[i], lates[i]);
            reads.put("e" + i, lates[i] + 10);
        }
        l.observed(reads, seen, Map.of(), FAULTS_ENDED);
        for (int i = 0; i < lates.length; i++) {
            l.fire(Lateness.LATE, "fire-" + i, 0, "v", ids[i], "t", "e" + i, 0);
        }
        l.summarize();
        assertThat(f.facts().get("slowest fire 1")).asString().startsWith("fire-0:");
        for (int i = 2; i <= 4; i++) {
            assertThat(f.facts().get("slowest fire " + i)).asString().contains("in the log 900 ms");
        }
        assertThat(f.facts().get("slowest fire 5")).asString().startsWith("fire-3:");
        assertThat(f.facts()).doesNotContainKey("slowest fire 6");
    }
}
