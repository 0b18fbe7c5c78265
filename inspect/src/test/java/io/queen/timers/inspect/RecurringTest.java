package io.queen.timers.inspect;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Instant;
import org.junit.jupiter.api.Test;

/** How list, peek and the API's {@code ?next=N} show a series (docs/recurring.md), stopped by a too_late cancel or not. */
class RecurringTest {

    private static final String RULE = "{\"every\":\"PT1M\",\"startAt\":\"2026-10-24T12:00:00Z\",\"catchUp\":\"one\",\"txn\":\"s\",\"seq\":3";
    private static final Instant PENDING = Instant.parse("2026-10-24T12:02:00Z");

    @Test
    void aRunningSeriesShowsItsNextOccurrences() {
        Recurring r = Recurring.of(RULE + "}");
        assertThat(r.upcoming(PENDING, 3)).containsExactly(PENDING, PENDING.plusSeconds(60), PENDING.plusSeconds(120));
        assertThat(r.rule()).doesNotContain("stopped");
    }

    @Test
    void aSeriesATooLateCancelStoppedShowsOnlyItsLastOccurrenceAndSaysSo() {
        Recurring r = Recurring.of(RULE + ",\"stopped\":\"cancelled\"}");
        assertThat(r.upcoming(PENDING, 3)).containsExactly(PENDING);
        assertThat(r.rule()).contains("stopped (cancelled)");
        assertThat(r.seq()).isEqualTo(3);
    }
}
