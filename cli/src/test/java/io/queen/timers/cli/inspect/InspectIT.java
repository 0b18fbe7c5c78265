package io.queen.timers.cli.inspect;

import io.queen.timers.inspect.PendingSeries;
import io.queen.timers.inspect.TimerInspector;
import io.queen.timers.inspect.TimerState;
import io.queen.timers.inspect.TimerSummary;
import io.queen.timers.inspect.TimerView;

import static io.queen.timers.sweeper.Staging.DEFAULT_TENANT;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.queen.timers.sql.Migrations;
import io.queen.timers.sweeper.Staging;
import io.queen.timers.sweeper.claim.Claimer;
import io.queen.timers.testkit.PostgresDatabase;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** Peek and list (V036) for operators; a recurring timer's rule and its series (V129). */
class InspectIT {

    @RegisterExtension
    static final PostgresDatabase db = PostgresDatabase.initializedWith(Migrations::migrate);

    private Staging staging;
    private TimerInspector inspector;

    @BeforeEach
    void clean() {
        staging = new Staging(db.dataSource());
        staging.execute("DELETE FROM queen.log_timers");
        inspector = new TimerInspector(db.dataSource());
    }

    @Test
    void peekShowsOneTimerWithItsPayloadAndItsState() throws Exception {
        staging.schedule(DEFAULT_TENANT, "q", "later", 600);
        staging.schedule(DEFAULT_TENANT, "q", "now", -1);

        TimerView later = inspector.peek(DEFAULT_TENANT, "q", "later").orElseThrow();
        assertThat(later.state()).isEqualTo(TimerState.WAITING);
        assertThat(new String(later.payload(), StandardCharsets.UTF_8)).isEqualTo("{\"key\":\"later\"}");
        assertThat(later.txn()).isEqualTo("txn-later");
        assertThat(later.deliverAt()).isAfter(later.dbNow());
        assertThat(inspector.peek(DEFAULT_TENANT, "q", "now").orElseThrow().state()).isEqualTo(TimerState.DUE);

        new Claimer(db.dataSource(), 10, Duration.ofSeconds(30), 8).claim();
        assertThat(inspector.peek(DEFAULT_TENANT, "q", "now").orElseThrow().state()).isEqualTo(TimerState.CLAIMED);
        staging.execute("UPDATE queen.log_timers SET claim_token = NULL, attempts = 1 WHERE timer_key = 'now'");
        assertThat(inspector.peek(DEFAULT_TENANT, "q", "now").orElseThrow().state()).isEqualTo(TimerState.BACKOFF);

        assertThat(inspector.peek(DEFAULT_TENANT, "q", "missing")).isEmpty();
        assertThat(inspector.peek(UUID.randomUUID(), "q", "later")).isEmpty();   // another tenant sees nothing
    }

    @Test
    void listPagesAQueueByTimerKeyWithoutPayloadsAndClampsTheLimit() throws Exception {
        for (int i = 0; i < 1205; i++) {
            staging.schedule(DEFAULT_TENANT, "q", String.format("key-%04d", i), 60);
        }
        staging.schedule(DEFAULT_TENANT, "other", "key-0000", 60);

        List<String> seen = new ArrayList<>();
        String after = null;
        List<TimerSummary> page;
        do {
            page = inspector.list(DEFAULT_TENANT, "q", after, 500);
            page.forEach(t -> seen.add(t.timerKey()));
            after = page.isEmpty() ? after : page.get(page.size() - 1).timerKey();
        } while (!page.isEmpty());
        assertThat(seen).hasSize(1205).isSorted().doesNotHaveDuplicates();

        assertThat(inspector.list(DEFAULT_TENANT, "q", null, 1_000_000)).hasSize(TimerInspector.MAX_PAGE);
        assertThat(inspector.list(DEFAULT_TENANT, "q", null, 0)).hasSize(1);
        TimerSummary first = inspector.list(DEFAULT_TENANT, "q", null, 1).get(0);
        assertThat(first.payloadBytes()).isEqualTo("{\"key\":\"key-0000\"}".length());
        assertThat(first.state()).isEqualTo(TimerState.WAITING);
    }

    /** Makes a staged timer the pending occurrence {@code seq} of series {@code seriesTxn}, as the bridge or the fire stages one. */
    private void recurring(String queue, String key, String rule, String seriesTxn, int seq) {
        staging.execute("UPDATE queen.log_timers SET recurrence = '{" + rule + ", \"startAt\": \"2026-01-01T00:00:00Z\", \"catchUp\": \"one\","
                + " \"txn\": \"" + seriesTxn + "\", \"seq\": " + seq + "}'::jsonb, txn = '" + seriesTxn + "@' || deliver_at::text"
                + " WHERE queue = '" + queue + "' AND timer_key = '" + key + "'");
    }

