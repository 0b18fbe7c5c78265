package io.queen.timers.sweeper;

import static io.queen.timers.sweeper.Staging.DEFAULT_TENANT;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.queen.timers.stack.ServiceSettings;
import io.queen.timers.stack.Stack;
import io.queen.timers.testkit.PerClass;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** The whole sweeper in-process (SweeperMain.start) against real PostgreSQL: when and in which order timers enter the log. */
class SweepLoopIT {

    @RegisterExtension
    static final PerClass<Stack> stack = PerClass.of(Sweepers::stack);

    private static Staging staging;
    private static Poison poison;

    @BeforeAll
    static void installPoison() {
        staging = new Staging(stack.get().owner());
        poison = new Poison(staging).install();
    }

    @BeforeEach
    void clean() {
        staging.clear();
        poison.cureAll();
    }

    @Test
    void noTimerEntersTheLogBeforeItsDeliveryTime() throws Exception {
        for (int i = 0; i < 10; i++) {
            staging.schedule(DEFAULT_TENANT, "q", "k" + i, 0.2 + i * 0.15);
        }
        staging.schedule(DEFAULT_TENANT, "q", "far", 60);
        try (SweeperMain sweeper = Sweepers.start(stack.get(), s -> {})) {
            await().atMost(20, TimeUnit.SECONDS).until(() -> LogContents.read(stack.get().owner()).size() == 10);
        }
        // on PostgreSQL's clock: every segment was created at or after the deliver_at of each of its timers
        assertThat(staging.count("SELECT count(*) FROM queen.timer_audit_events WHERE type = 'fired'")).isEqualTo(10);
        assertThat(staging.count("SELECT count(*) FROM queen.timer_audit_events WHERE type = 'fired' AND (event->>'lateMs')::bigint < 0")).isZero();
        assertThat(staging.row(DEFAULT_TENANT, "q", "far")).isNotNull();
        assertThat(LogContents.read(stack.get().owner())).extracting(LogContents.Message::txn).doesNotContain("txn-far");
    }

    @Test
    void aPastDueTimerFiresOnTheFirstCycleWithItsLatenessReported() throws Exception {
        staging.schedule(DEFAULT_TENANT, "q", "late", -5);
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        try (SweeperMain sweeper = Sweepers.start(stack.get(), s -> {}, registry)) {
            await().atMost(10, TimeUnit.SECONDS).until(() -> LogContents.read(stack.get().owner()).size() == 1);
        }
        assertThat(staging.count("SELECT (event->>'lateMs')::bigint FROM queen.timer_audit_events WHERE type = 'fired'"))
                .isBetween(5_000L, 60_000L);
        assertThat(registry.get("queen.timers.fired").tag("result", "fired").counter().count()).isEqualTo(1.0);
        assertThat(registry.get("queen.timers.fire.lateness").timer().count()).isEqualTo(1);
        assertThat(registry.get("queen.timers.fire.lateness").timer().max(TimeUnit.MILLISECONDS)).isGreaterThanOrEqualTo(5_000);
        assertThat(registry.get("queen.timers.claim.duration").timer().count()).isGreaterThanOrEqualTo(1);
        assertThat(registry.get("queen.timers.fire.duration").timer().count()).isGreaterThanOrEqualTo(1);
    }

    /**
     * Issue 24, point 8: under a backlog a cycle stops claiming after sweeper.cycle.claim.max and fires what it holds,
     * so a timer claimed first (a quiet tenant's, beside another's flood) waits for one short cycle, not for a fire's
     * worth of bytes. With a bound shorter than one claim, every cycle claims once: 1,000 due timers in one
     * destination go out in at least 1,000 / 64 fires (without the bound one cycle claimed them all: one fire).
     */
    @Test
    void underABacklogACycleStopsClaimingAfterItsBoundAndFires() throws Exception {
        SimpleMeterRegistry registry = drainABacklogOneClaimPerCycle("backlog", s -> {});
        assertThat(registry.get("queen.timers.fire.duration").timer().count()).as("fire calls").isGreaterThanOrEqualTo(1_000 / 64);
        assertThat(LogContents.read(stack.get().owner())).hasSize(1_000);
    }

