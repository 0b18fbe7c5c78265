package io.queen.timers.log.cleanup;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.queen.timers.log.codec.Frame;
import io.queen.timers.log.codec.PackedSegment;
import io.queen.timers.log.codec.SegmentCodec;
import io.queen.timers.log.codec.UuidV7;
import io.queen.timers.log.push.Appended;
import io.queen.timers.log.push.Destination;
import io.queen.timers.log.push.LogPusher;
import io.queen.timers.log.push.SegmentPush;
import io.queen.timers.sql.Migrations;
import io.queen.timers.testkit.PostgresDatabase;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

class PartitionCleanupIT {

    @RegisterExtension
    static final PostgresDatabase db = PostgresDatabase.initializedWith(Migrations::migrate);

    private static final UUID TENANT = Destination.DEFAULT_TENANT;
    private static final Duration SEVEN_DAYS = Duration.ofDays(7);

    private LogPusher pusher;

    @BeforeEach
    void emptyLog() throws SQLException {
        pusher = new LogPusher(db.dataSource());
        execute("DELETE FROM queen.log_dlq");
        execute("DELETE FROM queen.log_txns"); // Queen's log_txns has no foreign key: nothing cascades to it
        execute("DELETE FROM queen.queues"); // cascades to partitions, segments and consumers
    }

    @Test
    void anEmptyOldPartitionIsDeletedAndAYoungOneStays() throws Exception {
        UUID old = provision("empty.old");
        UUID young = provision("empty.young");
        age(old, Duration.ofDays(8));
        age(young, Duration.ofDays(6));
        assertThat(new PartitionCleanup(db.dataSource(), SEVEN_DAYS, 10).runOnce()).containsExactly(old);
        assertThat(exists(old)).isFalse();
        assertThat(exists(young)).isTrue();
    }

    @Test
    void aPartitionWithSegmentsStays() throws Exception {
        Appended a = pusher.push(dest("with.segments"), segment());
        age(a.partitionId(), Duration.ofDays(30));
        assertThat(new PartitionCleanup(db.dataSource(), SEVEN_DAYS, 10).runOnce()).isEmpty();
        assertThat(exists(a.partitionId())).isTrue();
    }

    @Test
    void aPartitionWithADlqRowStays() throws Exception {
        UUID id = provision("with.dlq");
        age(id, Duration.ofDays(30));
        execute("INSERT INTO queen.log_dlq (partition_id, consumer_group, \"offset\", error) VALUES ('" + id
                + "', '__timer__', -1, 'boom')");
        assertThat(new PartitionCleanup(db.dataSource(), SEVEN_DAYS, 10).runOnce()).isEmpty();
        assertThat(exists(id)).isTrue();
    }

    @Test
    void aPartitionWithALiveConsumerLeaseStaysAndAStaleConsumerDoesNotKeepIt() throws Exception {
        UUID leased = provision("with.lease");
        UUID stale = provision("with.stale.consumer");
        age(leased, Duration.ofDays(30));
        age(stale, Duration.ofDays(30));
        // Queen's pop leases (committed, batch_end] until lease_expires_at; the row itself is old.
        execute("INSERT INTO queen.log_consumers (partition_id, consumer_group, batch_end, lease_expires_at, lease_acquired_at,"
                + " created_at) VALUES ('" + leased + "', 'g', 0, now() + interval '1 minute', now() - interval '30 days',"
                + " now() - interval '30 days')");
        execute("INSERT INTO queen.log_consumers (partition_id, consumer_group, lease_expires_at, lease_acquired_at, created_at)"
                + " VALUES ('" + stale + "', 'g', now() - interval '20 days', now() - interval '20 days', now() - interval '20 days')");
        assertThat(new PartitionCleanup(db.dataSource(), SEVEN_DAYS, 10).runOnce()).containsExactly(stale);
        assertThat(exists(leased)).isTrue();
        assertThat(queryLong("SELECT count(*) FROM queen.log_consumers WHERE partition_id = '" + stale + "'")).isZero();
    }

    @Test
    void aDeletedPartitionTakesItsLogTxnsRowsWithItThoughNothingCascadesToThem() throws Exception {
        Appended a = pusher.push(dest("purged"), segment());
        Appended kept = pusher.push(dest("kept"), segment());
        // Queen's retention purged the segment; the log_txns row waits for its own, longer window.
        execute("DELETE FROM queen.log_segments WHERE partition_id = '" + a.partitionId() + "'");
        age(a.partitionId(), Duration.ofDays(8));
        assertThat(new PartitionCleanup(db.dataSource(), SEVEN_DAYS, 10).runOnce()).containsExactly(a.partitionId());
        assertThat(queryLong("SELECT count(*) FROM queen.log_txns WHERE partition_id = '" + a.partitionId() + "'")).isZero();
        assertThat(queryLong("SELECT count(*) FROM queen.log_txns WHERE partition_id = '" + kept.partitionId() + "'")).isEqualTo(1);
    }

