package io.queen.timers.faults.check;

import static org.assertj.core.api.Assertions.assertThat;

import io.queen.timers.faults.check.SimulatedRun.Mutant;
import io.queen.timers.faults.load.CommandGenerator;
import java.util.Map;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * The checker must be able to fail on every way the product can be wrong: a seeded run of 3,000 commands
 * through a correct model of bridge and sweeper passes, and the same run with any one rule broken
 * ({@link Mutant}) fails, on the violation that names that rule. Pure: no processes, milliseconds.
 */
class CheckerMutationTest {

    private static final long SEED = 20261203;
    private static final int COMMANDS = 3_000;

    @Test
    void theCorrectBehaviourPassesAndMeetsEveryVerdict() {
        SimulatedRun.Result r = SimulatedRun.run(SEED, COMMANDS, Mutant.NONE);
        assertThat(r.findings().clean()).as(examples(r.findings())).isTrue();
        // Every branch of the semantics is exercised, so a mutant that breaks one has something to break.
        assertThat(r.verdicts()).containsKeys("scheduled", "rescheduled", "cancelled", "absent", "too_late", "rejected", "fired", "dead_lettered");
        assertThat(r.verdicts().get("too_late")).isGreaterThan(5);
        assertThat(r.verdicts().get("cancelled")).isGreaterThan(20);
        // Series of both rule kinds and every catch-up policy, some cancelled or rescheduled while they run: the recurring
        // mutants below have fires to break.
        Map<String, Object> facts = r.findings().facts();
        assertThat(((Number) facts.get("recurring series (epochs: a rule from its verdict to its end)")).intValue()).isGreaterThanOrEqualTo(15);
        assertThat(facts.get("  by catchUp").toString()).contains("all=").contains("one=").contains("none=");
        assertThat(facts.get("  cancelled or too_late / rescheduled while running").toString()).doesNotStartWith("0 /").doesNotEndWith("/ 0");
        assertThat(((Number) facts.get("recurring occurrences fired (frames in the log)")).longValue()).isGreaterThan(100);
        assertThat(r.findings().facts().values()).anySatisfy(v -> assertThat(v.toString()).contains("every PT"))
                .anySatisfy(v -> assertThat(v.toString()).contains("cron '"));
    }

    @ParameterizedTest
    @EnumSource(value = Mutant.class, names = {"NONE", "SEND_REPORTED_FAILED_BUT_LANDED"}, mode = EnumSource.Mode.EXCLUDE)
    void everyBrokenBehaviourFails(Mutant mutant) {
        Findings f = SimulatedRun.run(SEED, COMMANDS, mutant).findings();
        assertThat(f.clean()).as(mutant + " must FAIL").isFalse();
        String expected = switch (mutant) {
            case IGNORES_DELAY_MS -> "verdict time is not the command's own time";
            case CANCEL_ABSENT_WHILE_LIVE, SCHEDULE_ANSWERED_CANCELLED, LOST_CANCEL, LOST_RESCHEDULE, TOO_LATE_WITHOUT_AT, RESCHEDULES_FIRED ->
                    "verdicts the semantics do not allow";
            case FIRE_WITHOUT_TOKEN_RECHECK, SEGMENT_PUSHED_TWICE -> "duplicate fires";
            case RECORD_SKIPPED -> "records without a verdict";
            case WRONG_REJECT_REASON -> "hostile records rejected for another reason than intended";
            case FIRES_FIRST_PAYLOAD -> "fired with another payload or txn than its last schedule";
            case SEND_FAILED -> "producer send failures";
            case OCCURRENCE_MISSING -> "recurring: occurrences lost";
            case OCCURRENCE_PUSHED_TWICE -> "recurring: occurrences doubled";
            case NEXT_FROM_NOW -> "recurring: fires off the rule";
            case EVENT_SEQ_FROM_ZERO -> "recurring: fired events wrong";
            case OCCURRENCE_EARLY -> "recurring: occurrences early";
            case SUCCESSOR_ID_NOT_V7 -> "message ids not UUIDv7";
            case FIRES_LATE -> Lateness.LATE;
            case OCCURRENCE_LATE -> RecurringCheck.LATE;
            case CANCELLED_SERIES_GOES_ON -> RecurringCheck.AFTER_END;
            case SKIPS_NOT_YET_DUE -> RecurringCheck.POLICY;
            case NONE, SEND_REPORTED_FAILED_BUT_LANDED -> throw new AssertionError();
        };
        assertThat(f.count(expected)).as(mutant + ": " + examples(f)).isPositive();
    }