    /**
     * Issue 25: a loop that keeps finding work claims without probing first, until its last probe is
     * sweeper.sleep.near old (30 s here, so never within this test): 1,000 due timers claimed 64 at a time take
     * 16 or more cycles and 2 or 3 probes, the first and the ones that find the table empty. Without it, a probe per cycle.
     */
    @Test
    void aLoopThatKeepsFindingWorkDoesNotProbeEveryCycle() throws Exception {
        SimpleMeterRegistry registry = drainABacklogOneClaimPerCycle("working",
                s -> s.set(SweeperSettings.SLEEP_NEAR, Duration.ofSeconds(30)).set(SweeperSettings.IDLE_MAX, Duration.ofSeconds(30)));
        assertThat(registry.get("queen.timers.fire.duration").timer().count()).as("fire calls").isGreaterThanOrEqualTo(1_000 / 64);
        assertThat(registry.get("queen.timers.probes").counter().count()).as("probes").isLessThanOrEqualTo(4);
    }

    /**
     * 1,000 timers due in {@code queue}, swept by one loop that claims 64 at a time and fires after each claim
     * (sweeper.cycle.claim.max shorter than one claim), with {@code settings} on top, until the table is empty.
     */
    private static SimpleMeterRegistry drainABacklogOneClaimPerCycle(String queue, Consumer<ServiceSettings> settings) throws Exception {
        for (int i = 0; i < 1_000; i++) {
            staging.schedule(DEFAULT_TENANT, queue, "k" + i, -1);
        }
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        try (SweeperMain sweeper = Sweepers.start(stack.get(), s -> settings.accept(s.set(SweeperSettings.CYCLE_CLAIM_MAX, Duration.ofMillis(1))
                .set(SweeperSettings.BATCH_SIZE, 64).set(SweeperSettings.WORKERS, 1)), registry)) {
            await().atMost(60, TimeUnit.SECONDS).until(() -> staging.count("SELECT count(*) FROM queen.log_timers") == 0);
        }
        return registry;
    }

    @Test
    void fireOrderInOneDestinationIsVisibleAtOrderAlsoAcrossABackoff() throws Exception {
        // b fails once (permanently) and backs off; when it is retried, its visible_at is later than c's
        // and earlier than d's, and that is where it lands in the log
        poison.poison("txn-b");
        staging.schedule(DEFAULT_TENANT, "q", "a", -5);
        staging.schedule(DEFAULT_TENANT, "q", "b", -4);
        staging.schedule(DEFAULT_TENANT, "q", "c", -3);
        staging.schedule(DEFAULT_TENANT, "q", "d", 4);
        staging.schedule(DEFAULT_TENANT, "q", "e", 4.5);
        try (SweeperMain sweeper = Sweepers.start(stack.get(), s -> s.set(SweeperSettings.BACKOFF_BASE, Duration.ofMillis(300)))) {
            await().atMost(10, TimeUnit.SECONDS).until(() -> {
                Staging.Row b = staging.row(DEFAULT_TENANT, "q", "b");
                return b != null && b.attempts() == 1;
            });
            poison.cure("txn-b");
            await().atMost(20, TimeUnit.SECONDS).until(() -> LogContents.read(stack.get().owner()).size() == 5);
        }
        List<LogContents.Message> log = LogContents.read(stack.get().owner());
        assertThat(log).extracting(LogContents.Message::txn).containsExactly("txn-a", "txn-c", "txn-b", "txn-d", "txn-e");
        assertThat(log).extracting(LogContents.Message::offset).containsExactly(0L, 1L, 2L, 3L, 4L);
    }

    @Test
    void aNotifyWakesAnIdleSweeperAtOnce() throws Exception {
        try (SweeperMain sweeper = Sweepers.start(stack.get(), s -> s.set(SweeperSettings.IDLE_MAX, Duration.ofSeconds(60)).set(SweeperSettings.SLEEP_NEAR, Duration.ofSeconds(30)))) {
            Thread.sleep(500);   // the sweeper found nothing and went to sleep for 30 s
            staging.schedule(DEFAULT_TENANT, "q", "woken", -1);
            staging.execute("NOTIFY queen_timers_wake");
            await().atMost(Duration.ofSeconds(10)).until(() -> LogContents.read(stack.get().owner()).size() == 1);
        }
    }
}
