package io.queen.timers.sweeper;

import static io.queen.timers.sweeper.Staging.DEFAULT_TENANT;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.queen.timers.core.config.CommonSettings;
import io.queen.timers.core.config.HealthSettings;
import io.queen.timers.stack.Stack;
import io.queen.timers.testkit.Backends;
import io.queen.timers.testkit.PerClass;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The sweeper's PostgreSQL backends stopped with SIGSTOP: they keep their sockets open and answer nothing,
 * which no server-side timeout can end. The driver's socket timeout gives them up, the pool opens new
 * connections, readiness reports the stall meanwhile, and after SIGCONT every timer has fired exactly once
 * without spending an attempt.
 */
class StalledDatabaseIT {

    @RegisterExtension
    static final PerClass<Stack> stack = PerClass.of(Sweepers::stack);

    @Test
    void sweeperBackendsStoppedWithSigstopAreGivenUpAndEveryTimerFiresOnce() throws Exception {
        Staging staging = new Staging(stack.get().owner());
        try (SweeperMain sweeper = Sweepers.start(stack.get(), s -> s.set(SweeperSettings.LEASE, Duration.ofSeconds(3))
                .set(SweeperSettings.STATEMENT_TIMEOUT, Duration.ofSeconds(2)).set(SweeperSettings.LOCK_TIMEOUT, Duration.ofSeconds(1))
                .set(CommonSettings.DB_SOCKET_TIMEOUT, Duration.ofSeconds(4)).set(HealthSettings.FAILING_AFTER, Duration.ofSeconds(1)))) {
            // a stream of timers keeps both loops busy, so the stop lands on connections in use (the pool does not
            // re-validate a connection used within the last half second: only the socket timeout can give it up)
            for (int i = 0; i < 30; i++) {
                staging.schedule(DEFAULT_TENANT, "stall.q", "stream-" + i, 0.3 + i * 0.1);
            }
            await().atMost(30, TimeUnit.SECONDS).until(() -> staging.count("SELECT count(*) FROM queen.log_timers") < 25);

            List<Integer> stopped = Backends.pids(stack.get().owner(), "queen-sweeper");
            assertThat(stopped).as("the sweeper's pool names its connections").isNotEmpty();
            Backends.stop(stopped);
            try {
                await().atMost(60, TimeUnit.SECONDS).pollInterval(Duration.ofMillis(50)).until(() -> !problems(sweeper).isEmpty());
                // the stopped backends are given up and replaced: timers due now fire while they are still stopped
                // (in a queue of their own: a backend stopped inside a fire holds stall.q's partition lock until
                // SIGCONT, and no timeout on our side can take a lock from a stopped backend)
                for (int i = 0; i < 10; i++) {
                    staging.schedule(DEFAULT_TENANT, "stall.other", "while-stopped-" + i, -1);
                }
                await().atMost(60, TimeUnit.SECONDS).until(() ->
                        staging.count("SELECT count(*) FROM queen.log_timers WHERE timer_key LIKE 'while-stopped-%'") == 0);
            } finally {
                Backends.resume(stopped);   // before the sweeper closes: its stop waits for the fire in flight
            }
            await().atMost(60, TimeUnit.SECONDS).until(() -> staging.count("SELECT count(*) FROM queen.log_timers") == 0);
            await().atMost(30, TimeUnit.SECONDS).until(() -> problems(sweeper).isEmpty());
        }
        assertThat(LogContents.txnCounts(stack.get().owner())).hasSize(40).allSatisfy((txn, n) -> assertThat(n).isEqualTo(1));
        assertThat(staging.count("SELECT count(*) FROM queen.timer_audit_events WHERE type = 'fired' AND (event->>'attempts')::int = 0"))
                .isEqualTo(40);
        assertThat(staging.count("SELECT count(*) FROM queen.log_dlq")).isZero();
    }

    @Test
    void theListenConnectionStoppedWithSigstopIsReportedAndReplaced() throws Exception {
        try (SweeperMain sweeper = Sweepers.start(stack.get(), s -> s.set(HealthSettings.FAILING_AFTER, Duration.ofSeconds(1)))) {
            await().atMost(30, TimeUnit.SECONDS).until(() -> problems(sweeper).isEmpty());
            // Readiness does not wait for the listener: on a loaded machine its thread connects after ready
            List<Integer> stopped = await().atMost(30, TimeUnit.SECONDS)
                    .until(() -> Backends.pids(stack.get().owner(), "queen-sweeper-listen"), pids -> !pids.isEmpty());
            assertThat(stopped).hasSize(1);
            Backends.stop(stopped);
            try {
                await().atMost(60, TimeUnit.SECONDS).pollInterval(Duration.ofMillis(50))
                        .until(() -> problems(sweeper).stream().anyMatch(p -> p.startsWith("wake-listener: ")));
                // a new listen connection comes up while the old backend is still stopped
                await().atMost(60, TimeUnit.SECONDS).until(() -> problems(sweeper).isEmpty());
            } finally {
                Backends.resume(stopped);
            }
        }
    }

    static List<String> problems(SweeperMain sweeper) {
        return sweeper.health().report().problems();
    }
}
