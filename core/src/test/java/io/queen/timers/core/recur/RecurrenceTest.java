package io.queen.timers.core.recur;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.queen.timers.core.recur.Recurrence.End;
import io.queen.timers.core.recur.Recurrence.Plan;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;

class RecurrenceTest {

    private static final Instant T0 = Instant.parse("2026-12-04T10:00:00Z");

    private static Recurrence every(String every, String start, Long max, String catchUp) {
        return Recurrence.of(new Recurrence.Spec(null, null, every, start, null, max, catchUp), "s", T0);
    }

    private static Recurrence cron(String cron, String zone, String start, String end) {
        return Recurrence.of(new Recurrence.Spec(cron, zone, null, start, end, null, "all"), "s", T0);
    }

    private static List<Instant> occurrences(Recurrence r, int limit) {
        List<Instant> out = new ArrayList<>();
        Optional<Instant> o = r.first();
        while (o.isPresent() && out.size() < limit) {
            out.add(o.get());
            o = r.after(o.get());
        }
        return out;
    }

    @Test
    void everyStartsOnePeriodAfterTheRecordWithoutStartAtAndOnStartAtWithIt() {
        assertThat(every("PT1H", null, null, null).first()).contains(T0.plusSeconds(3600));
        assertThat(occurrences(every("PT30S", "2026-12-04T10:00:00.250Z", null, null), 3)).containsExactly(
                Instant.parse("2026-12-04T10:00:00.250Z"), Instant.parse("2026-12-04T10:00:30.250Z"),
                Instant.parse("2026-12-04T10:01:00.250Z"));
    }

    @Test
    void badRulesAreRefusedWithAReason() {
        assertThatThrownBy(() -> every("PT0.5S", null, null, null)).hasMessageContaining("shorter");
        assertThatThrownBy(() -> every("1h", null, null, null)).hasMessageContaining("ISO-8601");
        assertThatThrownBy(() -> cron("61 * * * *", null, null, null)).hasMessageContaining("not valid");
        assertThatThrownBy(() -> cron("* * *", null, null, null)).hasMessageContaining("3 fields");
        assertThatThrownBy(() -> cron("* * * * *", "Mars/Olympus", null, null)).hasMessageContaining("IANA");
        assertThatThrownBy(() -> every("PT1S", null, null, "sometimes")).hasMessageContaining("catchUp");
        assertThatThrownBy(() -> every("PT1S", null, 0L, null)).hasMessageContaining("maxOccurrences");
        assertThatThrownBy(() -> Recurrence.of(new Recurrence.Spec("* * * * *", null, "PT1S", null, null, null, null), "s", T0))
                .hasMessageContaining("exactly one");
    }

    /** Issue 37 point 2: a command's zone is an IANA region id (no fixed offsets), and its cron text is bounded. */
    @Test
    void aCommandsZoneIsAnIanaRegionAndItsCronTextIsBounded() {
        for (String offset : List.of("+05:00", "Z", "UTC+5", "GMT-03:00", "-0130")) {
            assertThatThrownBy(() -> cron("* * * * *", offset, null, null)).as(offset).hasMessageContaining("IANA region id");
        }
        for (String region : List.of("UTC", "Etc/UTC", "Etc/GMT-5", "Europe/Berlin", "Asia/Kathmandu")) {
            assertThat(cron("* * * * *", region, null, null).first()).as(region).isPresent();
        }
        String longest = "00 " + "0,".repeat(123) + "0 * * *";
        assertThat(longest).hasSize(256);
        assertThat(cron(longest, null, null, null).first()).isPresent();
        assertThatThrownBy(() -> cron(longest + " ", null, null, null)).hasMessageContaining("257 characters, longer than 256");
        // a row stored before the check keeps its series
        String stored = cron("* * * * *", null, null, null).toJson(1).replace("\"zone\":\"Z\"", "\"zone\":\"+05:00\"");
        assertThat(stored).contains("+05:00");
        assertThat(Recurrence.fromJson(stored).rule().describe()).contains("+05:00");
    }