    @Test
    void peekAndListShowARecurringTimersRuleAndAOneShotHasNone() throws Exception {
        staging.schedule(DEFAULT_TENANT, "q", "nightly", 600);
        staging.schedule(DEFAULT_TENANT, "q", "once", 600);
        recurring("q", "nightly", "\"cron\": \"30 2 * * *\", \"zone\": \"Europe/Berlin\", \"maxOccurrences\": 5", "report", 3);

        TimerView nightly = inspector.peek(DEFAULT_TENANT, "q", "nightly").orElseThrow();
        assertThat(nightly.recurring()).isNotNull();
        assertThat(nightly.recurring().rule()).contains("cron '30 2 * * *' Europe/Berlin", "at most 5", "catchUp one");
        assertThat(nightly.recurring().seriesTxn()).isEqualTo("report");
        assertThat(nightly.recurring().seq()).isEqualTo(3);
        assertThat(inspector.peek(DEFAULT_TENANT, "q", "once").orElseThrow().recurring()).isNull();

        List<TimerSummary> page = inspector.list(DEFAULT_TENANT, "q", null, 10);
        assertThat(page).extracting(TimerSummary::timerKey).containsExactly("nightly", "once");
        assertThat(page.get(0).recurring()).isEqualTo(nightly.recurring());
        assertThat(page.get(1).recurring()).isNull();
    }

    @Test
    void aRuleThatDoesNotReadIsShownAsSuchAndTheListingGoesOn() throws Exception {
        staging.schedule(DEFAULT_TENANT, "q", "broken", 600);
        staging.schedule(DEFAULT_TENANT, "q", "fine", 600);
        staging.execute("UPDATE queen.log_timers SET recurrence = '{\"every\": \"soon\", \"txn\": \"t\", \"seq\": 1}'::jsonb"
                + " WHERE timer_key = 'broken'");

        List<TimerSummary> page = inspector.list(DEFAULT_TENANT, "q", null, 10);
        assertThat(page).extracting(TimerSummary::timerKey).containsExactly("broken", "fine");
        assertThat(page.get(0).recurring().rule()).startsWith("unreadable rule (every 'soon' is not an ISO-8601 duration")
                .endsWith("{\"seq\": 1, \"txn\": \"t\", \"every\": \"soon\"}");
        assertThat(inspector.peek(DEFAULT_TENANT, "q", "broken").orElseThrow().recurring()).isEqualTo(page.get(0).recurring());
    }

    @Test
    void seriesFindsThePendingOccurrenceBySeriesTxnThroughThePartialIndex() throws Exception {
        for (int i = 0; i < 300; i++) {
            staging.schedule(DEFAULT_TENANT, "q", String.format("one-shot-%03d", i), 600);
        }
        staging.schedule(DEFAULT_TENANT, "q", "hourly", 600);
        staging.schedule(DEFAULT_TENANT, "q", "hourly-too", 900);
        staging.schedule(DEFAULT_TENANT, "q", "other", 600);
        staging.schedule(DEFAULT_TENANT, "elsewhere", "hourly", 600);
        recurring("q", "hourly", "\"every\": \"PT1H\"", "tick", 2);
        recurring("q", "hourly-too", "\"every\": \"PT1H\"", "tick", 1);   // two keys may share a txn
        recurring("q", "other", "\"every\": \"PT1H\"", "tock", 1);
        recurring("elsewhere", "hourly", "\"every\": \"PT1H\"", "tick", 1);
        staging.execute("ANALYZE queen.log_timers");

        long scansBefore = recurringIndexScans();
        List<PendingSeries> tick = inspector.series(DEFAULT_TENANT, "q", "tick");
        assertThat(tick).extracting(PendingSeries::timerKey).containsExactly("hourly", "hourly-too");
        PendingSeries first = tick.get(0);
        assertThat(first.state()).isEqualTo(TimerState.WAITING);
        assertThat(first.recurring().seq()).isEqualTo(2);
        assertThat(first.recurring().rule()).startsWith("every PT1H");
        assertThat(first.txn()).isEqualTo(inspector.peek(DEFAULT_TENANT, "q", "hourly").orElseThrow().txn());
        assertThat(first.nextOccurrence()).isEqualTo(inspector.peek(DEFAULT_TENANT, "q", "hourly").orElseThrow().deliverAt());
        // an occurrence's txn and a one-shot's are not series txns; nor is another tenant's series
        assertThat(inspector.series(DEFAULT_TENANT, "q", first.txn())).isEmpty();
        assertThat(inspector.series(DEFAULT_TENANT, "q", "txn-one-shot-001")).isEmpty();
        assertThat(inspector.series(UUID.randomUUID(), "q", "tick")).isEmpty();
        // the price the function states: it reads the recurring rows through idx_log_timers_recurring, not the queue's rows
        await().atMost(Duration.ofSeconds(10)).until(() -> recurringIndexScans() > scansBefore);
    }

    private long recurringIndexScans() {
        return staging.count("SELECT idx_scan FROM pg_stat_user_indexes WHERE indexrelname = 'idx_log_timers_recurring'");
    }
}
