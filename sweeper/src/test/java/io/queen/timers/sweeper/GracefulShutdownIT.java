package io.queen.timers.sweeper;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.queen.timers.stack.Stack;
import io.queen.timers.sweeper.claim.ClaimedTimer;
import io.queen.timers.sweeper.claim.Claimer;
import io.queen.timers.testkit.PerClass;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * close() in the middle of a backlog: the fire in flight completes or not as its transaction decides, the
 * claimed-but-unfired timers go back at once, and timers somebody else holds are not touched.
 */
class GracefulShutdownIT {

    @RegisterExtension
    static final PerClass<Stack> stack = PerClass.of(Sweepers::stack);

    @Test
    void closeMidBacklogReleasesOnlyItsOwnClaimsAndLeavesNoHalfFiredBatch() throws Exception {
        Staging staging = new Staging(stack.get().owner());
        staging.execute("INSERT INTO queen.log_timers (queue, timer_key, deliver_at, txn, message_id, payload)"
                + " SELECT 'stop.q' || (g % 20), 'k' || g, now() - interval '1 second', 'txn-' || g, queen.timer_uuidv7_v1(now()),"
                + " convert_to(rpad('{\"n\":' || g || '}', 200, ' '), 'UTF8') FROM generate_series(1, 20000) g");
        // somebody else (another sweeper) holds 50 timers
        List<ClaimedTimer> theirs = new Claimer(stack.get().owner(), 50, Duration.ofMinutes(10), 8).claim();
        assertThat(theirs).hasSize(50);

        SweeperMain sweeper = Sweepers.start(stack.get(), s -> s.set(SweeperSettings.MAX_FIRE_BYTES, 65536));
        await().atMost(30, TimeUnit.SECONDS).until(() -> LogContents.read(stack.get().owner()).size() > 500);
        sweeper.close();

        long left = staging.count("SELECT count(*) FROM queen.log_timers");
        var counts = LogContents.txnCounts(stack.get().owner());
        assertThat(counts.values()).allMatch(n -> n == 1);
        assertThat(counts.size() + left).isEqualTo(20_000);   // every timer either fired once or still staged
        assertThat(left).isGreaterThan(50);                    // it really stopped mid-backlog
        // nothing of ours is left claimed: only the other sweeper's 50 still carry a token
        assertThat(staging.count("SELECT count(*) FROM queen.log_timers WHERE claim_token IS NOT NULL")).isEqualTo(50);
        for (ClaimedTimer t : theirs) {
            assertThat(staging.row(t.key().tenantId(), t.key().queue(), t.key().timerKey()).claimToken()).isEqualTo(t.lease().claimToken());
        }
        assertThat(staging.count("SELECT count(*) FROM queen.timer_audit_events WHERE type = 'fired'")).isEqualTo(counts.size());
    }
}
