package io.queen.timers.log.push;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.queen.timers.log.codec.Frame;
import io.queen.timers.log.codec.PackedSegment;
import io.queen.timers.log.codec.SegmentCodec;
import io.queen.timers.log.codec.UuidV7;
import io.queen.timers.sql.Migrations;
import io.queen.timers.testkit.PostgresDatabase;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.stream.IntStream;
import javax.sql.DataSource;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

class LogPusherIT {

    @RegisterExtension
    static final PostgresDatabase db = PostgresDatabase.initializedWith(Migrations::migrate);

    private static final UUID TENANT = Destination.DEFAULT_TENANT;

    @Test
    void concurrentPushersIntoOnePartitionGetGaplessDisjointOffsetsAndMonotoneCreatedAt() throws Exception {
        DataSource pool = db.newDataSource(8);
        LogPusher pusher = new LogPusher(pool);
        Destination dest = new Destination(TENANT, "race.offsets", "Default");
        ConcurrentLinkedQueue<Appended> results = new ConcurrentLinkedQueue<>();
        long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(3);
        ExecutorService threads = Executors.newFixedThreadPool(8);
        try {
            List<Future<?>> done = new ArrayList<>();
            for (int t = 0; t < 8; t++) {
                int thread = t;
                done.add(threads.submit(() -> {
                    int i = 0;
                    while (System.nanoTime() < until) {
                        int count = ThreadLocalRandom.current().nextInt(1, 6);
                        results.add(pusher.push(dest, segment("t" + thread + "-" + i++, count)));
                    }
                    return null;
                }));
            }
            for (Future<?> f : done) {
                f.get(30, TimeUnit.SECONDS);
            }
        } finally {
            threads.shutdownNow();
        }

        List<Appended> byOffset = new ArrayList<>(results);
        byOffset.sort(Comparator.comparingLong(Appended::baseOffset));
        System.out.println("concurrent pushes in 3 s: " + byOffset.size() + ", frames: " + (byOffset.get(byOffset.size() - 1).endOffset() + 1));
        assertThat(byOffset.size()).as("pushes in 3 s").isGreaterThan(16);
        assertThat(byOffset).extracting(Appended::partitionId).containsOnly(byOffset.get(0).partitionId());
        long next = 0;
        Instant previous = Instant.MIN;
        for (Appended a : byOffset) {
            assertThat(a.baseOffset()).as("gapless, disjoint").isEqualTo(next);
            assertThat(a.createdAt()).as("created_at at offset %d", a.baseOffset()).isAfterOrEqualTo(previous);
            next = a.endOffset() + 1;
            previous = a.createdAt();
        }
        assertThat(lastOffset(byOffset.get(0).partitionId())).isEqualTo(next - 1);
        // and the rows agree: segments and txns tile [0, next) with the same created_at
        try (Connection c = pool.getConnection();
                PreparedStatement st = c.prepareStatement("""
                        SELECT s.base_offset, s.end_offset, s.created_at = t.created_at, t.end_offset = s.end_offset
                          FROM queen.log_segments s JOIN queen.log_txns t USING (partition_id, base_offset)
                         WHERE s.partition_id = ? ORDER BY s.base_offset""")) {
            st.setObject(1, byOffset.get(0).partitionId());
            try (ResultSet rs = st.executeQuery()) {
                long expect = 0;
                int rows = 0;
                while (rs.next()) {
                    assertThat(rs.getLong(1)).isEqualTo(expect);
                    assertThat(rs.getBoolean(3)).isTrue();
                    assertThat(rs.getBoolean(4)).isTrue();
                    expect = rs.getLong(2) + 1;
                    rows++;
                }
                assertThat(rows).isEqualTo(byOffset.size());
                assertThat(expect).isEqualTo(next);
            }
        }
    }

    @Test
    void aRolledBackPushLeavesNoGap() throws Exception {
        LogPusher pusher = new LogPusher(db.dataSource());
        Destination dest = new Destination(TENANT, "rollback.gap", "Default");
        Appended first = pusher.push(dest, segment("a", 3));
        try (Connection c = db.dataSource().getConnection()) {
            c.setAutoCommit(false);
            Appended doomed = pusher.push(c, dest, segment("b", 5));
            assertThat(doomed.baseOffset()).isEqualTo(3);
            c.rollback();
            c.setAutoCommit(true);
        }
        Appended third = pusher.push(dest, segment("c", 2));
        assertThat(first.baseOffset()).isZero();
        assertThat(third.baseOffset()).isEqualTo(3);
        assertThat(lastOffset(third.partitionId())).isEqualTo(4);
    }

