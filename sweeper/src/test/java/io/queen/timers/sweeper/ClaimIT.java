package io.queen.timers.sweeper;

import static io.queen.timers.sweeper.Staging.DEFAULT_TENANT;
import static org.assertj.core.api.Assertions.assertThat;

import io.queen.timers.sql.Migrations;
import io.queen.timers.sweeper.claim.ClaimedTimer;
import io.queen.timers.sweeper.claim.Claimer;
import io.queen.timers.sweeper.fail.Failer;
import io.queen.timers.sweeper.probe.DueProbe;
import io.queen.timers.sweeper.probe.ProbeResult;
import io.queen.timers.testkit.PostgresDatabase;
import java.sql.Connection;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** The due probe and the claim (V030, V031) against real PostgreSQL. */
class ClaimIT {

    @RegisterExtension
    static final PostgresDatabase db = PostgresDatabase.initializedWith(Migrations::migrate);

    private Staging staging;

    @BeforeEach
    void clean() {
        staging = new Staging(db.dataSource());
        staging.execute("DELETE FROM queen.log_timers");
    }

    private Claimer claimer(int batch) {
        return new Claimer(db.dataSource(), batch, Duration.ofSeconds(30), 8);
    }

    @Test
    void claimTakesDueTimersOnlyNeverEarly() throws Exception {
        staging.schedule(DEFAULT_TENANT, "q", "past", -1);
        staging.schedule(DEFAULT_TENANT, "q", "future", 60);

        List<ClaimedTimer> claimed = claimer(200).claim();

        assertThat(claimed).extracting(t -> t.key().timerKey()).containsExactly("past");
        assertThat(staging.row(DEFAULT_TENANT, "q", "future").claimToken()).isNull();
    }

    @Test
    void oneTenantFillsAtMost64TimesItsShareSoThatIsWhatAFullClaimMeans() throws Exception {
        staging.execute("""
                INSERT INTO queen.log_timers (queue, timer_key, deliver_at, txn, message_id, payload)
                SELECT 'q', 'k' || g, now() - interval '1 second', 'txn-' || g, queen.timer_uuidv7_v1(now()), '\\x7b7d'::bytea
                  FROM generate_series(1, 3000) g""");
        assertThat(staging.count("SELECT min(n) FROM (SELECT count(*) AS n FROM queen.log_timers GROUP BY shard) s"))
                .isGreaterThanOrEqualTo(16);   // every shard holds more than one slice of batch 1024

        Claimer big = claimer(1024);
        List<ClaimedTimer> claimed = big.claim();

        assertThat(big.fullClaim()).isEqualTo(512);
        assertThat(claimed).hasSize(big.fullClaim());   // the per-tenant share caps it below the batch
        assertThat(claimer(200).fullClaim()).isEqualTo(200);
    }

    @Test
    void everyClaimedRowGetsItsOwnTokenAndALeaseOnTheDatabaseClock() throws Exception {
        for (int i = 0; i < 50; i++) {
            staging.schedule(DEFAULT_TENANT, "q", "k" + i, -1);
        }
        List<ClaimedTimer> claimed = claimer(200).claim();

        assertThat(claimed).hasSize(50);
        assertThat(claimed.stream().map(t -> t.lease().claimToken()).distinct()).hasSize(50);
        Staging.Row row = staging.row(DEFAULT_TENANT, "q", "k7");
        assertThat(row.claimedUntil()).isBetween(row.dbNow().plusSeconds(25), row.dbNow().plusSeconds(31));
        assertThat(row.visibleAt()).isEqualTo(row.claimedUntil());
        assertThat(row.attempts()).isZero();
        // claimed rows are in somebody's hands: a second claim finds nothing
        assertThat(claimer(200).claim()).isEmpty();
    }

    @Test
    void rowsComeBackInPreClaimVisibleAtOrder() throws Exception {
        List<Integer> order = new ArrayList<>();
        for (int i = 0; i < 40; i++) {
            order.add(i);
        }
        Collections.shuffle(order);
        for (int i : order) {
            staging.schedule(DEFAULT_TENANT, "q", "key-" + (char) ('a' + (i * 7) % 26) + i, -100 + i);
        }
        List<ClaimedTimer> claimed = claimer(200).claim();

        assertThat(claimed).hasSize(40);
        assertThat(claimed).extracting(t -> t.schedule().visibleAt()).isSorted();
        assertThat(claimed).extracting(t -> t.schedule().deliverAt()).isSorted();
    }

