package io.queen.timers.sweeper;

import static io.queen.timers.sweeper.Staging.DEFAULT_TENANT;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.queen.timers.stack.Stack;
import io.queen.timers.testkit.PerClass;
import java.sql.Connection;
import java.sql.Statement;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * A fire whose backend is terminated (pg_terminate_backend: SQLSTATE 57P01, class 57, transient) spends no
 * attempt: the timer backs off the transient backoff and is delivered exactly once afterwards.
 */
class TransientFailureIT {

    @RegisterExtension
    static final PerClass<Stack> stack = PerClass.of(Sweepers::stack);

    @Test
    void aTerminatedFireBackendSpendsNoAttempt() throws Exception {
        Staging staging = new Staging(stack.get().owner());
        staging.schedule(DEFAULT_TENANT, "q", "k", -1);
        try (Connection blocker = stack.get().owner().getConnection()) {
            // hold the fire in place: provisioning needs queen.queues, which this transaction locks
            blocker.setAutoCommit(false);
            try (Statement st = blocker.createStatement()) {
                st.execute("LOCK TABLE queen.queues IN ACCESS EXCLUSIVE MODE");
            }
            try (SweeperMain sweeper = Sweepers.start(stack.get(), s -> s.set(SweeperSettings.TRANSIENT_BACKOFF, Duration.ofMillis(500)))) {
                await().atMost(10, TimeUnit.SECONDS).until(() -> staging.count("SELECT count(*) FROM pg_stat_activity"
                        + " WHERE wait_event_type = 'Lock' AND query LIKE '%timer_fire_v3%'") == 1);
                staging.execute("SELECT pg_terminate_backend(pid) FROM pg_stat_activity"
                        + " WHERE wait_event_type = 'Lock' AND query LIKE '%timer_fire_v3%'");
                await().atMost(10, TimeUnit.SECONDS).until(() -> {
                    Staging.Row r = staging.row(DEFAULT_TENANT, "q", "k");
                    return r.lastError() != null;
                });
                Staging.Row failed = staging.row(DEFAULT_TENANT, "q", "k");
                assertThat(failed.attempts()).isZero();
                assertThat(failed.lastError()).contains("57P01");
                assertThat(staging.count("SELECT (event->>'attempts')::int FROM queen.timer_audit_events WHERE type = 'retrying'")).isZero();
                blocker.rollback();
                await().atMost(10, TimeUnit.SECONDS).until(() -> LogContents.read(stack.get().owner()).size() == 1);
            }
        }
        assertThat(LogContents.txnCounts(stack.get().owner())).containsExactly(Map.entry("txn-k", 1));
        assertThat(staging.count("SELECT (event->>'attempts')::int FROM queen.timer_audit_events WHERE type = 'fired'")).isZero();
    }
}
