package io.queen.timers.sweeper;

import static io.queen.timers.sweeper.Staging.DEFAULT_TENANT;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.queen.timers.core.config.CommonSettings;
import io.queen.timers.stack.Stack;
import io.queen.timers.testkit.PerClass;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * A deployment that is wrong (here: the sweeper's role loses EXECUTE on the fire function while it runs) is
 * not the timers' fault: the sweeper pauses and says why, spends no attempt and dead-letters nothing, and
 * delivers everything once the grant is back. The sweeper connects as a role that is not a superuser, as it
 * would in production.
 */
class BrokenDeploymentIT {

    @RegisterExtension
    static final PerClass<Stack> stack = PerClass.of(Sweepers::stack);

    @Test
    void aRevokedFireFunctionPausesTheSweeperWithoutSpendingAttempts() throws Exception {
        Staging staging = new Staging(stack.get().owner());
        String role = "sweeper_" + UUID.randomUUID().toString().substring(0, 8);
        staging.execute("CREATE ROLE " + role + " LOGIN PASSWORD 'sweeper-pw'");
        staging.execute("GRANT USAGE ON SCHEMA queen TO " + role);
        staging.execute("GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA queen TO " + role);
        staging.execute("GRANT USAGE, SELECT ON ALL SEQUENCES IN SCHEMA queen TO " + role);
        // functions are executable by PUBLIC by default: make the role's grant the only one, so revoking it bites
        staging.execute("REVOKE EXECUTE ON ALL FUNCTIONS IN SCHEMA queen FROM PUBLIC");
        staging.execute("GRANT EXECUTE ON ALL FUNCTIONS IN SCHEMA queen TO " + role);

        // a role made by hand, not a member of queen_sweeper: the start check would refuse it (the single-role opt-out)
        try (SweeperMain sweeper = Sweepers.start(stack.get(), s -> s.set(CommonSettings.JDBC_USER, role)
                .set(CommonSettings.JDBC_PASSWORD, "sweeper-pw").set(CommonSettings.DB_ROLE_CHECK, false).set(SweeperSettings.MAX_ATTEMPTS, 3))) {
            for (int i = 0; i < 10; i++) {
                staging.schedule(DEFAULT_TENANT, "deploy.q", "before-" + i, -1);
            }
            await().atMost(30, TimeUnit.SECONDS).until(() -> staging.count("SELECT count(*) FROM queen.log_timers") == 0);

            staging.execute("REVOKE EXECUTE ON FUNCTION queen.timer_fire_v3 FROM " + role);
            for (int i = 0; i < 10; i++) {
                staging.schedule(DEFAULT_TENANT, "deploy.q", "during-" + i, -1);
            }
            await().atMost(30, TimeUnit.SECONDS).until(() -> problems(sweeper).stream().anyMatch(p -> p.contains("42501")));
            assertThat(problems(sweeper)).anySatisfy(p -> assertThat(p).contains("paused").contains("deployment is broken")
                    .contains("timer_fire_v3"));
            // well past what 3 attempts with a 50 ms backoff base would take: nothing spent, nothing dead-lettered
            Thread.sleep(3_000);
            assertThat(staging.count("SELECT count(*) FROM queen.log_timers WHERE attempts > 0 OR last_error IS NOT NULL")).isZero();
            assertThat(staging.count("SELECT count(*) FROM queen.log_dlq")).isZero();
            assertThat(staging.count("SELECT count(*) FROM queen.log_timers")).isEqualTo(10);

            staging.execute("GRANT EXECUTE ON FUNCTION queen.timer_fire_v3 TO " + role);
            await().atMost(30, TimeUnit.SECONDS).until(() -> staging.count("SELECT count(*) FROM queen.log_timers") == 0);
            await().atMost(10, TimeUnit.SECONDS).until(() -> problems(sweeper).isEmpty());
        }
        assertThat(LogContents.txnCounts(stack.get().owner())).hasSize(20).allSatisfy((txn, n) -> assertThat(n).isEqualTo(1));
        assertThat(staging.count("SELECT count(*) FROM queen.timer_audit_events WHERE type = 'fired' AND (event->>'attempts')::int = 0"))
                .isEqualTo(20);
        assertThat(staging.count("SELECT count(*) FROM queen.timer_audit_events WHERE type <> 'fired'")).isZero();
    }

    static List<String> problems(SweeperMain sweeper) {
        return sweeper.health().report().problems();
    }
}