    @Test
    void eachCallDeletesAtMostItsBound() throws Exception {
        for (int i = 0; i < 5; i++) {
            age(provision("bound." + i), Duration.ofDays(8));
        }
        // live old partitions with segments must not eat the bound
        for (int i = 0; i < 3; i++) {
            age(pusher.push(dest("bound.live" + i), segment()).partitionId(), Duration.ofDays(8));
        }
        PartitionCleanup cleanup = new PartitionCleanup(db.dataSource(), SEVEN_DAYS, 2);
        assertThat(cleanup.runOnce()).hasSize(2);
        assertThat(cleanup.runOnce()).hasSize(2);
        assertThat(cleanup.runOnce()).hasSize(1);
        assertThat(cleanup.runOnce()).isEmpty();
        assertThat(queryLong("SELECT count(*) FROM queen.log_partitions")).isEqualTo(3);
    }

    @Test
    void cleanupSkipsAPartitionAPushHoldsAndThePushedSegmentSurvives() throws Exception {
        UUID id = provision("held.by.push");
        age(id, Duration.ofDays(8));
        try (Connection push = db.dataSource().getConnection()) {
            push.setAutoCommit(false);
            assertThat(pusher.lockPartitions(push, List.of(id))).containsExactly(id);
            // does not wait for the push (SKIP LOCKED) and does not delete what it holds
            assertThat(CompletableFuture.supplyAsync(this::cleanupOnce).get(10, TimeUnit.SECONDS)).isEmpty();
            pusher.append(push, dest("held.by.push"), id, segment());
            push.commit();
        }
        assertThat(cleanupOnce()).isEmpty();
        assertThat(exists(id)).isTrue();
        assertThat(queryLong("SELECT count(*) FROM queen.log_segments WHERE partition_id = '" + id + "'")).isEqualTo(1);
    }

    @Test
    void aPushWaitingOnADeletingCleanupProvisionsThePartitionAgain() throws Exception {
        for (boolean multi : new boolean[] {false, true}) {
            Destination dest = dest("reprovision." + multi);
            UUID id = provision(dest.queue());
            age(id, Duration.ofDays(8));
            Appended pushed;
            try (Connection cleanup = db.dataSource().getConnection()) {
                cleanup.setAutoCommit(false);
                try (PreparedStatement st = cleanup.prepareStatement(
                        "SELECT count(*) FROM queen.log_cleanup_partitions_v1(now() - interval '7 days', 10)");
                        ResultSet rs = st.executeQuery()) {
                    rs.next();
                    assertThat(rs.getLong(1)).isEqualTo(1);
                }
                // the push sees the partition (the delete is not committed) and waits for its lock
                CompletableFuture<Appended> push = CompletableFuture.supplyAsync(() -> {
                    try {
                        return multi ? pusher.pushAll(List.of(new SegmentPush(dest, segment()))).get(0) : pusher.push(dest, segment());
                    } catch (SQLException e) {
                        throw new IllegalStateException(e);
                    }
                });
                awaitLockWaiter();
                cleanup.commit();
                pushed = push.get(10, TimeUnit.SECONDS);
            }
            assertThat(exists(id)).isFalse();
            assertThat(pushed.partitionId()).isNotEqualTo(id);
            assertThat(pushed.baseOffset()).isZero();
            assertThat(exists(pushed.partitionId())).isTrue();
        }
    }

    @Test
    void settingsAreValidated() {
        assertThatThrownBy(() -> new PartitionCleanup(db.dataSource(), Duration.ZERO, 1))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("idle");
        assertThatThrownBy(() -> new PartitionCleanup(db.dataSource(), SEVEN_DAYS, 0))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("max per call");
    }

    private List<UUID> cleanupOnce() {
        try {
            return new PartitionCleanup(db.dataSource(), SEVEN_DAYS, 10).runOnce();
        } catch (SQLException e) {
            throw new IllegalStateException(e);
        }
    }

    private static void awaitLockWaiter() throws Exception {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (queryLong("SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'") == 0) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError("the push never waited for the cleanup's lock");
            }
            Thread.sleep(20);
        }
    }

    private UUID provision(String queue) throws SQLException {
        try (Connection c = db.dataSource().getConnection()) {
            Map<Destination, UUID> ids = pusher.provision(c, List.of(dest(queue)));
            return ids.get(dest(queue));
        }
    }

    private static Destination dest(String queue) {
        return new Destination(TENANT, queue, "Default");
    }

    private static PackedSegment segment() {
        return SegmentCodec.pack(List.of(Frame.of(UuidV7.next(), "t", new byte[] {'{', '}'})));
    }

    /** Moves a partition's creation and last write into the past (the test's stand-in for waiting). */
    private static void age(UUID id, Duration by) throws SQLException {
        execute("UPDATE queen.log_partitions SET created_at = now() - interval '" + by.toSeconds() + " seconds',"
                + " last_write_at = now() - interval '" + by.toSeconds() + " seconds' WHERE id = '" + id + "'");
    }

    private static boolean exists(UUID id) throws SQLException {
        return queryLong("SELECT count(*) FROM queen.log_partitions WHERE id = '" + id + "'") == 1;
    }

    private static long queryLong(String sql) throws SQLException {
        try (Connection c = db.dataSource().getConnection(); PreparedStatement st = c.prepareStatement(sql);
                ResultSet rs = st.executeQuery()) {
            rs.next();
            return rs.getLong(1);
        }
    }

    private static void execute(String sql) throws SQLException {
        try (Connection c = db.dataSource().getConnection(); PreparedStatement st = c.prepareStatement(sql)) {
            st.execute();
        }
    }
}
