package io.queen.timers.sweeper;

import static io.queen.timers.sweeper.Staging.DEFAULT_TENANT;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.queen.timers.log.cleanup.PartitionCleanup;
import io.queen.timers.stack.Stack;
import io.queen.timers.testkit.PerClass;
import java.time.Duration;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** A pending timer does not keep its destination alive; the fire provisions a cleaned-up partition again. */
class CleanupRefireIT {

    @RegisterExtension
    static final PerClass<Stack> stack = PerClass.of(Sweepers::stack);

    @Test
    void aPartitionDeletedByCleanupWhileATimerTargetsItIsProvisionedAgainByTheFire() throws Exception {
        Staging staging = new Staging(stack.get().owner());
        // the destination exists, empty and idle (as after its segments were trimmed away)
        staging.execute("SELECT * FROM queen.log_provision_v1(ARRAY['" + DEFAULT_TENANT + "']::uuid[], ARRAY['orders'], ARRAY['Default'])");
        staging.execute("UPDATE queen.log_partitions SET created_at = now() - interval '1 hour', last_write_at = now() - interval '1 hour'");
        UUID before = UUID.fromString(stringOf(staging, "SELECT id::text FROM queen.log_partitions"));
        staging.schedule(DEFAULT_TENANT, "orders", "k", 1.5);

        List<UUID> deleted = new PartitionCleanup(stack.get().owner(), Duration.ofMinutes(1), 10).runOnce();
        assertThat(deleted).containsExactly(before);
        assertThat(staging.count("SELECT count(*) FROM queen.log_partitions")).isZero();

        try (SweeperMain sweeper = Sweepers.start(stack.get(), s -> {})) {
            await().atMost(20, TimeUnit.SECONDS).until(() -> LogContents.read(stack.get().owner()).size() == 1);
        }
        LogContents.Message m = LogContents.read(stack.get().owner()).get(0);
        assertThat(m.txn()).isEqualTo("txn-k");
        assertThat(m.partitionId()).isNotEqualTo(before);
        assertThat(m.offset()).isZero();
    }

    @Test
    void theSweepersOwnCleanupClockDeletesDeadPartitionsWhenEnabled() throws Exception {
        Staging staging = new Staging(stack.get().owner());
        staging.execute("SELECT * FROM queen.log_provision_v1(ARRAY['" + DEFAULT_TENANT + "']::uuid[], ARRAY['idle'], ARRAY['Default'])");
        staging.execute("UPDATE queen.log_partitions SET created_at = now() - interval '2 hours', last_write_at = now() - interval '2 hours'"
                + " WHERE queue_id = (SELECT id FROM queen.queues WHERE name = 'idle')");
        try (SweeperMain sweeper = Sweepers.start(stack.get(), s -> s.set(SweeperSettings.CLEANUP_ENABLED, true)
                .set(SweeperSettings.CLEANUP_INTERVAL, Duration.ofSeconds(1)).set(SweeperSettings.CLEANUP_IDLE, Duration.ofHours(1)))) {
            await().atMost(20, TimeUnit.SECONDS).until(() -> staging.count(
                    "SELECT count(*) FROM queen.log_partitions p JOIN queen.queues q ON q.id = p.queue_id WHERE q.name = 'idle'") == 0);
        }
    }

    private static String stringOf(Staging staging, String sql) throws Exception {
        try (var c = stack.get().owner().getConnection(); var st = c.createStatement(); var rs = st.executeQuery(sql)) {
            rs.next();
            return rs.getString(1);
        }
    }
}
