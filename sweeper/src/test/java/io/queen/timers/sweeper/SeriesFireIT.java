package io.queen.timers.sweeper;

import static io.queen.timers.sweeper.Staging.DEFAULT_TENANT;
import static org.assertj.core.api.Assertions.assertThat;

import io.queen.timers.log.codec.UuidV7;
import io.queen.timers.sql.Migrations;
import io.queen.timers.sweeper.claim.ClaimedTimer;
import io.queen.timers.sweeper.claim.Claimer;
import io.queen.timers.sweeper.fire.FireResult;
import io.queen.timers.sweeper.fire.Firer;
import io.queen.timers.sweeper.fire.SegmentOutcome;
import io.queen.timers.sweeper.pack.Packer;
import io.queen.timers.testkit.PostgresDatabase;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.List;
import java.util.UUID;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The fire of a recurring timer's occurrence (docs/recurring.md), claim to commit: the occurrence enters the log
 * and its successor is staged under the same key in the same transaction, and its fired event says both.
 */
class SeriesFireIT {

    @RegisterExtension
    static final PostgresDatabase db = PostgresDatabase.initializedWith(Migrations::migrate);

    private Staging staging;

    @BeforeEach
    void clean() {
        staging = new Staging(db.dataSource());
        staging.clear();
    }

    @Test
    void theFireOfAnOccurrenceStagesItsSuccessorAndItsEventSaysSo() throws Exception {
        Instant o1 = Instant.now().minusSeconds(1).truncatedTo(ChronoUnit.SECONDS);
        staging.schedule(DEFAULT_TENANT, "q", "k", -1);
        staging.execute("UPDATE queen.log_timers SET deliver_at = '" + o1 + "', txn = 's@" + o1 + "', recurrence = "
                + "'{\"every\":\"PT10S\",\"startAt\":\"" + o1 + "\",\"catchUp\":\"one\",\"txn\":\"s\",\"seq\":1}'::jsonb");
        List<ClaimedTimer> claimed = new Claimer(db.dataSource(), 200, Duration.ofSeconds(30), 8).claim();
        assertThat(claimed).singleElement().satisfies(t -> assertThat(t.recurring()).isTrue());

        List<SegmentOutcome> out = new Firer(db.dataSource()).fire(new Packer(1 << 20).pack(claimed).fires().get(0));

        assertThat(out).extracting(SegmentOutcome::result).containsExactly(FireResult.FIRED);
        assertThat(LogContents.txnCounts(db.dataSource())).containsOnlyKeys("s@" + o1);
        Instant o2 = o1.plusSeconds(10);
        assertThat(staging.count("SELECT count(*) FROM queen.log_timers WHERE txn = 's@" + o2 + "' AND deliver_at = '" + o2
                + "' AND (recurrence->>'seq')::int = 2 AND attempts = 0")).isEqualTo(1);
        // issue 43: the successor's message id is a UUIDv7 of the fire that staged it: the fire's now(), which is never
        // after the created_at of the segment it pushed in the same transaction (the database's clock, both)
        UUID next;
        try (Connection c = db.dataSource().getConnection(); Statement st = c.createStatement();
                ResultSet rs = st.executeQuery("SELECT message_id FROM queen.log_timers WHERE txn = 's@" + o2 + "'")) {
            assertThat(rs.next()).isTrue();
            next = rs.getObject(1, UUID.class);
        }
        long pushedAt = LogContents.read(db.dataSource()).get(0).createdAt().toEpochMilli();
        assertThat(next.version()).isEqualTo(7);
        assertThat(UuidV7.unixMillis(next)).isBetween(pushedAt - 10_000, pushedAt);
        assertThat(staging.count("SELECT count(*) FROM queen.timer_audit_events WHERE type = 'fired' AND event->>'txn' = 's@" + o1
                + "' AND (event->>'seq')::int = 1 AND (event->>'next')::timestamptz = '" + o2 + "'")).isEqualTo(1);
    }

    @Test
    void aFireThatDoesNotKnowTheRuleLeavesARecurringTimerToOneThatDoes() throws Exception {
        staging.schedule(DEFAULT_TENANT, "q", "k", -1);
        staging.execute("UPDATE queen.log_timers SET recurrence = '{\"every\":\"PT10S\",\"startAt\":\"2026-01-01T00:00:00Z\","
                + "\"catchUp\":\"one\",\"txn\":\"s\",\"seq\":1}'::jsonb");
        List<ClaimedTimer> claimed = new Claimer(db.dataSource(), 200, Duration.ofSeconds(30), 8).claim();
        // as a caller that does not plan the series would: without the rule, so its fire carries no plan
        List<ClaimedTimer> blind = claimed.stream().map(t -> new ClaimedTimer(t.key(),
                ClaimedTimer.Schedule.once(t.schedule().deliverAt(), t.schedule().visibleAt()), t.message(), t.payload(),
                new ClaimedTimer.Lease(t.lease().claimToken(), t.lease().claimedUntil(), null), t.history())).toList();

        List<SegmentOutcome> out = new Firer(db.dataSource()).fire(new Packer(1 << 20).pack(blind).fires().get(0));

        assertThat(out).extracting(SegmentOutcome::result).containsExactly(FireResult.STALE);
        assertThat(LogContents.txnCounts(db.dataSource())).isEmpty();
        assertThat(staging.count("SELECT count(*) FROM queen.log_timers WHERE txn = 'txn-k'")).isEqualTo(1);   // still staged
    }

