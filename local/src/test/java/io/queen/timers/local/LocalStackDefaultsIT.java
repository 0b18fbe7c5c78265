package io.queen.timers.local;

import static org.assertj.core.api.Assertions.assertThat;

import io.queen.timers.stack.Kafka;
import io.queen.timers.stack.Postgres;
import io.queen.timers.stack.Stack;
import io.queen.timers.sweeper.SweeperMain;
import io.queen.timers.sweeper.SweeperSettings;
import io.queen.timers.testkit.PostgresDatabase;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The local stack runs its services with the protections they ship with: what it sets is only where things are (the
 * database, the broker, the topics, the ports, the logins); the sweeper's per-tenant fire budget is its default, on
 * (docs/sweeper.md#the-fire-budget), so a flood of one tenant tried locally behaves as it would deployed.
 */
class LocalStackDefaultsIT {

    @RegisterExtension
    static final PostgresDatabase db = PostgresDatabase.empty();

    @Test
    void theSweeperRunsWithTheFireBudgetItShipsWith() {
        try (Stack stack = LocalCommand.stack(Postgres.external(db.jdbcUrl(), db.user(), db.password()), Kafka.embedded(), 0, 0).start()) {
            int shipped = Integer.parseInt(SweeperSettings.definition().key(SweeperSettings.TENANT_FIRES_PER_SECOND).defaultValue());
            assertThat(shipped).as("the fire budget is on by default").isPositive();
            assertThat(SweeperSettings.from(stack.config(SweeperMain.SERVICE)).claim().tenantFiresPerSecond()).isEqualTo(shipped);
        }
    }
}