    @Test
    void perShardSliceIsMaxOfBatchOver64AndEightAndATenantGetsAtMostItsShareOfEachShard() throws Exception {
        for (int i = 0; i < 2000; i++) {
            staging.schedule(DEFAULT_TENANT, "q", "k" + i, -1);
        }
        // 2000 rows over 64 shards (~31 each); batch 10000 -> slice 157; no tenant cap in the way: all of them
        assertThat(new Claimer(db.dataSource(), 10_000, Duration.ofSeconds(30), 10_000).claim()).hasSize(2000);
        staging.execute("UPDATE queen.log_timers SET claim_token = NULL, claimed_until = NULL");

        // the same claim with the default cap of 8 per tenant per shard: 64 x 8
        assertThat(new Claimer(db.dataSource(), 10_000, Duration.ofSeconds(30), 8).claim()).hasSize(512);
        staging.execute("UPDATE queen.log_timers SET claim_token = NULL, claimed_until = NULL");

        List<ClaimedTimer> claimed = new Claimer(db.dataSource(), 64, Duration.ofSeconds(30), 10_000).claim();
        Map<Long, Integer> perShard = new HashMap<>();
        for (ClaimedTimer t : claimed) {
            perShard.merge(staging.count("SELECT shard FROM queen.log_timers WHERE timer_key = '" + t.key().timerKey() + "'"), 1, Integer::sum);
        }
        assertThat(claimed).hasSize(64);   // the batch
        assertThat(perShard.values()).allMatch(n -> n <= 8);   // slice max(ceil(64/64), 8) = 8
    }

    @Test
    void roundRobinOverTenantsInterleavesTenantsInsteadOfDrainingTheFirst() throws Exception {
        UUID first = UUID.fromString("00000000-0000-0000-0000-0000000000aa");
        UUID second = UUID.fromString("ffffffff-0000-0000-0000-0000000000bb");
        // both tenants due at the same instant; without round-robin the cut to the batch would take the
        // tenant that sorts first, 20 of 20
        staging.execute("INSERT INTO queen.log_timers (tenant_id, queue, timer_key, deliver_at, txn, message_id, payload)"
                + " SELECT '" + second + "', 'q', 'b' || g, now() - interval '10 s', 't' || g, queen.timer_uuidv7_v1(now()), '\\x7b7d'"
                + " FROM generate_series(1, 5) g");
        staging.execute("INSERT INTO queen.log_timers (tenant_id, queue, timer_key, deliver_at, txn, message_id, payload)"
                + " SELECT '" + first + "', 'q', 'a' || g, now() - interval '10 s', 't' || g, queen.timer_uuidv7_v1(now()), '\\x7b7d'"
                + " FROM generate_series(1, 1000) g");

        List<ClaimedTimer> claimed = claimer(20).claim();

        assertThat(claimed).hasSize(20);
        assertThat(claimed).filteredOn(t -> t.key().tenantId().equals(second)).hasSize(5);
    }

    /**
     * Issue 24, point 8: a flood of one tenant's timers, all due earlier than another tenant's one due timer, fills every
     * shard's earliest slice; the quiet tenant's timer is in the very next claim all the same (its own tenant slice, V125).
     */
    @Test
    void aQuietTenantsDueTimerIsClaimedAheadOfAnotherTenantsFloodOfEarlierOnes() throws Exception {
        UUID flooder = UUID.fromString("00000000-0000-0000-0000-0000000000aa");
        UUID quiet = UUID.fromString("ffffffff-0000-0000-0000-0000000000bb");
        staging.execute("INSERT INTO queen.log_timers (tenant_id, queue, timer_key, deliver_at, txn, message_id, payload)"
                + " SELECT '" + flooder + "', 'q', 'f' || g, now() - interval '1 hour' + g * interval '1 ms', 't' || g,"
                + " queen.timer_uuidv7_v1(now()), '\\x7b7d' FROM generate_series(1, 5000) g");
        staging.execute("INSERT INTO queen.log_timers (tenant_id, queue, timer_key, deliver_at, txn, message_id, payload)"
                + " VALUES ('" + quiet + "', 'q', 'due', now() - interval '1 second', 't', queen.timer_uuidv7_v1(now()), '\\x7b7d')");
        assertThat(staging.count("SELECT min(n) FROM (SELECT count(*) AS n FROM queen.log_timers WHERE tenant_id = '" + flooder
                + "' GROUP BY shard) s")).isGreaterThan(8);   // every shard's slice of batch 64 is the flood's alone

        List<ClaimedTimer> claimed = claimer(64).claim();

        assertThat(claimed).hasSize(64);
        assertThat(claimed).filteredOn(t -> t.key().tenantId().equals(quiet)).extracting(t -> t.key().timerKey()).containsExactly("due");
    }

