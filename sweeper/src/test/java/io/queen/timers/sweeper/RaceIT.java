package io.queen.timers.sweeper;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.queen.timers.core.config.CommonSettings;
import io.queen.timers.stack.Stack;
import io.queen.timers.testkit.PerClass;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Four leaderless sweepers race over 50,000 timers due at one instant across 500 destination queues (none
 * of which exists yet). Every timer's txn must be in the log exactly once (decoded from the segments, not
 * counted from rows), every partition's offsets gapless, and no timer left behind.
 */
class RaceIT {

    @RegisterExtension
    static final PerClass<Stack> stack = PerClass.of(Sweepers::stack);

    @Test
    void fourSweepersDeliverFiftyThousandTimersIntoFiveHundredQueuesExactlyOnce() throws Exception {
        Staging staging = new Staging(stack.get().owner());
        staging.execute("INSERT INTO queen.log_timers (queue, timer_key, deliver_at, txn, message_id, payload)"
                + " SELECT 'race.q' || (g % 500), 'k' || g, now() - interval '1 second', 'txn-' || g, queen.timer_uuidv7_v1(now()),"
                + " convert_to('{\"n\":' || g || '}', 'UTF8') FROM generate_series(1, 50000) g");

        List<SweeperMain> sweepers = new ArrayList<>();
        try {
            for (int i = 0; i < 4; i++) {
                sweepers.add(Sweepers.start(stack.get(), s -> s.set(CommonSettings.JDBC_POOL_SIZE, 3)));
            }
            await().atMost(180, TimeUnit.SECONDS).pollInterval(500, TimeUnit.MILLISECONDS)
                    .until(() -> staging.count("SELECT count(*) FROM queen.log_timers") == 0);
        } finally {
            sweepers.forEach(SweeperMain::close);
        }

        List<LogContents.Message> log = LogContents.read(stack.get().owner());
        Map<String, Integer> counts = new HashMap<>();
        for (LogContents.Message m : log) {
            counts.merge(m.txn(), 1, Integer::sum);
        }
        assertThat(counts).hasSize(50_000);
        assertThat(counts.values()).allMatch(n -> n == 1);
        Map<UUID, List<Long>> offsets = new HashMap<>();
        for (LogContents.Message m : log) {
            offsets.computeIfAbsent(m.partitionId(), k -> new ArrayList<>()).add(m.offset());
            assertThat(m.queue()).isEqualTo("race.q" + (Integer.parseInt(m.txn().substring(4)) % 500));
        }
        assertThat(offsets).hasSize(500);
        offsets.values().forEach(o -> assertThat(o).isSorted().first().isEqualTo(0L));
        offsets.values().forEach(o -> assertThat(o.get(o.size() - 1)).isEqualTo(o.size() - 1L));
        assertThat(staging.count("SELECT count(*) FROM queen.timer_audit_events WHERE type = 'fired'")).isEqualTo(50_000);
        assertThat(staging.count("SELECT count(*) FROM queen.log_dlq")).isZero();
    }
}
