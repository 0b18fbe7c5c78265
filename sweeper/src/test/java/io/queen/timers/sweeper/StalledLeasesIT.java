package io.queen.timers.sweeper;

import static io.queen.timers.sweeper.Staging.DEFAULT_TENANT;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.queen.timers.stack.Stack;
import io.queen.timers.sweeper.claim.Claimer;
import io.queen.timers.testkit.PerClass;
import io.queen.timers.testkit.TestPostgres;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** What a death costs a timer that did not cause it (V122; DeathIsAPoisonIT is the guilty side). */
class StalledLeasesIT {

    @RegisterExtension
    static final PerClass<Stack> stack = PerClass.of(Sweepers::stack);

    /**
     * The other side of the same count: a lease also runs out when its sweeper is paused past it or loses the database
     * mid-fire. Timers held among others when that happens, over and over, spend no attempt (V122) and fire once,
     * even with sweeper.max.attempts at 2; under V120's count they were dead-lettered (the fault harness, 2026-12-04).
     */
    @Test
    void leasesThatRunOutAmongOthersAgainAndAgainSpendNoAttempt() throws Exception {
        Staging staging = new Staging(stack.get().owner());
        for (int i = 0; i < 3; i++) {
            staging.schedule(DEFAULT_TENANT, "stalled.q", "held-" + i, -1);
        }
        Claimer stalling = new Claimer(stack.get().owner(), 200, Duration.ofMillis(300), 8);
        for (int stall = 0; stall < 6; stall++) {
            assertThat(stalling.claim()).hasSize(3);   // held, then never handed back: the lease runs out in "our" hands
            Thread.sleep(350);
        }
        assertThat(staging.count("SELECT count(*) FROM queen.log_timers WHERE deaths = 5 AND attempts = 0")).isEqualTo(3);
        // the owner's bound a least-privilege sweeper is held to (docs/schema-and-roles.md#database-roles): 2 attempts allowed here
        staging.execute("UPDATE queen.timer_settings SET min_attempts = 2");
        try (SweeperMain sweeper = Sweepers.start(stack.get(), s -> s.set(SweeperSettings.MAX_ATTEMPTS, 2))) {
            await().atMost(60, TimeUnit.SECONDS).until(() -> staging.count("SELECT count(*) FROM queen.log_timers") == 0);
        }
        assertThat(staging.count("SELECT count(*) FROM queen.timer_audit_events WHERE type = 'dead_lettered' AND event->>'queue' = 'stalled.q'"))
                .isZero();
        assertThat(staging.count("SELECT count(*) FROM queen.timer_audit_events WHERE type = 'fired' AND event->>'queue' = 'stalled.q'"))
                .isEqualTo(3);
    }

    /**
     * A sweeper cut from the database mid-fire cannot fire, fail or release what it holds. It hands those timers back
     * as soon as the database answers again, instead of leaving them leased for the rest of the lease (60 s here: a
     * lateness incident after every database restart) and a death counted against each.
     */
    @Test
    void aCycleCutFromTheDatabaseHandsItsTimersBackWhenTheDatabaseReturns() throws Exception {
        Staging staging = new Staging(stack.get().owner());
        String dbName = text("SELECT current_database()");
        var server = TestPostgres.server(); // the server's own database, to shut this one off and on again
        try (SweeperMain sweeper = Sweepers.start(stack.get(), s -> s.set(SweeperSettings.LEASE, Duration.ofSeconds(60))
                        .set(SweeperSettings.LOCK_TIMEOUT, Duration.ofSeconds(50)).set(SweeperSettings.STATEMENT_TIMEOUT, Duration.ofSeconds(55)));
                Connection admin = DriverManager.getConnection(server.jdbcUrl(server.adminDatabase()), server.user(), server.password());
                Connection holder = stack.get().owner().getConnection()) {
            staging.schedule(DEFAULT_TENANT, "cut.q", "provision", -1);
            await().atMost(30, TimeUnit.SECONDS).until(() -> staging.count("SELECT count(*) FROM queen.log_timers") == 0);
            // hold the destination's partition row, so the fire of the next timers waits there, in the sweeper's hands
            holder.setAutoCommit(false);
            int holderPid;
            try (Statement st = holder.createStatement(); ResultSet rs = st.executeQuery("""
                    SELECT pg_backend_pid() FROM queen.log_partitions p JOIN queen.queues q ON q.id = p.queue_id
                     WHERE q.name = 'cut.q' FOR UPDATE OF p""")) {
                assertThat(rs.next()).isTrue();
                holderPid = rs.getInt(1);
            }
            for (int i = 0; i < 5; i++) {
                staging.schedule(DEFAULT_TENANT, "cut.q", "held-" + i, -1);
            }
            await().atMost(30, TimeUnit.SECONDS).until(() ->
                    staging.count("SELECT count(*) FROM queen.log_timers WHERE claim_token IS NOT NULL") == 5
                    && staging.count("SELECT count(*) FROM pg_stat_activity WHERE " + holderPid + " = ANY (pg_blocking_pids(pid))") > 0);
            String tokensBefore = text("SELECT string_agg(claim_token::text, ',' ORDER BY timer_key) FROM queen.log_timers");

            // the cut: no new session may open, and every session of the sweeper is ended
            try (Statement st = admin.createStatement()) {
                st.execute("ALTER DATABASE " + dbName + " ALLOW_CONNECTIONS false");
                st.execute("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = '" + dbName + "' AND pid <> " + holderPid);
            }
            Thread.sleep(6_000);   // longer than a connection wait: the cycle fails, neither fail nor release can run
            try (Statement st = holder.createStatement();   // the one session left open
                    ResultSet rs = st.executeQuery("SELECT string_agg(claim_token::text, ',' ORDER BY timer_key) FROM queen.log_timers")) {
                rs.next();
                assertThat(rs.getString(1)).as("still leased in the cut sweeper's hands").isEqualTo(tokensBefore);
            }
            try (Statement st = admin.createStatement()) {
                st.execute("ALTER DATABASE " + dbName + " ALLOW_CONNECTIONS true");
            }
            // handed back, claimed anew with no death, long before the 60 s lease would have run out
            await().atMost(20, TimeUnit.SECONDS).until(() ->
                    staging.count("SELECT count(*) FROM queen.log_timers WHERE claim_token IS NOT NULL AND deaths = 0"
                            + " AND position(claim_token::text IN '" + tokensBefore + "') = 0") == 5);
            holder.rollback();
            await().atMost(20, TimeUnit.SECONDS).until(() -> staging.count("SELECT count(*) FROM queen.log_timers") == 0);
        } finally {
            try (Connection admin = DriverManager.getConnection(server.jdbcUrl(server.adminDatabase()), server.user(), server.password());
                    Statement st = admin.createStatement()) {
                st.execute("ALTER DATABASE " + dbName + " ALLOW_CONNECTIONS true");
            }
        }
        assertThat(staging.count("SELECT count(*) FROM queen.timer_audit_events WHERE type = 'fired' AND event->>'queue' = 'cut.q'"))
                .isEqualTo(6);
    }

    private static String text(String sql) throws SQLException {
        try (Connection c = stack.get().owner().getConnection(); Statement st = c.createStatement(); ResultSet rs = st.executeQuery(sql)) {
            rs.next();
            return rs.getString(1);
        }
    }
}
