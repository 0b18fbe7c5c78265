package io.queen.timers.sweeper;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.queen.timers.core.config.CommonSettings;
import io.queen.timers.stack.Stack;
import io.queen.timers.sweeper.claim.ClaimedTimer;
import io.queen.timers.sweeper.claim.Claimer;
import io.queen.timers.sweeper.fail.Failer;
import io.queen.timers.sweeper.fire.FireResult;
import io.queen.timers.sweeper.fire.Firer;
import io.queen.timers.sweeper.fire.SegmentOutcome;
import io.queen.timers.sweeper.pack.FireBatch;
import io.queen.timers.sweeper.pack.Packer;
import io.queen.timers.testkit.PerClass;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * A sweeper JVM killed with kill -9 after its claim committed and before its fire did. Its fire is held in
 * place by a lock this test holds on queen.queues (the fire provisions its destinations first), so the
 * kill lands exactly between the claim and the fire's commit; the child connects with
 * client_connection_check_interval so PostgreSQL ends the orphaned backend (and its transaction) on its
 * own, as it would for any client that vanished.
 */
class CrashIT {

    @RegisterExtension
    static final PerClass<Stack> stack = PerClass.of(Stack::shared); // a broker too: the child relays its events

    @Test
    void afterKillNineAndLeaseExpiryAnotherSweeperDeliversEachTimerExactlyOnce() throws Exception {
        Staging staging = new Staging(stack.get().owner());
        staging.execute("INSERT INTO queen.log_timers (queue, timer_key, deliver_at, txn, message_id, payload)"
                + " SELECT 'crash.q' || (g % 5), 'k' || g, now() - interval '1 second', 'txn-' || g, queen.timer_uuidv7_v1(now()), '\\x7b7d'"
                + " FROM generate_series(1, 100) g");
        Path config = Files.createTempFile("sweeper-crash", ".properties");
        Path out = Path.of("target", "crash-test-sweeper.log");
        Process child = null;
        try (Connection blocker = stack.get().owner().getConnection()) {
            blocker.setAutoCommit(false);
            try (Statement st = blocker.createStatement()) {
                st.execute("LOCK TABLE queen.queues IN ACCESS EXCLUSIVE MODE");
            }
            String url = stack.get().jdbcUrl();
            stack.get().settings(SweeperMain.SERVICE)
                    .set(CommonSettings.JDBC_URL, url + (url.contains("?") ? "&" : "?")
                            + "options=-c%20client_connection_check_interval%3D200&ApplicationName=crash-child")
                    .set(SweeperSettings.LEASE, Duration.ofSeconds(3)).set(SweeperSettings.CLEANUP_ENABLED, false)
                    .writeTo(config);
            String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
            child = new ProcessBuilder(java, "-Xmx256m", "-cp", System.getProperty("java.class.path"),
                    "io.queen.timers.sweeper.SweeperMain", "--config", config.toString())
                    .redirectErrorStream(true).redirectOutput(out.toFile()).start();

            await().atMost(60, TimeUnit.SECONDS).until(() ->
                    staging.count("SELECT count(*) FROM queen.log_timers WHERE claim_token IS NOT NULL") == 100
                    && staging.count("SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock'"
                            + " AND query LIKE '%timer_fire_v3%'") == 1);
            Map<String, UUID> oldTokens = tokens(staging);

            child.destroyForcibly().waitFor(30, TimeUnit.SECONDS);   // SIGKILL
            await().atMost(30, TimeUnit.SECONDS).until(() -> staging.count(
                    "SELECT count(*) FROM pg_stat_activity WHERE query LIKE '%timer_fire_v3%' AND application_name = 'crash-child'") == 0);
            blocker.rollback();

            // the dead sweeper's fire never committed: nothing in the log, every row still carries its token
            assertThat(LogContents.read(stack.get().owner())).isEmpty();
            assertThat(tokens(staging)).isEqualTo(oldTokens);

            // after the lease, a reclaim mints new tokens and counts the death (V122: a timer that kills its sweeper must
            // not be claimed into the same death for ever; it is fired in smaller groups, and alone its death is an attempt)
            await().atMost(30, TimeUnit.SECONDS).until(() ->
                    staging.count("SELECT count(*) FROM queen.log_timers WHERE claimed_until <= now()") == 100);
            List<ClaimedTimer> reclaimed = new Claimer(stack.get().owner(), 200, Duration.ofSeconds(30), 100).claim();
            assertThat(reclaimed).hasSize(100);
            assertThat(reclaimed).allSatisfy(t -> {
                assertThat(t.lease().claimToken()).isNotEqualTo(oldTokens.get(t.key().timerKey()));
                assertThat(t.history().attempts()).as(t.history().lastError()).isZero();   // held among 100: a death, not an attempt (V122)
                assertThat(t.history().deaths()).isEqualTo(1);
            });

            // a fire with the old tokens (what the dead sweeper would have sent) is stale and delivers nothing
            List<ClaimedTimer> withOldTokens = new ArrayList<>();
            for (ClaimedTimer t : reclaimed) {
                withOldTokens.add(new ClaimedTimer(t.key(), ClaimedTimer.Schedule.once(t.schedule().deliverAt(), t.schedule().visibleAt()),
                        t.message(), t.payload(), new ClaimedTimer.Lease(oldTokens.get(t.key().timerKey()), t.lease().claimedUntil(), null),
                        t.history()));
            }
            Firer firer = new Firer(stack.get().owner());
            for (FireBatch f : new Packer(1 << 20).pack(withOldTokens).fires()) {
                assertThat(firer.fire(f)).extracting(SegmentOutcome::result).containsOnly(FireResult.STALE);
            }
            assertThat(LogContents.read(stack.get().owner())).isEmpty();

            // hand them back and let another sweeper deliver them
            new Failer(stack.get().owner(), Duration.ofSeconds(1), Duration.ofSeconds(1), Duration.ofSeconds(60), 5).release(reclaimed);
            try (SweeperMain sweeper = Sweepers.start(stack.get(), s -> {})) {
                await().atMost(30, TimeUnit.SECONDS).until(() -> staging.count("SELECT count(*) FROM queen.log_timers") == 0);
            }
        } finally {
            if (child != null && child.isAlive()) {
                child.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
            }
            Files.deleteIfExists(config);
        }
        Map<String, Integer> counts = LogContents.txnCounts(stack.get().owner());
        assertThat(counts).hasSize(100);
        assertThat(counts.values()).allMatch(n -> n == 1);
        assertThat(staging.count("SELECT count(*) FROM queen.timer_audit_events WHERE type = 'fired' AND (event->>'attempts')::int = 0"))
                .as("each fired after one death among 100, no attempt spent").isEqualTo(100);
    }

    private static Map<String, UUID> tokens(Staging staging) throws Exception {
        Map<String, UUID> out = new HashMap<>();
        try (Connection c = stack.get().owner().getConnection(); Statement st = c.createStatement();
                ResultSet rs = st.executeQuery("SELECT timer_key, claim_token FROM queen.log_timers")) {
            while (rs.next()) {
                out.put(rs.getString(1), rs.getObject(2, UUID.class));
            }
        }
        return out;
    }
}
