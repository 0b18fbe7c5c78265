package io.queen.timers.local;

import static org.assertj.core.api.Assertions.assertThat;

import io.queen.timers.testkit.PostgresDatabase;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * {@code local} as a new user runs it, to completion: its own Kafka broker, the schema applied to
 * an empty database, bridge and sweeper in-process, the example commands, and every verdict and
 * fire printed as it comes back (fires read back from the log).
 */
class LocalCommandIT {

    @RegisterExtension
    static final PostgresDatabase db = PostgresDatabase.empty();

    @Test
    void theDemoRunsToCompletionAndPrintsEveryVerdictAndFire() {
        Launch r = Launch.run("local", "--temp", "--kafka-port", "0", "--http-port", "0",
                "--jdbc-url", db.jdbcUrl(), "--jdbc-user", db.user(), "--jdbc-password", db.password(),
                "--demo-only", "--exit-after", "90");

        System.out.println("[local stdout]\n" + r.out());
        assertThat(r.exitCode()).as(r.err()).isZero();
        assertThat(r.out()).contains(
                "queen-timers local stack is up",
                "From a second terminal:",
                " scheduled ", " rescheduled ", " cancelled ",
                " rejected ", "reason malformed_json",
                " fired ", "-> log offset",
                "payload {\"demo\":\"fires in 3 s\"}",
                "payload {\"demo\":\"rescheduled to 5 s\"}",
                "demo complete: every example command came back",
                "stopped");
        assertThat(r.out().lines().filter(l -> l.matches(".*fired\\s+demo\\.reminders/demo-\\d+-c\\b.*"))).as("the cancelled timer fired").isEmpty();
        assertThat(r.out().lines().filter(l -> l.matches(".*fired\\s+demo\\.reminders/demo-\\d+-[ab]\\b.*"))).hasSize(2);
    }

    @Test
    void aPortInUseIsOneLineNamingTheFlagBeforeAnythingStarts() throws Exception {
        try (java.net.ServerSocket taken = new java.net.ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
            Launch r = Launch.run("local", "--temp", "--kafka-port", Integer.toString(taken.getLocalPort()));
            assertThat(r.exitCode()).isEqualTo(1);
            assertThat(r.err()).isEqualTo("error: port " + taken.getLocalPort()
                    + " is in use (another local stack?): choose another with --kafka-port" + System.lineSeparator());
        }
    }
}