    @Test
    void everyAppendKeepsQueensPartitionBookkeeping() throws Exception {
        LogPusher pusher = new LogPusher(db.dataSource());
        Destination dest = new Destination(TENANT, "bookkeeping", "Default");
        Appended first = pusher.push(dest, segment("a", 2));
        Appended second = pusher.push(dest, segment("b", 3));
        UUID id = first.partitionId();
        // Queen's retention finds a partition by the created_at of its oldest live segment / log_txns row;
        // last_write_at is the newest write.
        assertThat(queryLong("SELECT count(*) FROM queen.log_partitions p WHERE p.id = '" + id + "'"
                + " AND p.oldest_live_at = (SELECT created_at FROM queen.log_segments WHERE partition_id = p.id AND base_offset = 0)"
                + " AND p.oldest_txn_at = (SELECT created_at FROM queen.log_txns WHERE partition_id = p.id AND base_offset = 0)"
                + " AND p.last_write_at = (SELECT created_at FROM queen.log_segments WHERE partition_id = p.id AND base_offset = 2)"))
                .isEqualTo(1);
        assertThat(second.createdAt()).isAfterOrEqualTo(first.createdAt());
        // Once retention emptied the partition (and cleared the watermark), the next append sets it again.
        execute("DELETE FROM queen.log_segments WHERE partition_id = '" + id + "'");
        execute("UPDATE queen.log_partitions SET log_start = 5, oldest_live_at = NULL WHERE id = '" + id + "'");
        Appended third = pusher.push(dest, segment("c", 1));
        assertThat(queryLong("SELECT count(*) FROM queen.log_partitions p WHERE p.id = '" + id + "'"
                + " AND p.oldest_live_at = (SELECT created_at FROM queen.log_segments WHERE partition_id = p.id AND base_offset = 5)"
                + " AND p.oldest_txn_at < p.oldest_live_at")).isEqualTo(1);
        assertThat(third.baseOffset()).isEqualTo(5);
    }

    @Test
    void twoTenantsWithTheSameQueueNameGetDifferentQueues() throws Exception {
        LogPusher pusher = new LogPusher(db.dataSource());
        UUID other = UUID.fromString("00000000-0000-0000-0000-0000000000aa");
        Appended a = pusher.push(new Destination(TENANT, "shared.name", "Default"), segment("x", 1));
        Appended b = pusher.push(new Destination(other, "shared.name", "Default"), segment("x", 1));
        assertThat(a.partitionId()).isNotEqualTo(b.partitionId());
        assertThat(a.baseOffset()).isZero();
        assertThat(b.baseOffset()).as("offsets are per partition, the other tenant's push is not counted").isZero();
        assertThat(queryLong("SELECT count(DISTINCT queue_id) FROM queen.log_partitions WHERE id IN ('"
                + a.partitionId() + "', '" + b.partitionId() + "')")).isEqualTo(2);
        assertThat(queryLong("SELECT count(*) FROM queen.queues WHERE name = 'shared.name'")).isEqualTo(2);
    }

    @Test
    void provisioningDerivesNamespaceAndTaskAndIsIdempotent() throws Exception {
        LogPusher pusher = new LogPusher(db.dataSource());
        List<Destination> dests = List.of(
                new Destination(TENANT, "orders.reminders", "Default"),
                new Destination(TENANT, "plain", "Default"),
                new Destination(TENANT, "a.b.c", "p1"),
                new Destination(TENANT, "a.b.c", "p2"),
                new Destination(TENANT, "a.b.c", "p2"));
        Map<Destination, UUID> ids;
        try (Connection c = db.dataSource().getConnection()) {
            ids = pusher.provision(c, dests);
            assertThat(ids).hasSize(4).containsOnlyKeys(dests);
            assertThat(pusher.provision(c, dests)).isEqualTo(ids);
        }
        assertThat(namespaceTask("orders.reminders")).isEqualTo("orders|reminders");
        assertThat(namespaceTask("plain")).isEqualTo("plain|");
        assertThat(namespaceTask("a.b.c")).isEqualTo("a|b");
        assertThat(queryLong("SELECT count(*) FROM queen.log_partitions p JOIN queen.queues q ON q.id = p.queue_id"
                + " WHERE q.name = 'a.b.c'")).isEqualTo(2);
        assertThat(queryLong("SELECT last_offset FROM queen.log_partitions WHERE id = '" + ids.get(dests.get(0)) + "'"))
                .isEqualTo(-1);
    }

