package io.queen.timers.e2e;

import static io.queen.timers.sweeper.Staging.DEFAULT_TENANT;
import static org.assertj.core.api.Assertions.assertThat;

import io.queen.timers.bridge.apply.Verdict;
import io.queen.timers.sql.Migrations;
import io.queen.timers.sweeper.LogContents;
import io.queen.timers.sweeper.Staging;
import io.queen.timers.sweeper.claim.ClaimedTimer;
import io.queen.timers.sweeper.claim.Claimer;
import io.queen.timers.sweeper.fire.FireResult;
import io.queen.timers.sweeper.fire.Firer;
import io.queen.timers.sweeper.fire.SegmentOutcome;
import io.queen.timers.sweeper.pack.Packer;
import io.queen.timers.testkit.PostgresDatabase;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** Commands (through the bridge's own apply step) against rows the sweeper's claim holds. */
class TooLateIT {

    @RegisterExtension
    static final PostgresDatabase db = PostgresDatabase.initializedWith(Migrations::migrate);

    @Test
    void scheduleRescheduleAndCancelOfAClaimedRowAreTooLateAndTheFireStillDeliversIt() throws Exception {
        Staging staging = new Staging(db.dataSource());
        staging.schedule(DEFAULT_TENANT, "q", "k", -1);
        List<ClaimedTimer> claimed = new Claimer(db.dataSource(), 200, Duration.ofSeconds(30), 8).claim();
        Commands commands = new Commands(db.dataSource());
        Instant later = Instant.now().plusSeconds(3600);

        assertThat(commands.schedule(DEFAULT_TENANT, "q", "k", later)).isEqualTo(Verdict.TOO_LATE);
        assertThat(commands.reschedule(DEFAULT_TENANT, "q", "k", later)).isEqualTo(Verdict.TOO_LATE);
        assertThat(commands.cancel(DEFAULT_TENANT, "q", "k")).isEqualTo(Verdict.TOO_LATE);

        List<SegmentOutcome> out = new Firer(db.dataSource()).fire(new Packer(1 << 20).pack(claimed).fires().get(0));
        assertThat(out).extracting(SegmentOutcome::result).containsExactly(FireResult.FIRED);
        assertThat(LogContents.read(db.dataSource())).singleElement().satisfies(m -> {
            assertThat(m.txn()).isEqualTo("txn-k");
            assertThat(new String(m.frame().payload())).isEqualTo("{\"key\":\"k\"}");   // the original, not a too-late update
        });
        // after the fire: a late cancel answers absent ("no longer pending"), never "not delivered"
        assertThat(commands.cancel(DEFAULT_TENANT, "q", "k")).isEqualTo(Verdict.ABSENT);
    }
}
