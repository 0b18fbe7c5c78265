package io.queen.timers.sweeper;

import static org.awaitility.Awaitility.await;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.queen.timers.sweeper.fail.Failer;
import io.queen.timers.sweeper.loop.Delivery;
import io.queen.timers.sweeper.loop.SweeperMetrics;
import java.util.concurrent.atomic.AtomicReference;
import static io.queen.timers.sweeper.Staging.DEFAULT_TENANT;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.queen.timers.sql.Migrations;
import io.queen.timers.sweeper.claim.ClaimedTimer;
import io.queen.timers.sweeper.claim.Claimer;
import io.queen.timers.sweeper.fire.FireResult;
import io.queen.timers.sweeper.fire.Firer;
import io.queen.timers.sweeper.fire.SegmentOutcome;
import io.queen.timers.sweeper.pack.FireBatch;
import io.queen.timers.sweeper.pack.PackResult;
import io.queen.timers.sweeper.pack.Packer;
import io.queen.timers.sweeper.pack.Segment;
import io.queen.timers.testkit.PostgresDatabase;
import java.sql.SQLException;
import java.time.Duration;
import java.util.List;
import java.util.UUID;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** The fire (V033) driven by the Java claim, pack and fire steps, checked by decoding the log. */
class FireIT {

    @RegisterExtension
    static final PostgresDatabase db = PostgresDatabase.initializedWith(Migrations::migrate);

    private Staging staging;
    private final Packer packer = new Packer(8 * 1024 * 1024);

    @BeforeEach
    void clean() {
        staging = new Staging(db.dataSource());
        staging.clear();
    }

    private List<ClaimedTimer> claim() throws SQLException {
        return new Claimer(db.dataSource(), 200, Duration.ofSeconds(30), 8).claim();
    }

    @Test
    void firePushesEachDestinationAsOneSegmentDeletesTheRowsAndWritesFiredEvents() throws Exception {
        for (int i = 0; i < 10; i++) {
            staging.schedule(DEFAULT_TENANT, "orders.reminders", "k" + i, -5 + i * 0.1);
            staging.schedule(DEFAULT_TENANT, "billing", "b" + i, -3);
        }
        PackResult packed = packer.pack(claim());
        assertThat(packed.fires()).hasSize(1);
        assertThat(packed.fires().get(0).segments()).hasSize(2);

        List<SegmentOutcome> outcomes = new Firer(db.dataSource()).fire(packed.fires().get(0));

        assertThat(outcomes).extracting(SegmentOutcome::result).containsOnly(FireResult.FIRED);
        assertThat(staging.count("SELECT count(*) FROM queen.log_timers")).isZero();
        List<LogContents.Message> log = LogContents.read(db.dataSource());
        assertThat(log).hasSize(20);
        assertThat(log).filteredOn(m -> m.queue().equals("orders.reminders")).extracting(LogContents.Message::txn)
                .containsExactly("txn-k0", "txn-k1", "txn-k2", "txn-k3", "txn-k4", "txn-k5", "txn-k6", "txn-k7", "txn-k8", "txn-k9");
        assertThat(staging.count("SELECT count(*) FROM queen.timer_audit_events WHERE type = 'fired'")).isEqualTo(20);
        assertThat(staging.count("SELECT count(*) FROM queen.timer_audit_outbox WHERE type = 'fired'")).isEqualTo(2);   // a row per segment
        assertThat(staging.count("SELECT (event->>'offset')::bigint FROM queen.timer_audit_events WHERE kafka_key = 'orders.reminders/k3'"))
                .isEqualTo(3);
        assertThat(staging.count("SELECT count(*) FROM queen.timer_audit_events WHERE (event->>'lateMs')::bigint >= 2900"
                + " AND event ? 'messageId' AND event->>'txn' LIKE 'txn-%' AND event->>'partition' = 'Default'")).isEqualTo(20);
        assertThat(staging.count("SELECT count(*) FROM queen.queues WHERE name = 'orders.reminders' AND namespace = 'orders'")).isEqualTo(1);
    }