    @Test
    void pushAllPreLocksSeveralPartitionsAndKeepsListOrderPerPartition() throws Exception {
        LogPusher pusher = new LogPusher(db.dataSource());
        Destination x = new Destination(TENANT, "multi.x", "Default");
        Destination y = new Destination(TENANT, "multi.y", "P");
        pusher.push(y, segment("pre", 4));
        List<Appended> out = pusher.pushAll(List.of(
                new SegmentPush(x, segment("1", 2)),
                new SegmentPush(y, segment("2", 3)),
                new SegmentPush(x, segment("3", 1))));
        assertThat(out).extracting(Appended::destination).containsExactly(x, y, x);
        assertThat(out).extracting(Appended::baseOffset).containsExactly(0L, 4L, 2L);
        assertThat(out.get(0).partitionId()).isEqualTo(out.get(2).partitionId()).isNotEqualTo(out.get(1).partitionId());
        assertThat(out.get(2).createdAt()).isAfterOrEqualTo(out.get(0).createdAt());
    }

    /**
     * Concurrent provisioners of the same new queues and partitions, each in a shuffled order, in
     * transactions that stay open a moment after provisioning: ordered inserts mean one waits for
     * the other and never a cycle (unordered, the unique-index waits deadlock), and all agree on ids.
     */
    @Test
    void concurrentProvisioningInShuffledOrdersAgreesAndNeverDeadlocks() throws Exception {
        DataSource pool = db.newDataSource(4);
        LogPusher pusher = new LogPusher(pool);
        int threadsCount = 4;
        java.util.concurrent.CyclicBarrier barrier = new java.util.concurrent.CyclicBarrier(threadsCount);
        ExecutorService threads = Executors.newFixedThreadPool(threadsCount);
        try {
            List<Future<List<Map<Destination, UUID>>>> done = new ArrayList<>();
            for (int t = 0; t < threadsCount; t++) {
                done.add(threads.submit(() -> {
                    List<Map<Destination, UUID>> seen = new ArrayList<>();
                    for (int round = 0; round < 15; round++) {
                        int r = round;
                        List<Destination> dests = new ArrayList<>(IntStream.range(0, 8)
                                .mapToObj(i -> new Destination(i % 2 == 0 ? TENANT : UUID.fromString("00000000-0000-0000-0000-0000000000cc"),
                                        "storm" + r + ".q" + (i / 2), "P" + (i % 3)))
                                .toList());
                        java.util.Collections.shuffle(dests);
                        barrier.await(10, TimeUnit.SECONDS);
                        try (Connection c = pool.getConnection()) {
                            c.setAutoCommit(false);
                            seen.add(pusher.provision(c, dests));
                            Thread.sleep(5); // hold the new rows' index entries while the others arrive
                            c.commit();
                        }
                    }
                    return seen;
                }));
            }
            List<List<Map<Destination, UUID>>> all = new ArrayList<>();
            for (Future<List<Map<Destination, UUID>>> f : done) {
                all.add(f.get(60, TimeUnit.SECONDS)); // a deadlock surfaces here (40P01)
            }
            for (int round = 0; round < 15; round++) {
                Map<Destination, UUID> first = all.get(0).get(round);
                assertThat(first).hasSize(8);
                for (List<Map<Destination, UUID>> other : all) {
                    assertThat(other.get(round)).isEqualTo(first);
                }
            }
        } finally {
            threads.shutdownNow();
        }
    }

