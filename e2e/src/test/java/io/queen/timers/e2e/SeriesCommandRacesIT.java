package io.queen.timers.e2e;

import static io.queen.timers.sweeper.Staging.DEFAULT_TENANT;
import static org.assertj.core.api.Assertions.assertThat;

import io.queen.timers.bridge.apply.Verdict;
import io.queen.timers.sql.Migrations;
import io.queen.timers.sweeper.Staging;
import io.queen.timers.sweeper.claim.ClaimedTimer;
import io.queen.timers.sweeper.claim.Claimer;
import io.queen.timers.sweeper.fire.FireResult;
import io.queen.timers.sweeper.fire.Firer;
import io.queen.timers.sweeper.fire.SegmentOutcome;
import io.queen.timers.sweeper.pack.Packer;
import io.queen.timers.testkit.PostgresDatabase;
import java.sql.Connection;
import java.sql.Statement;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * A cancel racing the fire of a recurring timer's occurrence (docs/recurring.md), through the bridge's own apply
 * step: "cancel stops the series" holds on both sides of the fire's commit.
 */
class SeriesCommandRacesIT {

    @RegisterExtension
    static final PostgresDatabase db = PostgresDatabase.initializedWith(Migrations::migrate);

    private static final String RULE = "'{\"every\":\"PT10S\",\"startAt\":\"2026-01-01T00:00:00Z\",\"catchUp\":\"one\",\"txn\":\"s\",\"seq\":1}'";

    private Staging staging;

    @BeforeEach
    void clean() {
        staging = new Staging(db.dataSource());
        staging.clear();
        staging.schedule(DEFAULT_TENANT, "q", "k", -1);
        staging.execute("UPDATE queen.log_timers SET recurrence = " + RULE + "::jsonb");
    }

    @Test
    void aCancelThatMeetsTheOccurrenceInHandsIsTooLateForItButEndsTheSeries() throws Exception {
        List<ClaimedTimer> claimed = new Claimer(db.dataSource(), 200, Duration.ofSeconds(30), 8).claim();

        assertThat(new Commands(db.dataSource()).cancel(DEFAULT_TENANT, "q", "k")).isEqualTo(Verdict.TOO_LATE);
        List<SegmentOutcome> out = new Firer(db.dataSource()).fire(new Packer(1 << 20).pack(claimed).fires().get(0));

        assertThat(out).extracting(SegmentOutcome::result).containsExactly(FireResult.FIRED);   // the occurrence in hands goes out
        assertThat(staging.count("SELECT count(*) FROM queen.log_timers")).as("no successor").isZero();
        // its fired event announces no successor and says why the series ended ("next": null, "ended": "cancelled")
        assertThat(staging.count("SELECT count(*) FROM queen.timer_audit_events WHERE type = 'fired' AND event ->> 'next' IS NOT NULL")).isZero();
        assertThat(staging.count("SELECT count(*) FROM queen.timer_audit_events WHERE type = 'fired' AND event ->> 'ended' = 'cancelled'"))
                .isEqualTo(1);
    }

    /**
     * Issue 47 (found by the fault harness): the sweeper that held the occurrence when the cancel answered too_late loses
     * it (killed, its lease run out) and another claims it. That claim still reads a series stopped by the cancel: the
     * occurrence goes out once, as its last (delivered even under catchUp none, as too_late promised), nothing follows,
     * and its fired event carries the series' fields and says why it ended. Before, the bridge dropped the rule and the
     * later claim fired a one-shot whose event had no occurrence, seq, next or ended.
     */
    @Test
    void anOccurrenceAStoppedSeriesLostFromHandsIsFiredByTheNextClaimAsTheSeriesLast() throws Exception {
        staging.execute("UPDATE queen.log_timers SET deliver_at = now() - interval '1 hour', recurrence = jsonb_set(" + RULE
                + "::jsonb, '{catchUp}', '\"none\"')");
        List<ClaimedTimer> first = new Claimer(db.dataSource(), 200, Duration.ofSeconds(30), 8).claim();
        assertThat(first).hasSize(1);
        assertThat(new Commands(db.dataSource()).cancel(DEFAULT_TENANT, "q", "k")).isEqualTo(Verdict.TOO_LATE);

        // the first sweeper's lease runs out in its hands (the clock moved on 30 s; the token stays, as a dead sweeper leaves it)
        staging.execute("UPDATE queen.log_timers SET claimed_until = now() - interval '1 millisecond'");
        List<ClaimedTimer> second = new Claimer(db.dataSource(), 200, Duration.ofSeconds(30), 8).claim();
        assertThat(second).singleElement().satisfies(t -> {
            assertThat(t.recurring()).as("still a series").isTrue();
            assertThat(t.plan(false).deliver()).as("delivered, not skipped, under catchUp none").isTrue();
        });
        assertThat(new Firer(db.dataSource()).fire(new Packer(1 << 20).pack(first).fires().get(0)))
                .extracting(SegmentOutcome::result).containsExactly(FireResult.STALE);   // the first claim's token is gone
        assertThat(new Firer(db.dataSource()).fire(new Packer(1 << 20).pack(second).fires().get(0)))
                .extracting(SegmentOutcome::result).containsExactly(FireResult.FIRED);

        assertThat(staging.count("SELECT count(*) FROM queen.log_timers")).as("no successor").isZero();
        assertThat(staging.count("SELECT count(*) FROM queen.timer_audit_events WHERE type = 'fired' AND event ->> 'next' IS NULL"
                + " AND (event ->> 'seq')::int = 1 AND event ->> 'occurrence' IS NOT NULL AND event ->> 'ended' = 'cancelled'"))
                .isEqualTo(1);
        staging.checkAuditEvents();
    }

    @Test
    void aCancelThatWaitedForTheFireCancelsTheSuccessorTheFireStaged() throws Exception {
        try (Connection fire = db.dataSource().getConnection(); Statement st = fire.createStatement()) {
            // what the fire does to the key, held open: the occurrence's row deleted, its successor inserted
            fire.setAutoCommit(false);
            st.execute("DELETE FROM queen.log_timers WHERE timer_key = 'k'");
            st.execute("INSERT INTO queen.log_timers (tenant_id, queue, timer_key, deliver_at, txn, message_id, payload, recurrence)"
                    + " VALUES ('" + DEFAULT_TENANT + "', 'q', 'k', now() + interval '10 seconds', 's@next', queen.timer_uuidv7_v1(now()), '\\x7b7d', "
                    + RULE + "::jsonb)");
            CompletableFuture<Verdict> cancel = CompletableFuture.supplyAsync(() -> {
                try {
                    return new Commands(db.dataSource()).cancel(DEFAULT_TENANT, "q", "k");
                } catch (Exception e) {
                    throw new IllegalStateException(e);
                }
            });
            Thread.sleep(500);
            assertThat(cancel).as("the bridge's lock waits for the fire").isNotDone();
            fire.commit();
            assertThat(cancel.get(30, TimeUnit.SECONDS)).isEqualTo(Verdict.CANCELLED);
        }
        assertThat(staging.count("SELECT count(*) FROM queen.log_timers")).as("the series stopped").isZero();
    }
}
