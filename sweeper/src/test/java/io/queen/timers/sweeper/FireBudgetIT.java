package io.queen.timers.sweeper;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.queen.timers.stack.Stack;
import io.queen.timers.sweeper.claim.ClaimedTimer;
import io.queen.timers.sweeper.claim.Claimer;
import io.queen.timers.sweeper.claim.FireBudget;
import io.queen.timers.testkit.PerClass;
import java.time.Duration;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Issue 47, point 2: the per-tenant fire budget (sweeper.tenant.fires.per.second, timer_claim_v6, FireBudget). While another
 * tenant has a timer due within sweeper.sleep.near, a tenant gets at most its tokens per claim and the other tenant's due
 * timers are in the same claim; a tenant alone is never held; what a held tenant leaves stays due and fires later.
 * The claims run on a clock of the test's own (the buckets'); the running sweeper's flood is counted on the database's.
 */
class FireBudgetIT {

    @RegisterExtension
    static final PerClass<Stack> stack = PerClass.of(Sweepers::stack);

    static final UUID FLOOD = UUID.fromString("00000000-0000-0000-0000-0000000000aa");
    static final UUID QUIET = UUID.fromString("ffffffff-0000-0000-0000-0000000000bb");
    /** 100 fires per second: a burst of 10. */
    static final int RATE = 100;

    private Staging staging;
    private final AtomicLong clock = new AtomicLong();
    private FireBudget budget;

    @BeforeEach
    void clean() {
        staging = new Staging(stack.get().owner());
        staging.clear();
        budget = new FireBudget(RATE, Duration.ofSeconds(1), clock::get);
    }

    private Claimer claimer() {
        return new Claimer(stack.get().owner(), 512, Duration.ofSeconds(30), 8, Long.MAX_VALUE, budget);
    }

    /** {@code n} timers of {@code tenant} due from {@code fromSeconds} on, one millisecond apart (database clock). */
    private void stage(UUID tenant, String prefix, int n, double fromSeconds) {
        staging.execute("INSERT INTO queen.log_timers (tenant_id, queue, timer_key, deliver_at, txn, message_id, payload)"
                + " SELECT '" + tenant + "', '" + prefix + ".q', '" + prefix + "' || g, now() + make_interval(secs => " + fromSeconds
                + ") + g * interval '1 ms', 't-" + prefix + "' || g, queen.timer_uuidv7_v1(now()), '\\x7b7d' FROM generate_series(1, " + n + ") g");
    }

    private static long of(List<ClaimedTimer> claimed, UUID tenant) {
        return claimed.stream().filter(t -> t.key().tenantId().equals(tenant)).count();
    }

    @Test
    void whileAnotherTenantHasDueTimersAFloodGetsItsTokensPerClaimAndTheOtherTenantIsInEveryClaim() throws Exception {
        stage(FLOOD, "f", 2_000, -60);
        stage(QUIET, "q", 3, -1);
        Claimer claimer = claimer();

        List<ClaimedTimer> first = claimer.claim();
        assertThat(of(first, FLOOD)).as("a full bucket: a tenth of a second of 100/s").isEqualTo(10);
        assertThat(of(first, QUIET)).isEqualTo(3);

        stage(QUIET, "r", 2, -0.5);
        List<ClaimedTimer> second = claimer.claim();   // no time has passed: the flood's bucket is empty
        assertThat(of(second, FLOOD)).isZero();
        assertThat(second).extracting(t -> t.key().timerKey()).containsExactlyInAnyOrder("r1", "r2");
        assertThat(claimer.heldFor()).as("an empty claim waits for the budget").isPresent();

        clock.addAndGet(Duration.ofMillis(50).toNanos());   // 5 tokens
        stage(QUIET, "s", 1, -0.1);
        List<ClaimedTimer> third = claimer.claim();
        assertThat(of(third, FLOOD)).isEqualTo(5);
        assertThat(third).filteredOn(t -> t.key().tenantId().equals(QUIET)).extracting(t -> t.key().timerKey()).containsExactly("s1");
        // nothing is skipped: the flood's rows it left are still there, due and unclaimed
        assertThat(staging.count("SELECT count(*) FROM queen.log_timers WHERE tenant_id = '" + FLOOD + "' AND claim_token IS NULL"
                + " AND visible_at <= now()")).isEqualTo(2_000 - 15);
    }

    @Test
    void aTimerOfAnotherTenantDueWithinNearBindsTheBudgetAndOneFurtherOutDoesNot() throws Exception {
        stage(FLOOD, "f", 2_000, -60);
        Claimer claimer = claimer();
        claimer.claim();   // alone: a full claim, which leaves its bucket empty
        stage(QUIET, "far", 1, 5);   // beyond near (1 s): not contention

        assertThat(of(claimer.claim(), FLOOD)).as("another tenant's timer 5 s out holds nobody").isEqualTo(512);

        stage(QUIET, "near", 1, 0.5);   // within near: contention, though it is not due yet
        assertThat(claimer.claim()).isEmpty();
    }