    /** Without the ascending pre-lock, appending in these shuffled list orders deadlocks (40P01). */
    @Test
    void pushAllInShuffledOrdersNeverDeadlocks() throws Exception {
        DataSource pool = db.newDataSource(4);
        LogPusher pusher = new LogPusher(pool);
        List<Destination> dests = IntStream.range(0, 5).mapToObj(i -> new Destination(TENANT, "shuffle.q" + i, "Default")).toList();
        ConcurrentLinkedQueue<Appended> results = new ConcurrentLinkedQueue<>();
        long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(2);
        ExecutorService threads = Executors.newFixedThreadPool(4);
        try {
            List<Future<?>> done = new ArrayList<>();
            for (int t = 0; t < 4; t++) {
                done.add(threads.submit(() -> {
                    while (System.nanoTime() < until) {
                        List<Destination> order = new ArrayList<>(dests);
                        java.util.Collections.shuffle(order);
                        results.addAll(pusher.pushAll(order.stream().map(d -> new SegmentPush(d, segment("s", 1))).toList()));
                    }
                    return null;
                }));
            }
            for (Future<?> f : done) {
                f.get(30, TimeUnit.SECONDS); // a deadlock surfaces here as an ExecutionException (40P01)
            }
        } finally {
            threads.shutdownNow();
        }
        for (Destination d : dests) {
            List<Long> offsets = results.stream().filter(a -> a.destination().equals(d)).map(Appended::baseOffset).sorted().toList();
            assertThat(offsets).isEqualTo(java.util.stream.LongStream.range(0, offsets.size()).boxed().toList());
        }
    }

    @Test
    void lockReturnsOnlyPartitionsThatStillExistAndPushReprovisionsADeletedOne() throws Exception {
        LogPusher pusher = new LogPusher(db.dataSource());
        Destination dest = new Destination(TENANT, "vanish.q", "Default");
        Appended before = pusher.push(dest, segment("x", 1));
        UUID gone = before.partitionId();
        execute("DELETE FROM queen.log_partitions WHERE id = '" + gone + "'");
        try (Connection c = db.dataSource().getConnection()) {
            UUID absent = UUID.randomUUID();
            assertThat(pusher.lockPartitions(c, List.of(gone, absent))).isEmpty();
            assertThatThrownBy(() -> pusher.append(c, dest, gone, segment("y", 1)))
                    .isInstanceOf(SQLException.class)
                    .satisfies(e -> assertThat(((SQLException) e).getSQLState()).isEqualTo("P0002"));
        }
        Appended after = pusher.push(dest, segment("z", 2));
        assertThat(after.partitionId()).isNotEqualTo(gone);
        assertThat(after.baseOffset()).isZero();
    }

    @Test
    void appendRefusesHashesThatDoNotMatchTheCount() throws Exception {
        LogPusher pusher = new LogPusher(db.dataSource());
        PackedSegment two = segment("h", 2);
        PackedSegment lying = new PackedSegment(two.blob(), two.hashes(), 3, two.rawBytes());
        assertThatThrownBy(() -> pusher.push(new Destination(TENANT, "hash.count", "Default"), lying))
                .isInstanceOf(SQLException.class).hasMessageContaining("3 frames need 48 hash bytes, got 32");
    }

    static PackedSegment segment(String txnPrefix, int count) {
        return SegmentCodec.pack(IntStream.range(0, count)
                .mapToObj(i -> Frame.of(UuidV7.next(), txnPrefix + "-" + i,
                        ("{\"n\":" + i + "}").getBytes(StandardCharsets.UTF_8)))
                .toList());
    }

    private static long lastOffset(UUID partitionId) throws SQLException {
        return queryLong("SELECT last_offset FROM queen.log_partitions WHERE id = '" + partitionId + "'");
    }

    private static String namespaceTask(String queue) throws SQLException {
        try (Connection c = db.dataSource().getConnection();
                PreparedStatement st = c.prepareStatement("SELECT namespace || '|' || task FROM queen.queues WHERE name = ?")) {
            st.setString(1, queue);
            try (ResultSet rs = st.executeQuery()) {
                assertThat(rs.next()).isTrue();
                return rs.getString(1);
            }
        }
    }

    private static long queryLong(String sql) throws SQLException {
        try (Connection c = db.dataSource().getConnection(); Statement st = c.createStatement(); ResultSet rs = st.executeQuery(sql)) {
            assertThat(rs.next()).isTrue();
            return rs.getLong(1);
        }
    }

    private static void execute(String sql) throws SQLException {
        try (Connection c = db.dataSource().getConnection(); Statement st = c.createStatement()) {
            st.execute(sql);
        }
    }
}