    @Test
    void claimSkipsRowsSomebodyHoldsInsteadOfWaiting() throws Exception {
        staging.schedule(DEFAULT_TENANT, "q", "held", -1);
        staging.schedule(DEFAULT_TENANT, "q", "free", -1);
        try (Connection other = db.dataSource().getConnection()) {
            other.setAutoCommit(false);
            try (Statement st = other.createStatement()) {
                st.execute("SELECT 1 FROM queen.log_timers WHERE timer_key = 'held' FOR UPDATE");
            }
            List<ClaimedTimer> claimed = claimer(200).claim();   // returns at once: SKIP LOCKED
            assertThat(claimed).extracting(t -> t.key().timerKey()).containsExactly("free");
            other.rollback();
        }
        assertThat(claimer(200).claim()).extracting(t -> t.key().timerKey()).containsExactly("held");
    }

    @Test
    void probeReportsWakeUpDueCountAndLatenessFromTheDatabaseClock() throws Exception {
        DueProbe probe = new DueProbe(db.dataSource(), 3);
        ProbeResult empty = probe.probe();
        assertThat(empty.nextVisibleAt()).isEmpty();
        assertThat(empty.due()).isZero();

        staging.schedule(DEFAULT_TENANT, "q", "soon", 60);
        ProbeResult waiting = probe.probe();
        assertThat(waiting.due()).isZero();
        assertThat(waiting.untilNext().orElseThrow()).isBetween(Duration.ofSeconds(55), Duration.ofSeconds(61));
        assertThat(waiting.oldestLateness()).isZero();

        for (int i = 0; i < 5; i++) {
            staging.schedule(DEFAULT_TENANT, "q", "late" + i, -10 - i);
        }
        ProbeResult late = probe.probe();
        assertThat(late.due()).isEqualTo(3);   // capped
        assertThat(late.oldestLateness()).isBetween(Duration.ofSeconds(14), Duration.ofSeconds(20));

        claimer(200).claim();
        assertThat(probe.probe().due()).isZero();   // claimed rows are nobody's due work
    }

    @Test
    void aReclaimAfterLeaseExpiryMintsNewTokensAndCountsTheAbandonedLeaseAsADeathNotAnAttempt() throws Exception {
        staging.schedule(DEFAULT_TENANT, "q", "k", -1);
        Claimer shortLease = new Claimer(db.dataSource(), 200, Duration.ofMillis(1000), 8);
        UUID first = shortLease.claim().get(0).lease().claimToken();
        Thread.sleep(1100);
        List<ClaimedTimer> again = shortLease.claim();
        assertThat(again).hasSize(1);
        assertThat(again.get(0).lease().claimToken()).isNotEqualTo(first);
        // the lease ran out with its token still set: the sweeper holding it died, stalled or lost the database (V122).
        // It held this timer among others (nothing marked it alone): a death, which narrows its next group, no attempt
        assertThat(again.get(0).history().attempts()).isZero();
        assertThat(again.get(0).history().deaths()).isEqualTo(1);
        assertThat(again.get(0).suspect()).isTrue();
        assertThat(again.get(0).history().lastError()).startsWith("abandoned:").contains("death 1, no attempt spent");
        assertThat(staging.row(DEFAULT_TENANT, "q", "k")).isNotNull();
        Set<UUID> tokens = new HashSet<>(List.of(first, again.get(0).lease().claimToken()));
        assertThat(tokens).hasSize(2);
    }

    @Test
    void aLeaseThatRunsOutWhileTheTimerIsFiredAloneSpendsAnAttempt() throws Exception {
        staging.schedule(DEFAULT_TENANT, "q", "k", -1);
        Claimer shortLease = new Claimer(db.dataSource(), 200, Duration.ofMillis(1000), 8);
        Failer failer = new Failer(db.dataSource(), Duration.ofSeconds(1), Duration.ofSeconds(1), Duration.ofSeconds(60), 5);
        List<ClaimedTimer> held = shortLease.claim();
        assertThat(failer.holdAlone(held)).isEqualTo(1);
        Thread.sleep(1100);
        ClaimedTimer again = shortLease.claim().get(0);
        assertThat(again.history().attempts()).isEqualTo(1);
        assertThat(again.history().deaths()).isEqualTo(1);
        assertThat(again.history().lastError()).startsWith("abandoned:").contains("alone").contains("attempt 1");
        // the mark belongs to that lease only: this one, not marked, runs out as a death and spends nothing
        Thread.sleep(1100);
        ClaimedTimer third = shortLease.claim().get(0);
        assertThat(third.history().attempts()).isEqualTo(1);
        assertThat(third.history().deaths()).isEqualTo(2);
        // a token that is no longer ours marks nothing
        assertThat(failer.holdAlone(held)).isZero();
    }
}