    /** A due occurrence of key {@code k} with {@code rule} (its txn and the rest of the rule's JSON), claimed. */
    private List<ClaimedTimer> claimOccurrence(Instant at, String rule, int seq) {
        staging.schedule(DEFAULT_TENANT, "q", "k", -1);
        staging.execute("UPDATE queen.log_timers SET deliver_at = '" + at + "', txn = 's@" + at + "', recurrence = '{" + rule
                + ",\"txn\":\"s\",\"seq\":" + seq + "}'::jsonb");
        try {
            return new Claimer(db.dataSource(), 200, Duration.ofSeconds(30), 8).claim();
        } catch (java.sql.SQLException e) {
            throw new IllegalStateException(e);
        }
    }

    private void fire(List<ClaimedTimer> claimed) throws Exception {
        assertThat(new Firer(db.dataSource()).fire(new Packer(1 << 20).pack(claimed).fires().get(0)))
                .extracting(SegmentOutcome::result).containsExactly(FireResult.FIRED);
    }

    /** The one event of {@code type} for key k, as the relay publishes it; every event valid by the schema and the client. */
    private com.fasterxml.jackson.databind.JsonNode event(String type) throws Exception {
        staging.checkAuditEvents();
        try (Connection c = db.dataSource().getConnection(); Statement st = c.createStatement();
                ResultSet rs = st.executeQuery("SELECT event::text FROM queen.timer_audit_events WHERE type = '" + type + "'")) {
            assertThat(rs.next()).as("a " + type + " event").isTrue();
            com.fasterxml.jackson.databind.JsonNode e = new com.fasterxml.jackson.databind.ObjectMapper().readTree(rs.getString(1));
            assertThat(rs.next()).as("one " + type + " event").isFalse();
            return e;
        }
    }

    /** Issue 47: whichever way a series ends, the event of its last occurrence says why ("ended"), and nothing follows it. */
    @Test
    void theLastOccurrenceByMaxOccurrencesSaysSo() throws Exception {
        Instant o3 = Instant.now().minusSeconds(1).truncatedTo(ChronoUnit.SECONDS);
        fire(claimOccurrence(o3, "\"every\":\"PT10S\",\"startAt\":\"" + o3.minusSeconds(20) + "\",\"maxOccurrences\":3,\"catchUp\":\"one\"", 3));

        var fired = event("fired");
        assertThat(fired.get("seq").asInt()).isEqualTo(3);
        assertThat(fired.get("next").isNull()).isTrue();
        assertThat(fired.get("ended").asText()).isEqualTo("max_occurrences");
        assertThat(staging.count("SELECT count(*) FROM queen.log_timers")).isZero();
    }

    @Test
    void theLastOccurrenceBeforeEndAtSaysSo() throws Exception {
        Instant o = Instant.now().minusSeconds(1).truncatedTo(ChronoUnit.SECONDS);
        fire(claimOccurrence(o, "\"every\":\"PT10S\",\"startAt\":\"" + o + "\",\"endAt\":\"" + o.plusSeconds(5) + "\",\"catchUp\":\"one\"", 1));

        assertThat(event("fired").get("ended").asText()).isEqualTo("end_at");
        assertThat(staging.count("SELECT count(*) FROM queen.log_timers")).isZero();
    }

    @Test
    void aMissedOccurrenceOfCatchUpNoneWithNothingBeforeEndAtEndsItsSeriesInItsSkippedEvent() throws Exception {
        Instant o = Instant.now().minusSeconds(25).truncatedTo(ChronoUnit.SECONDS);
        List<ClaimedTimer> claimed = claimOccurrence(o, "\"every\":\"PT10S\",\"startAt\":\"" + o + "\",\"endAt\":\"" + o.plusSeconds(22)
                + "\",\"catchUp\":\"none\"", 1);

        assertThat(new io.queen.timers.sweeper.fail.Failer(db.dataSource(), Duration.ofSeconds(1), Duration.ofSeconds(1), Duration.ofSeconds(1), 5)
                .skip(claimed)).isEqualTo(1);

        var skipped = event("skipped");
        assertThat(skipped.get("next").isNull()).isTrue();
        assertThat(skipped.get("ended").asText()).isEqualTo("end_at");
        assertThat(staging.count("SELECT count(*) FROM queen.log_timers")).isZero();
    }

    @Test
    void anOccurrenceWhoseRuleCannotBeReadIsDeliveredAsTheSeriesLast() throws Exception {
        Instant o = Instant.now().minusSeconds(1).truncatedTo(ChronoUnit.SECONDS);
        fire(claimOccurrence(o, "\"every\":\"every other tuesday\",\"startAt\":\"" + o + "\",\"catchUp\":\"one\"", 4));

        var fired = event("fired");
        assertThat(fired.get("seq").asInt()).isEqualTo(4);
        assertThat(fired.get("ended").asText()).isEqualTo("rule_unreadable");
    }
}
