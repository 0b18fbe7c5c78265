package io.queen.timers.sweeper;

import static io.queen.timers.sweeper.Staging.DEFAULT_TENANT;
import static org.assertj.core.api.Assertions.assertThat;

import io.queen.timers.sql.Migrations;
import io.queen.timers.testkit.PostgresDatabase;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.LongStream;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * What the sweeper fired is consumable the way Queen's pop consumes a partition (QueenStylePop: cursor
 * committed, leased span (committed, batch_end], segments sliced by offset), on the project's tables:
 * every message exactly once, in offset order, as fired, across segment boundaries and mid-segment
 * budgets; a held lease keeps a second consumer out and an expired one redelivers the same span.
 */
class QueenStylePopIT {

    @RegisterExtension
    static final PostgresDatabase db = PostgresDatabase.initializedWith(Migrations::migrate);

    private Staging staging;

    @BeforeEach
    void clean() {
        staging = new Staging(db.dataSource());
        staging.clear();
    }

    @Test
    void firedSegmentsAreConsumedOnceInOffsetOrderWithBudgetsThatCutSegments() throws Exception {
        // Three fires of ten timers: three segments of ten frames in one partition.
        for (int round = 0; round < 3; round++) {
            for (int i = 0; i < 10; i++) {
                staging.schedule(DEFAULT_TENANT, "orders", "r" + round + "-" + i, -5 + i * 0.01);
            }
            assertThat(FireDue.now(db.dataSource())).isEqualTo(10);
        }
        List<LogContents.Message> fired = LogContents.read(db.dataSource());
        assertThat(fired).hasSize(30);
        assertThat(staging.count("SELECT count(*) FROM queen.log_segments")).isEqualTo(3);

        QueenStylePop pop = new QueenStylePop(db.dataSource());
        List<QueenStylePop.Delivered> consumed = new ArrayList<>();
        for (int batch = 0; batch < 20; batch++) {
            List<QueenStylePop.Delivered> got = pop.pop(DEFAULT_TENANT, "orders", "Default", "g", 4, "w1");
            if (got.isEmpty()) {
                break;
            }
            assertThat(pop.ack(DEFAULT_TENANT, "orders", "Default", "g", "w1", got.get(got.size() - 1).offset())).isTrue();
            consumed.addAll(got);
        }

        assertThat(consumed).extracting(QueenStylePop.Delivered::offset).containsExactlyElementsOf(LongStream.range(0, 30).boxed().toList());
        assertThat(consumed).extracting(QueenStylePop.Delivered::frame).containsExactlyElementsOf(fired.stream().map(LogContents.Message::frame).toList());
        assertThat(staging.count("SELECT committed FROM queen.log_consumers WHERE consumer_group = 'g'")).isEqualTo(29);
        assertThat(staging.count("SELECT total_consumed FROM queen.log_consumers WHERE consumer_group = 'g'")).isEqualTo(30);
        // The partition's bookkeeping as Queen's retention and pop read it.
        assertThat(staging.count("SELECT count(*) FROM queen.log_partitions p WHERE"
                + " p.oldest_live_at = (SELECT min(created_at) FROM queen.log_segments s WHERE s.partition_id = p.id)"
                + " AND p.oldest_txn_at = (SELECT min(created_at) FROM queen.log_txns t WHERE t.partition_id = p.id)"
                + " AND p.last_write_at = (SELECT max(created_at) FROM queen.log_segments s WHERE s.partition_id = p.id)"
                + " AND p.last_offset = 29")).isEqualTo(1);
    }

    @Test
    void aHeldLeaseKeepsOthersOutAndAnExpiredOneRedeliversTheSameSpan() throws Exception {
        for (int i = 0; i < 6; i++) {
            staging.schedule(DEFAULT_TENANT, "leases", "k" + i, -2);
        }
        assertThat(FireDue.now(db.dataSource())).isEqualTo(6);
        QueenStylePop pop = new QueenStylePop(db.dataSource());

        List<QueenStylePop.Delivered> first = pop.pop(DEFAULT_TENANT, "leases", "Default", "g", 4, "w1");
        assertThat(first).extracting(QueenStylePop.Delivered::offset).containsExactly(0L, 1L, 2L, 3L);
        assertThat(staging.count("SELECT batch_end FROM queen.log_consumers WHERE consumer_group = 'g'")).isEqualTo(3);
        assertThat(pop.pop(DEFAULT_TENANT, "leases", "Default", "g", 4, "w2")).isEmpty();
        assertThat(pop.ack(DEFAULT_TENANT, "leases", "Default", "g", "w1", 4)).as("past batch_end").isFalse();

        staging.execute("UPDATE queen.log_consumers SET lease_expires_at = now() - interval '1 second'");
        List<QueenStylePop.Delivered> again = pop.pop(DEFAULT_TENANT, "leases", "Default", "g", 10, "w2");
        assertThat(again).extracting(QueenStylePop.Delivered::offset).containsExactly(0L, 1L, 2L, 3L, 4L, 5L);
        assertThat(again.subList(0, 4)).isEqualTo(first);
        assertThat(pop.ack(DEFAULT_TENANT, "leases", "Default", "g", "w1", 5)).as("not w1's lease any more").isFalse();
        assertThat(pop.ack(DEFAULT_TENANT, "leases", "Default", "g", "w2", 5)).isTrue();
        assertThat(pop.pop(DEFAULT_TENANT, "leases", "Default", "g", 10, "w2")).isEmpty();
    }
}