    @Test
    void aSendReportedFailedWhoseRecordLandedIsJudgedAndPasses() {
        Findings f = SimulatedRun.run(SEED, COMMANDS, Mutant.SEND_REPORTED_FAILED_BUT_LANDED).findings();
        assertThat(f.clean()).as(examples(f)).isTrue();
        assertThat(f.facts()).containsEntry("commands whose send failed", 1).containsEntry("  of them in the topics all the same (judged)", 1L);
    }

    @ParameterizedTest
    @EnumSource(value = Mutant.class, names = {"LOST_CANCEL", "LOST_RESCHEDULE"})
    void aLostCancelOrRescheduleIsCaughtByItsTimeUnderTheHarnesssOwnWindow(Mutant mutant) {
        // The window is CI's (the harness bridges' statement timeout + clock slack): the timers due 30-60 s out
        // (CommandGenerator.FAR_FRACTION) are what a too_late cannot excuse.
        assertThat(Checker.HARNESS_TOO_LATE_SLACK_MS).isLessThan(CommandGenerator.FAR_MIN_MS);
        Findings f = SimulatedRun.run(SEED, COMMANDS, mutant).findings();
        assertThat(f.examples().get("verdicts the semantics do not allow")).as(examples(f))
                .allSatisfy(e -> assertThat(e).contains("answered too_late").contains("a timer is claimed only when due"));
        assertThat(f.count("verdicts the semantics do not allow")).isGreaterThan(5);
    }

    @ParameterizedTest
    @EnumSource(value = Mutant.class, names = {"FIRES_LATE", "OCCURRENCE_LATE"})
    void minutesLateFailsUnderFaultsTooAndTheCorrectModelMeetsTheBound(Mutant mutant) {
        // Judged against outages of 1 s every minute, each with its recovery budget: 150 s late is past what they excuse.
        Findings correct = SimulatedRun.run(SEED, COMMANDS, Mutant.NONE, true).findings();
        assertThat(correct.clean()).as(examples(correct)).isTrue();
        Findings f = SimulatedRun.run(SEED, COMMANDS, mutant, true).findings();
        String kind = mutant == Mutant.FIRES_LATE ? Lateness.LATE : RecurringCheck.LATE;
        assertThat(f.count(kind)).as(examples(f)).isPositive();
        assertThat(f.examples().get(kind)).allSatisfy(e -> assertThat(e).contains("within faults and their recovery").contains("outside them"));
    }

    @Test
    void theCorrectModelsFiresAreAllJudgedFaultFree() {
        Findings f = SimulatedRun.run(SEED, COMMANDS, Mutant.NONE).findings();
        String free = f.facts().get("  fault-free: fires, p50 / p99 / max ms").toString();
        assertThat(Integer.parseInt(free.substring(0, free.indexOf(',')))).isGreaterThan(500);
        assertThat(f.count(Lateness.UNOBSERVED)).isZero();
    }

    @Test
    void aTooLateWithoutItsTimeIsAViolation() {
        Findings f = SimulatedRun.run(SEED, COMMANDS, Mutant.TOO_LATE_WITHOUT_AT).findings();
        assertThat(f.examples().get("verdicts the semantics do not allow")).as(examples(f))
                .allSatisfy(e -> assertThat(e).contains("without an at"));
    }

    @Test
    void aBridgeThatIgnoresDelayMsFiresEarlyAgainstTheCommandsOwnTime() {
        // Not only its announced time is wrong: its fires are early against record timestamp + delayMs.
        assertThat(SimulatedRun.run(SEED, COMMANDS, Mutant.IGNORES_DELAY_MS).findings().count("early fires")).isPositive();
    }

    private static String examples(Findings f) {
        return f.violations().entrySet().stream().filter(e -> e.getValue() > 0)
                .map(e -> e.getKey() + "=" + e.getValue() + " " + f.examples().getOrDefault(e.getKey(), java.util.List.of()))
                .collect(Collectors.joining("\n"));
    }
}