    @Test
    void aFireWithAnOldTokenIsStaleAndDeliversNothing() throws Exception {
        staging.schedule(DEFAULT_TENANT, "q", "a", -1);
        List<ClaimedTimer> claimed = claim();
        staging.execute("UPDATE queen.log_timers SET claim_token = gen_random_uuid()");   // reclaimed by somebody else

        List<SegmentOutcome> outcomes = new Firer(db.dataSource()).fire(packer.pack(claimed).fires().get(0));

        assertThat(outcomes).extracting(SegmentOutcome::result).containsExactly(FireResult.STALE);
        assertThat(LogContents.read(db.dataSource())).isEmpty();
        assertThat(staging.row(DEFAULT_TENANT, "q", "a")).isNotNull();
    }

    @Test
    void staleSegmentReleasesItsOtherRowsAtOnce() throws Exception {
        for (String k : List.of("a", "b", "c")) {
            staging.schedule(DEFAULT_TENANT, "q", k, -1);
        }
        staging.schedule(DEFAULT_TENANT, "other", "x", -1);
        List<ClaimedTimer> claimed = claim();
        // "b" was reclaimed by another sweeper after a lease expiry: new token
        staging.execute("UPDATE queen.log_timers SET claim_token = gen_random_uuid() WHERE timer_key = 'b'");

        List<SegmentOutcome> outcomes = new Firer(db.dataSource()).fire(packer.pack(claimed).fires().get(0));

        assertThat(outcomes).filteredOn(o -> o.segment().destination().queue().equals("q"))
                .extracting(SegmentOutcome::result).containsExactly(FireResult.STALE);
        assertThat(outcomes).filteredOn(o -> o.segment().destination().queue().equals("other"))
                .extracting(SegmentOutcome::result).containsExactly(FireResult.FIRED);
        Staging.Row a = staging.row(DEFAULT_TENANT, "q", "a");
        assertThat(a.claimToken()).isNull();
        assertThat(a.visibleAt()).isBeforeOrEqualTo(a.dbNow());   // claimable now, not after the lease
        assertThat(a.attempts()).isZero();
        assertThat(staging.row(DEFAULT_TENANT, "q", "b").claimToken()).isNotNull();   // not ours: untouched
        assertThat(claim()).extracting(t -> t.key().timerKey()).containsExactlyInAnyOrder("a", "c");
    }

    @Test
    void aSegmentWhoseRowIsLockedBySomebodyIsStaleInsteadOfWaiting() throws Exception {
        staging.schedule(DEFAULT_TENANT, "q", "a", -1);
        staging.schedule(DEFAULT_TENANT, "q", "b", -1);
        List<ClaimedTimer> claimed = claim();
        try (var other = db.dataSource().getConnection()) {
            other.setAutoCommit(false);
            other.createStatement().execute("SELECT 1 FROM queen.log_timers WHERE timer_key = 'b' FOR UPDATE");
            List<SegmentOutcome> outcomes = new Firer(db.dataSource()).fire(packer.pack(claimed).fires().get(0));
            assertThat(outcomes).extracting(SegmentOutcome::result).containsExactly(FireResult.STALE);
            other.rollback();
        }
        assertThat(staging.row(DEFAULT_TENANT, "q", "a").claimToken()).isNull();
    }

