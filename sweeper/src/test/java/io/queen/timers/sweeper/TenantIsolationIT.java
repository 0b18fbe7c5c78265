package io.queen.timers.sweeper;

import static io.queen.timers.sweeper.Staging.DEFAULT_TENANT;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.queen.timers.stack.Stack;
import io.queen.timers.testkit.PerClass;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** Two tenants with identical queue and timer names never share a row, a queue, a segment, a DLQ row or an audit key space. */
class TenantIsolationIT {

    @RegisterExtension
    static final PerClass<Stack> stack = PerClass.of(Sweepers::stack);

    static final UUID OTHER = UUID.fromString("22222222-2222-2222-2222-222222222222");

    @Test
    void sameQueueAndTimerNamesInTwoTenantsStaySeparateAllTheWayToTheDlq() throws Exception {
        Staging staging = new Staging(stack.get().owner());
        Poison poison = new Poison(staging).install();
        poison.poison("txn-bad");
        for (UUID tenant : List.of(DEFAULT_TENANT, OTHER)) {
            staging.schedule(tenant, "orders", "good", -1);
            staging.schedule(tenant, "orders", "bad", -1);
        }
        assertThat(staging.count("SELECT count(*) FROM queen.log_timers WHERE queue = 'orders' AND timer_key = 'good'")).isEqualTo(2);

        try (SweeperMain sweeper = Sweepers.start(stack.get(), s -> {})) {
            await().atMost(30, TimeUnit.SECONDS).until(() -> staging.count("SELECT count(*) FROM queen.log_dlq") == 2
                    && LogContents.read(stack.get().owner()).size() == 2);
        }

        List<LogContents.Message> log = LogContents.read(stack.get().owner());
        assertThat(log).extracting(LogContents.Message::tenantId).containsExactlyInAnyOrder(DEFAULT_TENANT, OTHER);
        assertThat(log).extracting(LogContents.Message::txn).containsOnly("txn-good");
        assertThat(log).extracting(LogContents.Message::partitionId).doesNotHaveDuplicates();
        assertThat(staging.count("SELECT count(*) FROM queen.queues WHERE name = 'orders'")).isEqualTo(2);
        // one DLQ row per tenant, each under its own tenant's partition
        assertThat(staging.count("SELECT count(DISTINCT q.tenant_id) FROM queen.log_dlq d JOIN queen.log_partitions p ON p.id = d.partition_id"
                + " JOIN queen.queues q ON q.id = p.queue_id WHERE d.transaction_id = 'txn-bad'")).isEqualTo(2);
        // audit rows: same kafka key, two tenants (the tenant picks the audit topic: separate key spaces)
        for (String type : List.of("fired", "dead_lettered")) {
            assertThat(staging.count("SELECT count(DISTINCT tenant_id) FROM queen.timer_audit_events WHERE type = '" + type + "'"))
                    .isEqualTo(2);
        }
        assertThat(staging.count("SELECT count(*) FROM queen.timer_audit_events WHERE type = 'fired' AND kafka_key = 'orders/good'")).isEqualTo(2);
    }
}