    /** Issue 37 point 2: recurring.min.period reads an every's period and a cron's closest occurrences. */
    @Test
    void theShortestGapOfARuleIsFoundAgainstTheMinimumPeriod() {
        java.time.Duration tenS = java.time.Duration.ofSeconds(10);
        assertThat(every("PT5S", null, null, null).gapShorterThan(tenS)).contains(java.time.Duration.ofSeconds(5));
        assertThat(every("PT10S", null, null, null).gapShorterThan(tenS)).isEmpty();
        assertThat(cron("* * * * * *", null, null, null).gapShorterThan(tenS)).contains(java.time.Duration.ofSeconds(1));
        assertThat(cron("*/10 * * * * *", null, null, null).gapShorterThan(tenS)).isEmpty();
        assertThat(cron("0,3 * * * * *", null, null, null).gapShorterThan(tenS)).contains(java.time.Duration.ofSeconds(3));
        // 55 then the next minute's 0: the step into the next minute counts
        assertThat(cron("0,55 * * * * *", null, null, null).gapShorterThan(tenS)).contains(java.time.Duration.ofSeconds(5));
        assertThat(cron("* * * * *", null, null, null).gapShorterThan(java.time.Duration.ofMinutes(1))).isEmpty();
        assertThat(cron("* * * * *", null, null, null).gapShorterThan(java.time.Duration.ofMinutes(5))).contains(java.time.Duration.ofMinutes(1));
        assertThat(cron("*/5 * * * *", null, null, null).gapShorterThan(java.time.Duration.ofMinutes(5))).isEmpty();
        // 59 then the next hour's 0
        assertThat(cron("0,59 * * * *", null, null, null).gapShorterThan(java.time.Duration.ofMinutes(5))).contains(java.time.Duration.ofMinutes(1));
        assertThat(cron("0 0 * * *", null, null, null).gapShorterThan(java.time.Duration.ofHours(1))).isEmpty();
        assertThat(cron("* * * * * *", null, null, null).gapShorterThan(java.time.Duration.ofSeconds(1))).isEmpty();
    }

    @Test
    void aCronWithNoOccurrenceInItsWindowHasNoFirst() {
        assertThat(cron("0 0 30 2 *", null, null, null).first()).isEmpty();
        assertThat(cron("0 9 * * *", null, "2026-12-04T10:00:00Z", "2026-12-05T08:00:00Z").first()).isEmpty();
    }

    @Test
    void newYorkSpringForwardHasNoDailyTwoThirtyAndHourlySkipsTheGap() {
        // 2026-03-08 02:00 EST -> 03:00 EDT
        assertThat(occurrences(cron("30 2 * * *", "America/New_York", "2026-03-07T00:00:00Z", "2026-03-10T00:00:00Z"), 10))
                .containsExactly(Instant.parse("2026-03-07T07:30:00Z"), Instant.parse("2026-03-09T06:30:00Z"));
        assertThat(occurrences(cron("30 * * * *", "America/New_York", "2026-03-08T05:00:00Z", "2026-03-08T08:00:00Z"), 10))
                .containsExactly(Instant.parse("2026-03-08T05:30:00Z"), Instant.parse("2026-03-08T06:30:00Z"),
                        Instant.parse("2026-03-08T07:30:00Z"));
    }

    @Test
    void berlinFallBackFiresANamedHourOnceAndAnHourlyRuleInBothHours() {
        // 2026-10-25 03:00 CEST -> 02:00 CET: 02:30 local exists twice (00:30Z and 01:30Z)
        assertThat(occurrences(cron("30 2 * * *", "Europe/Berlin", "2026-10-24T12:00:00Z", "2026-10-26T12:00:00Z"), 10))
                .containsExactly(Instant.parse("2026-10-25T00:30:00Z"), Instant.parse("2026-10-26T01:30:00Z"));
        assertThat(occurrences(cron("30 * * * *", "Europe/Berlin", "2026-10-24T23:00:00Z", "2026-10-25T02:00:00Z"), 10))
                .containsExactly(Instant.parse("2026-10-24T23:30:00Z"), Instant.parse("2026-10-25T00:30:00Z"),
                        Instant.parse("2026-10-25T01:30:00Z"));
    }

