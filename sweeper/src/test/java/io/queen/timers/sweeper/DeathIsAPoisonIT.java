package io.queen.timers.sweeper;

import static io.queen.timers.sweeper.Staging.DEFAULT_TENANT;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.queen.timers.sql.Migrations;
import io.queen.timers.testkit.PostgresDatabase;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * A timer that kills its process. Here the death is a SIGKILL, sent whenever the timer is in a sweeper's hands
 * with attempts left: to the database that is indistinguishable from a payload that exhausts the heap or
 * crashes native code mid-fire. Its destination's partition row is held by the test, so its fire waits there
 * long enough to be killed every time. Before V120 its attempts never moved: it was claimed into the same death
 * for ever, and took every timer of its claim with it. Now each abandoned lease is a death (V122), suspects are
 * fired in shrinking groups (16, 4) and then alone, a death alone is an attempt, the guilty timer is dead-lettered
 * after 3 deaths in groups and sweeper.max.attempts deaths alone with the reason, and every other timer fires
 * exactly once, none dead-lettered, none with an attempt spent.
 */
class DeathIsAPoisonIT {

    @RegisterExtension
    static final PostgresDatabase db = PostgresDatabase.initializedWith(Migrations::migrate);

    private static final int INNOCENTS = 60;

    @Test
    void aTimerThatKillsItsSweeperIsIsolatedAndDeadLetteredAndTheOthersFire() throws Exception {
        Staging staging = new Staging(db.dataSource());
        Map<String, String> settings = Map.of(SweeperSettings.LEASE, "1s", SweeperSettings.LOCK_TIMEOUT, "60s",
                SweeperSettings.STATEMENT_TIMEOUT, "75s", SweeperSettings.MAX_ATTEMPTS, "5");
        // provision the guilty timer's destination, then hold its partition row so its fire waits to be killed
        staging.schedule(DEFAULT_TENANT, "deadly.q", "provision", -1);
        Path log = Path.of("target", "death-sweeper.log");
        Process sweeper = ChildSweeper.start(db, "256m", settings, log);
        await().atMost(60, TimeUnit.SECONDS).until(() -> staging.count("SELECT count(*) FROM queen.log_timers") == 0);
        int deaths = 0;
        try (Connection holder = db.dataSource().getConnection()) {
            holder.setAutoCommit(false);
            int holderPid;
            try (Statement st = holder.createStatement(); ResultSet rs = st.executeQuery("""
                    SELECT pg_backend_pid() FROM queen.log_partitions p JOIN queen.queues q ON q.id = p.queue_id
                     WHERE q.name = 'deadly.q' FOR UPDATE OF p""")) {
                assertThat(rs.next()).isTrue();
                holderPid = rs.getInt(1);
            }
            staging.schedule(DEFAULT_TENANT, "deadly.q", "guilty", -1);
            for (int i = 0; i < INNOCENTS; i++) {
                staging.schedule(DEFAULT_TENANT, "fine.q" + (i % 3), "innocent-" + i, -0.5);
            }
            long deadline = System.nanoTime() + TimeUnit.MINUTES.toNanos(4);
            boolean held = true;
            while (staging.count("SELECT count(*) FROM queen.log_dlq") == 0 && System.nanoTime() < deadline) {
                if (held && staging.count("SELECT count(*) FROM queen.log_timers WHERE timer_key = 'guilty' AND attempts >= 5") == 1) {
                    holder.rollback();   // the dead-letter provisions in the guilty timer's destination: let it
                    held = false;
                }
                // the death comes where a real one would: while the guilty timer's fire is under way (here, waiting on the
                // held partition), not at the instant of its claim
                if (staging.count("SELECT count(*) FROM queen.log_timers WHERE timer_key = 'guilty' AND claim_token IS NOT NULL"
                        + " AND claimed_until > now() AND attempts < 5") == 1
                        && staging.count("SELECT count(*) FROM pg_stat_activity WHERE " + holderPid + " = ANY (pg_blocking_pids(pid))") > 0) {
                    sweeper.destroyForcibly().waitFor(30, TimeUnit.SECONDS);   // the guilty timer is in its hands: it dies
                    deaths++;
                    // its backend, still waiting on the held partition, is ended as PostgreSQL ends one whose client vanished
                    // (client_connection_check_interval); until then it would keep the timers' rows locked
                    staging.count("SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE "
                            + holderPid + " = ANY (pg_blocking_pids(pid))");
                    await().atMost(30, TimeUnit.SECONDS).until(() ->
                            staging.count("SELECT count(*) FROM pg_stat_activity WHERE " + holderPid + " = ANY (pg_blocking_pids(pid))") == 0);
                    sweeper = ChildSweeper.start(db, "256m", settings, log.resolveSibling("death-sweeper-" + deaths + ".log"));
                }
                Thread.sleep(20);
            }
            if (held) {
                holder.rollback();
            }
            Process last = sweeper;
            await().atMost(2, TimeUnit.MINUTES).pollInterval(200, TimeUnit.MILLISECONDS).until(() -> {
                assertThat(last.isAlive()).as("the last sweeper runs on").isTrue();
                return staging.count("SELECT count(*) FROM queen.log_timers") == 0;
            });
        } finally {
            sweeper.destroy();
            sweeper.waitFor(60, TimeUnit.SECONDS);
            if (sweeper.isAlive()) {
                sweeper.destroyForcibly().waitFor(30, TimeUnit.SECONDS);
            }
        }
        System.out.println("the guilty timer killed its sweeper " + deaths + " times");
        assertThat(staging.count("SELECT count(*) FROM queen.log_dlq")).as("only the guilty timer is dead-lettered").isEqualTo(1);
        // the database's count, not the test's: its fifth attempt alone was a lease that ran out in a sweeper's hands
        assertThat(staging.count("SELECT count(*) FROM queen.log_dlq WHERE error LIKE"
                + " 'abandoned: the lease ran out while a sweeper fired this timer alone%attempt 5'")).isEqualTo(1);
        assertThat(staging.count("SELECT count(*) FROM queen.log_timers")).isZero();
        // 3 deaths in groups of all, 16 and 4, then sweeper.max.attempts deaths alone: 8 kills on a quiet machine. On a
        // loaded one a sweeper blocked on the held row may outlive its 1 s lease before the test's kill: to the database
        // that is a death too (a stall past the lease, R__timer_claim.sql), so fewer kills reach the same count.
        assertThat(deaths).as("kills: at most 3 in groups and sweeper.max.attempts alone").isBetween(1, 3 + 5);
        assertThat(staging.count("SELECT count(*) FROM queen.timer_audit_events WHERE type = 'fired'"))
                .as("every innocent fired exactly once (the provisioning timer too)").isEqualTo(INNOCENTS + 1);
        assertThat(staging.count("SELECT count(DISTINCT substring(t.hashes FROM i * 16 + 1 FOR 16)) FROM queen.log_txns t,"
                + " generate_series(0, octet_length(t.hashes) / 16 - 1) i")).isEqualTo(INNOCENTS + 1);
    }
}