    @Test
    void aTenantAloneIsNeverHeld() throws Exception {
        stage(FLOOD, "f", 2_000, -60);
        Claimer claimer = claimer();

        List<ClaimedTimer> first = claimer.claim();
        List<ClaimedTimer> second = claimer.claim();   // its bucket is empty, and no other tenant has work near

        assertThat(first).hasSize(512);
        assertThat(second).hasSize(512);
        // its bucket is still empty, and yet the empty claim after its last timers does not wait for the budget: nothing held it
        int rest = 0;
        for (List<ClaimedTimer> more = claimer.claim(); !more.isEmpty(); more = claimer.claim()) {
            rest += more.size();
        }
        assertThat(rest).isEqualTo(2_000 - 2 * 512);
        assertThat(claimer.heldFor()).as("a wait for the budget after a tenant alone drained").isEmpty();
    }

    /**
     * A running sweeper (2 loops, sweeper.sleep.near 200 ms): the flood's 2,000 due timers beside a quiet tenant with a timer
     * due every 100 ms for 3 s, so that until its last one is due it always has one within near. Until then the flood fires
     * at most its budget over that time (on the database's clock: segment created_at, from before the sweeper started) plus
     * a burst per loop and one more, and a loop that finds nothing to claim while it is held waits for its budget; afterwards,
     * alone, the flood is not held, and all of it fires.
     */
    @Test
    void aRunningSweeperFiresAFloodAtItsBudgetWhileAnotherTenantHasWorkAndAllOfItAfterwards() {
        stage(FLOOD, "f", 2_000, -60);
        stage(QUIET, "q", 30, 0);
        staging.execute("UPDATE queen.log_timers SET deliver_at = deliver_at + (substring(timer_key FROM 2)::int - 1) * interval '99 ms'"
                + " WHERE tenant_id = '" + QUIET + "'");   // q1 due now, then every 100 ms
        long before = staging.count("SELECT (extract(epoch FROM clock_timestamp()) * 1000)::bigint");
        long lastQuiet = staging.count("SELECT (extract(epoch FROM max(deliver_at)) * 1000)::bigint FROM queen.log_timers"
                + " WHERE tenant_id = '" + QUIET + "'");

        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        try (SweeperMain sweeper = Sweepers.start(stack.get(), s -> s.set(SweeperSettings.TENANT_FIRES_PER_SECOND, RATE), registry)) {
            await().atMost(60, TimeUnit.SECONDS).until(() -> quietFired() == 30);
            long floodMeanwhile = LogContents.read(stack.get().owner()).stream()
                    .filter(m -> m.tenantId().equals(FLOOD) && m.createdAt().toEpochMilli() <= lastQuiet).count();
            long budgetMeanwhile = RATE * (lastQuiet - before) / 1000 + 3L * (RATE / 10);
            System.out.printf("FireBudgetIT: the flood fired %d in the %d ms until the quiet tenant's last timer was due (budget %d)%n",
                    floodMeanwhile, lastQuiet - before, budgetMeanwhile);
            assertThat(floodMeanwhile).as("the flood's fires while the quiet tenant had work near").isLessThanOrEqualTo(budgetMeanwhile);
            // a loop that claimed nothing while the flood was held waited for its budget instead of claiming again at once
            assertThat(registry.get("queen.timers.budget.waits").counter().count()).isPositive();

            await().atMost(60, TimeUnit.SECONDS).until(() -> staging.count("SELECT count(*) FROM queen.log_timers") == 0);
        }
        assertThat(LogContents.read(stack.get().owner())).filteredOn(m -> m.tenantId().equals(FLOOD)).hasSize(2_000);
    }

    /**
     * As shipped: the budget is on by default (no setting here), and a tenant alone is still never held. A running sweeper
     * fires five seconds' worth of the default budget of one tenant's due timers, with no other tenant staged, faster than
     * the budget: in its busiest second (segment created_at, the database's clock) more than a second's budget and a burst,
     * which a held tenant never fires.
     */
    @Test
    void aTenantAloneFiresFasterThanTheDefaultBudget() {
        int shipped = SweeperSettings.from(Sweepers.settings(stack.get()).config()).claim().tenantFiresPerSecond();
        assertThat(shipped).as("the fire budget is on as shipped").isPositive();
        stage(FLOOD, "f", 5 * shipped, -60);

        try (SweeperMain sweeper = Sweepers.start(stack.get(), s -> {})) {
            await().atMost(60, TimeUnit.SECONDS).until(() -> staging.count("SELECT count(*) FROM queen.log_timers") == 0);
        }
        List<Long> fired = LogContents.read(stack.get().owner()).stream().map(m -> m.createdAt().toEpochMilli()).sorted().toList();
        assertThat(fired).hasSize(5 * shipped);
        int busiest = 0;
        for (int from = 0, to = 0; from < fired.size(); from++) {   // the most fires within any one second
            while (to < fired.size() && fired.get(to) < fired.get(from) + 1_000) {
                to++;
            }
            busiest = Math.max(busiest, to - from);
        }
        int burst = new FireBudget(shipped, Duration.ofSeconds(1), System::nanoTime).burst();
        System.out.printf("FireBudgetIT: a tenant alone fired %d in its busiest second (default budget %d a second, burst %d)%n",
                busiest, shipped, burst);
        assertThat(busiest).as("fires of a tenant alone in its busiest second").isGreaterThan(shipped + burst);
    }

    private long quietFired() {
        return LogContents.read(stack.get().owner()).stream().filter(m -> m.tenantId().equals(QUIET)).count();
    }
}
