package io.queen.timers.sweeper;

import static io.queen.timers.sweeper.Staging.DEFAULT_TENANT;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.queen.timers.core.config.HealthSettings;
import io.queen.timers.stack.Stack;
import io.queen.timers.testkit.PerClass;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * One destination's partition row locked elsewhere for long (a stopped backend, another writer's long
 * transaction): the fire of a claim that holds it waits out its lock timeout. The claim's other
 * destinations must fire anyway (the fire is retried in halves), and while nothing but the held
 * destination is due, readiness must say that nothing fires and why (no completed cycle hides it). After
 * the lock goes, every timer has fired once, and none spent an attempt.
 */
class HeldDestinationLockIT {

    @RegisterExtension
    static final PerClass<Stack> stack = PerClass.of(Sweepers::stack);

    @Test
    void aHeldPartitionLockDelaysOnlyItsDestinationAndReadinessSaysNothingFires() throws Exception {
        Staging staging = new Staging(stack.get().owner());
        try (SweeperMain sweeper = Sweepers.start(stack.get(), s -> s.set(SweeperSettings.LOCK_TIMEOUT, Duration.ofSeconds(1))
                .set(SweeperSettings.STATEMENT_TIMEOUT, Duration.ofSeconds(5)).set(SweeperSettings.LEASE, Duration.ofSeconds(8))
                .set(SweeperSettings.WORKERS, 1).set(HealthSettings.FAILING_AFTER, Duration.ofSeconds(1)))) {
            staging.schedule(DEFAULT_TENANT, "held.q", "first", -1);   // provisions the partition the test then holds
            await().atMost(30, TimeUnit.SECONDS).until(() -> staging.count("SELECT count(*) FROM queen.log_timers") == 0);

            try (Connection holder = stack.get().owner().getConnection()) {
                holder.setAutoCommit(false);
                try (Statement st = holder.createStatement();
                     ResultSet rs = st.executeQuery("""
                             SELECT p.id FROM queen.log_partitions p JOIN queen.queues q ON q.id = p.queue_id
                              WHERE q.name = 'held.q' FOR UPDATE OF p""")) {
                    assertThat(rs.next()).as("held.q's partition exists").isTrue();
                }
                // due together, so one claim holds them all and packs them into one fire of four segments
                for (String queue : List.of("held.q", "free.a", "free.b", "free.c")) {
                    for (int i = 0; i < 5; i++) {
                        staging.schedule(DEFAULT_TENANT, queue, queue + "-" + i, -0.5);
                    }
                }
                await().atMost(60, TimeUnit.SECONDS).until(() ->
                        staging.count("SELECT count(*) FROM queen.log_timers WHERE queue LIKE 'free.%'") == 0);
                assertThat(staging.count("SELECT count(*) FROM queen.log_timers WHERE queue = 'held.q'"))
                        .as("the held destination waits for its lock").isEqualTo(5);

                // only the held destination is due now: every cycle claims it and fires nothing
                await().atMost(60, TimeUnit.SECONDS).pollInterval(50, TimeUnit.MILLISECONDS).until(() ->
                        StalledDatabaseIT.problems(sweeper).stream().anyMatch(p -> p.contains("no timer of the claim fired")));
                holder.rollback();
            }
            await().atMost(60, TimeUnit.SECONDS).until(() -> staging.count("SELECT count(*) FROM queen.log_timers") == 0);
            await().atMost(30, TimeUnit.SECONDS).until(() -> StalledDatabaseIT.problems(sweeper).isEmpty());
        }
        assertThat(LogContents.txnCounts(stack.get().owner())).hasSize(21).allSatisfy((txn, n) -> assertThat(n).isEqualTo(1));
        assertThat(staging.count("SELECT count(*) FROM queen.timer_audit_events WHERE type = 'fired' AND (event->>'attempts')::int = 0"))
                .as("a lock timeout spends no attempt").isEqualTo(21);
        assertThat(staging.count("SELECT count(*) FROM queen.log_dlq")).isZero();
    }
}