    @Test
    void sixFieldsHaveSeconds() {
        assertThat(occurrences(cron("*/20 * * * * *", "Europe/Berlin", "2026-12-04T10:00:01Z", null), 3)).containsExactly(
                Instant.parse("2026-12-04T10:00:20Z"), Instant.parse("2026-12-04T10:00:40Z"), Instant.parse("2026-12-04T10:01:00Z"));
    }

    @Test
    void onTimeTheNextIsTheRulesNextAndMaxOccurrencesEndsTheSeries() {
        Recurrence r = every("PT10S", "2026-12-04T10:00:00Z", 3L, null);
        Instant o1 = Instant.parse("2026-12-04T10:00:00Z");
        assertThat(r.plan(o1, 1, o1.plusMillis(30))).isEqualTo(new Plan(true, o1.plusSeconds(10), null, null));
        assertThat(r.plan(o1.plusSeconds(20), 3, o1.plusSeconds(20))).isEqualTo(new Plan(true, null, null, null, End.MAX_OCCURRENCES));
    }

    /** Issue 47: a series that ends says why ("ended"), whichever way the rule ends it. */
    @Test
    void aPlanThatStagesNothingSaysWhyTheSeriesEnds() {
        Instant o1 = Instant.parse("2026-12-04T10:00:00Z");
        Recurrence windowed = Recurrence.of(new Recurrence.Spec(null, null, "PT10S", o1.toString(), "2026-12-04T10:00:25Z", null, "one"), "s", T0);
        assertThat(windowed.plan(o1.plusSeconds(20), 3, o1.plusSeconds(20))).isEqualTo(new Plan(true, null, null, null, End.END_AT));
        assertThat(windowed.plan(o1, 1, o1.plusSeconds(1))).isEqualTo(new Plan(true, o1.plusSeconds(10), null, null));
        // late, catchUp one: this one fires and the resumption would be past endAt
        assertThat(windowed.plan(o1, 1, o1.plusSeconds(26)).end()).isEqualTo(End.END_AT);
        // catchUp none: a missed one is not delivered and the series has nothing after now
        Recurrence none = Recurrence.of(new Recurrence.Spec(null, null, "PT10S", o1.toString(), "2026-12-04T10:00:25Z", null, "none"), "s", T0);
        assertThat(none.plan(o1, 1, o1.plusSeconds(21))).isEqualTo(new Plan(false, null, o1, o1.plusSeconds(20), End.END_AT));
        // the last instant a timer may have: nothing after it
        Recurrence last = Recurrence.of(new Recurrence.Spec(null, null, "P1D", "9999-12-31T00:00:00Z", null, null, "one"), "s", T0);
        Instant lastDay = Instant.parse("9999-12-31T00:00:00Z");
        assertThat(last.plan(lastDay, 1, lastDay).end()).isEqualTo(End.NO_OCCURRENCE);
        assertThat(new Plan(true, null, null, null, End.END_AT).toJson().get("end").asText()).isEqualTo("end_at");
        assertThat(new Plan(true, o1, null, null).toJson().has("end")).isFalse();
    }

    @Test
    void lateAllFiresEveryMissedOneFromTheOccurrenceNotFromNow() {
        Recurrence r = every("PT10S", "2026-12-04T10:00:00Z", null, "all");
        Instant o1 = Instant.parse("2026-12-04T10:00:00Z");
        assertThat(r.plan(o1, 1, o1.plusSeconds(35))).isEqualTo(new Plan(true, o1.plusSeconds(10), null, null));
    }