    @Test
    void aRowSomebodyHeldForAMomentIsHandedBackAfterTheStaleFireNotAtLeaseExpiry() throws Exception {
        staging.schedule(DEFAULT_TENANT, "q", "a", -1);
        staging.schedule(DEFAULT_TENANT, "q", "b", -1);
        List<ClaimedTimer> claimed = claim();
        Delivery delivery = new Delivery(packer, new Firer(db.dataSource()),
                new Failer(db.dataSource(), Duration.ofSeconds(1), Duration.ofSeconds(1), Duration.ofSeconds(60), 5),
                new SweeperMetrics(new SimpleMeterRegistry()), 8 * 1024 * 1024, Duration.ofSeconds(15));
        AtomicReference<Throwable> failed = new AtomicReference<>();
        try (var other = db.dataSource().getConnection()) {
            // stands for another sweeper's claim statement, which locks a row for a moment while it re-checks it
            other.setAutoCommit(false);
            other.createStatement().execute("SELECT 1 FROM queen.log_timers WHERE timer_key = 'b' FOR UPDATE");
            Thread sweep = new Thread(() -> {
                try {
                    delivery.deliver(claimed, () -> false);
                } catch (Throwable e) {
                    failed.set(e);
                }
            });
            sweep.start();
            // the fire found "b" locked: the segment is stale and the fire released "a", which it held
            await().atMost(Duration.ofSeconds(10)).pollInterval(Duration.ofMillis(1))
                    .until(() -> staging.row(DEFAULT_TENANT, "q", "a").claimToken() == null);
            other.rollback();
            sweep.join();
        }
        assertThat(failed.get()).isNull();
        Staging.Row b = staging.row(DEFAULT_TENANT, "q", "b");
        assertThat(b.claimToken()).isNull();
        assertThat(b.visibleAt()).isBeforeOrEqualTo(b.dbNow());   // claimable now, not in 30 s
        assertThat(b.attempts()).isZero();
        assertThat(LogContents.read(db.dataSource())).isEmpty();
    }

    @Test
    void twoLiveSegmentsForOneDestinationAreRejected() throws Exception {
        staging.schedule(DEFAULT_TENANT, "q", "a", -1);
        staging.schedule(DEFAULT_TENANT, "q", "b", -1);
        Segment both = packer.pack(claim()).fires().get(0).segments().get(0);
        List<Segment> halves = packer.halves(both);

        assertThatThrownBy(() -> new Firer(db.dataSource()).fire(new FireBatch(halves)))
                .isInstanceOf(SQLException.class)
                .hasMessageContaining("two live segments");
        assertThat(LogContents.read(db.dataSource())).isEmpty();
    }

    @Test
    void tenantsWithIdenticalQueueAndTimerNamesGetSeparateQueuesSegmentsAndAuditKeys() throws Exception {
        UUID other = UUID.fromString("22222222-2222-2222-2222-222222222222");
        staging.schedule(DEFAULT_TENANT, "q", "same", -1);
        staging.schedule(other, "q", "same", -1);
        assertThat(staging.count("SELECT count(*) FROM queen.log_timers WHERE queue = 'q' AND timer_key = 'same'")).isEqualTo(2);

        PackResult packed = packer.pack(claim());
        assertThat(packed.fires().get(0).segments()).hasSize(2);
        new Firer(db.dataSource()).fire(packed.fires().get(0));

        assertThat(staging.count("SELECT count(DISTINCT id) FROM queen.queues WHERE name = 'q'")).isEqualTo(2);
        List<LogContents.Message> log = LogContents.read(db.dataSource());
        assertThat(log).extracting(LogContents.Message::tenantId).containsExactlyInAnyOrder(DEFAULT_TENANT, other);
        assertThat(log).extracting(LogContents.Message::partitionId).doesNotHaveDuplicates();
        assertThat(staging.count("SELECT count(DISTINCT tenant_id) FROM queen.timer_audit_events WHERE kafka_key = 'q/same' AND type = 'fired'"))
                .isEqualTo(2);
    }

    @Test
    void aMaxFireBytesSmallerThanADestinationSplitsItAcrossFiresInOrder() throws Exception {
        for (int i = 0; i < 30; i++) {
            staging.schedule(DEFAULT_TENANT, "q", String.format("k%02d", i), "Default", -10 + i * 0.1,
                    "txn-" + i, new byte[40_000], false);
        }
        Packer small = new Packer(100_000);
        PackResult packed = small.pack(claim());
        assertThat(packed.fires().size()).isGreaterThan(5);
        Firer firer = new Firer(db.dataSource());
        for (FireBatch f : packed.fires()) {
            assertThat(f.segments()).hasSize(1);
            assertThat(firer.fire(f)).extracting(SegmentOutcome::result).containsOnly(FireResult.FIRED);
        }
        assertThat(LogContents.read(db.dataSource())).extracting(LogContents.Message::txn)
                .containsExactlyElementsOf(java.util.stream.IntStream.range(0, 30).mapToObj(i -> "txn-" + i).toList());
    }
}
