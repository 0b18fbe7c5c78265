package io.queen.timers.cli.inspect;

import static io.queen.timers.sweeper.Staging.DEFAULT_TENANT;
import static org.assertj.core.api.Assertions.assertThat;

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

/** Peek and list (V036) for operators. */
class InspectTest {

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
}
