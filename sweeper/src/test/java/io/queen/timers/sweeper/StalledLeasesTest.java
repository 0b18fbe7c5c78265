package io.queen.timers.sweeper;

import static io.queen.timers.sweeper.Staging.DEFAULT_TENANT;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.queen.timers.sql.Migrations;
import io.queen.timers.sweeper.claim.Claimer;
import io.queen.timers.testkit.PostgresDatabase;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** What a death costs a timer that did not cause it (V122; DeathIsAPoisonTest is the guilty side). */
class StalledLeasesTest {

    @RegisterExtension
    static final PostgresDatabase db = PostgresDatabase.initializedWith(Migrations::migrate);

    /**
     * The other side of the same count: a lease also runs out when its sweeper is paused past it or loses the database
     * mid-fire. Timers held among others when that happens, over and over, spend no attempt (V122) and fire once,
     * even with sweeper.max.attempts at 2; under V120's count they were dead-lettered (the fault harness, 2026-12-04).
     */
    @Test
    void leasesThatRunOutAmongOthersAgainAndAgainSpendNoAttempt() throws Exception {
        Staging staging = new Staging(db.dataSource());
        for (int i = 0; i < 3; i++) {
            staging.schedule(DEFAULT_TENANT, "stalled.q", "held-" + i, -1);
        }
        Claimer stalling = new Claimer(db.dataSource(), 200, Duration.ofMillis(300), 8);
        for (int stall = 0; stall < 6; stall++) {
            assertThat(stalling.claim()).hasSize(3);   // held, then never handed back: the lease runs out in "our" hands
            Thread.sleep(350);
        }
        assertThat(staging.count("SELECT count(*) FROM queen.log_timers WHERE deaths = 5 AND attempts = 0")).isEqualTo(3);
        try (SweeperMain sweeper = Sweepers.start(db, Map.of(SweeperSettings.MAX_ATTEMPTS, "2"))) {
            await().atMost(60, TimeUnit.SECONDS).until(() -> staging.count("SELECT count(*) FROM queen.log_timers") == 0);
        }
        assertThat(staging.count("SELECT count(*) FROM queen.timer_audit_events WHERE type = 'dead_lettered' AND event->>'queue' = 'stalled.q'"))
                .isZero();
        assertThat(staging.count("SELECT count(*) FROM queen.timer_audit_events WHERE type = 'fired' AND event->>'queue' = 'stalled.q'"))
                .isEqualTo(3);
    }
}