    @Test
    void allIsBoundedToTheLastHundredMissed() {
        Recurrence r = every("PT1S", "2026-12-04T10:00:00Z", null, "all");
        Instant o1 = Instant.parse("2026-12-04T10:00:00Z");
        Plan p = r.plan(o1, 1, o1.plusSeconds(500));
        // due after o1: 10:00:01 .. 10:08:20 (500); the last 100 are 10:06:41 .. 10:08:20
        assertThat(p).isEqualTo(new Plan(true, o1.plusSeconds(401), o1.plusSeconds(1), o1.plusSeconds(400)));
        assertThat(r.plan(o1, 1, o1.plusSeconds(100))).isEqualTo(new Plan(true, o1.plusSeconds(1), null, null));
    }

    @Test
    void aSeriesWithFewerOccurrencesLeftThanTheBoundFiresThemAllHoweverLongTheOutage() {
        // six occurrences in all, the first met 500 s late: the bound counts what the series will still deliver
        Recurrence r = every("PT1S", "2026-12-04T10:00:00Z", 6L, "all");
        Instant o1 = Instant.parse("2026-12-04T10:00:00Z");
        assertThat(r.plan(o1, 1, o1.plusSeconds(500))).isEqualTo(new Plan(true, o1.plusSeconds(1), null, null));
        assertThat(r.plan(o1.plusSeconds(5), 6, o1.plusSeconds(500))).isEqualTo(new Plan(true, null, null, null, End.MAX_OCCURRENCES));
    }

    @Test
    void lateOneFiresThisOneAndResumesAfterNow() {
        Recurrence r = every("PT10S", "2026-12-04T10:00:00Z", null, "one");
        Instant o1 = Instant.parse("2026-12-04T10:00:00Z");
        assertThat(r.plan(o1, 1, o1.plusSeconds(35)))
                .isEqualTo(new Plan(true, o1.plusSeconds(40), o1.plusSeconds(10), o1.plusSeconds(30)));
    }

    @Test
    void lateNoneDeliversNothingAndResumesAfterNow() {
        Recurrence r = every("PT10S", "2026-12-04T10:00:00Z", 2L, "none");
        Instant o1 = Instant.parse("2026-12-04T10:00:00Z");
        assertThat(r.plan(o1, 1, o1.plusSeconds(35))).isEqualTo(new Plan(false, o1.plusSeconds(40), o1, o1.plusSeconds(30)));
        // only late, not missed: it fires
        assertThat(r.plan(o1, 1, o1.plusSeconds(5)).deliver()).isTrue();
    }

    @Test
    void theStoredFormReadsBackTheSameRule() {
        Recurrence r = Recurrence.of(new Recurrence.Spec("30 2 * * *", "Europe/Berlin", null, "2026-10-24T12:00:00+02:00", "2026-11-01T00:00:00Z", 4L, "none"), "nightly", T0);
        Recurrence.Stored back = Recurrence.fromJson(r.toJson(3));
        assertThat(back.seq()).isEqualTo(3);
        assertThat(back.rule().toJson(3)).isEqualTo(r.toJson(3));
        assertThat(occurrences(back.rule(), 10)).isEqualTo(occurrences(r, 10));
        assertThat(back.isStopped()).isFalse();
    }

    @Test
    void aRuleATooLateCancelMarkedReadsAsStopped() {
        Recurrence r = Recurrence.of(new Recurrence.Spec(null, null, "PT1M", "2026-10-24T12:00:00Z", null, null, "one"), "s", T0);
        // what bridge_apply_v4 writes for a cancel that met the occurrence in a sweeper's hands
        String marked = r.toJson(2).replaceFirst("}$", ",\"stopped\":\"cancelled\"}");
        Recurrence.Stored back = Recurrence.fromJson(marked);
        assertThat(back.stopped()).isEqualTo("cancelled");
        assertThat(back.seq()).isEqualTo(2);
        assertThat(back.rule().toJson(2)).isEqualTo(r.toJson(2));
    }
}
