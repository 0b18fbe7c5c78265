package io.queen.timers.sweeper;

import static io.queen.timers.sweeper.Staging.DEFAULT_TENANT;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.queen.timers.log.codec.Compression;
import io.queen.timers.sql.Migrations;
import io.queen.timers.sweeper.claim.ClaimedTimer;
import io.queen.timers.sweeper.claim.Claimer;
import io.queen.timers.sweeper.fail.Failer;
import io.queen.timers.sweeper.fire.FireResult;
import io.queen.timers.sweeper.fire.Firer;
import io.queen.timers.sweeper.fire.SegmentOutcome;
import io.queen.timers.sweeper.loop.Delivery;
import io.queen.timers.sweeper.loop.SweeperMetrics;
import io.queen.timers.sweeper.pack.FireBatch;
import io.queen.timers.sweeper.pack.PackResult;
import io.queen.timers.sweeper.pack.Packer;
import io.queen.timers.testkit.PostgresDatabase;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * No plaintext into an encrypted queue (issue 24): a timer staged in clear whose queue has
 * {@code queen.queues.encryption_enabled} by the time of its fire is refused by the fire's own transaction
 * ({@code encryption_unavailable}, queen.log_dlq, a {@code dead_lettered} event, no attempt spent) and never appears in
 * the log; the other segments of the fire, and the segment's encrypted timers (in the next cycle), still fire.
 */
class EncryptedQueueRefusalIT {

    @RegisterExtension
    static final PostgresDatabase db = PostgresDatabase.initializedWith(Migrations::migrate);

    private Staging staging;
    private final Packer packer = new Packer(8 * 1024 * 1024);

    @BeforeEach
    void clean() {
        staging = new Staging(db.dataSource());
        staging.clear();
    }

    private List<ClaimedTimer> claim() throws SQLException {
        return new Claimer(db.dataSource(), 200, Duration.ofSeconds(30), 8).claim();
    }

    /** A staged row that the bridge sealed: encrypted = true, an envelope that does not hold the clear text. */
    private void scheduleSealed(String queue, String key) {
        staging.schedule(DEFAULT_TENANT, queue, key, -1);
        staging.execute("UPDATE queen.log_timers SET encrypted = true,"
                + " payload = convert_to('{\"encrypted\":\"AAAA\",\"iv\":\"BBBB\",\"authTag\":\"CCCC\",\"keyId\":\"k1\"}', 'UTF8')"
                + " WHERE timer_key = '" + key + "'");
    }

    private void assertNoClearPayloadOf(String key) {
        for (LogContents.Message m : LogContents.read(db.dataSource())) {
            assertThat(new String(m.frame().payload(), StandardCharsets.UTF_8)).as("frame %s", m.txn()).doesNotContain("\"" + key + "\"");
            if (m.queue().equals("vault")) {
                assertThat(m.frame().encrypted()).as("a clear frame in the encrypted queue: %s", m.txn()).isTrue();
            }
        }
    }

    private void assertRefused(String key) {
        assertThat(staging.row(DEFAULT_TENANT, "vault", key)).isNull();
        assertThat(staging.count("SELECT count(*) FROM queen.log_dlq d JOIN queen.log_partitions p ON p.id = d.partition_id"
                + " JOIN queen.queues q ON q.id = p.queue_id WHERE q.name = 'vault' AND d.error = 'encryption_unavailable'"
                + " AND d.transaction_id = 'txn-" + key + "' AND d.retry_count = 0 AND d.consumer_group = '__timer__' AND d.\"offset\" = -1"))
                .isEqualTo(1);
        // what `dead-letters replay` needs and the DLQ row cannot hold: tenant and timer key, by the DLQ row's id (V128)
        assertThat(staging.count("SELECT count(*) FROM queen.log_dlq d JOIN queen.timer_dlq_keys k ON k.dlq_id = d.id"
                + " WHERE d.transaction_id = 'txn-" + key + "' AND k.tenant_id = '" + DEFAULT_TENANT + "' AND k.queue = 'vault'"
                + " AND k.timer_key = '" + key + "'")).isEqualTo(1);
        assertThat(staging.count("SELECT count(*) FROM queen.timer_audit_events WHERE type = 'dead_lettered'"
                + " AND kafka_key = 'vault/" + key + "' AND event->>'error' = 'encryption_unavailable' AND (event->>'attempts')::int = 0"))
                .isEqualTo(1);
        assertThat(staging.count("SELECT count(*) FROM queen.timer_audit_events WHERE type = 'fired' AND kafka_key = 'vault/" + key + "'"))
                .isZero();
    }

    @Test
    void aTimerStagedClearBeforeItsQueueTurnedEncryptedIsDeadLetteredWhileTheOtherSegmentFires() throws Exception {
        staging.schedule(DEFAULT_TENANT, "vault", "secret", -2);
        scheduleSealed("vault", "sealed");
        staging.schedule(DEFAULT_TENANT, "open", "plain", -1);
        // Queen creates the queue encrypted after the timers were staged (the bridge staged them in clear)
        staging.execute("INSERT INTO queen.queues (tenant_id, name, encryption_enabled) VALUES ('" + DEFAULT_TENANT + "', 'vault', true)");

        PackResult packed = packer.pack(claim());
        assertThat(packed.fires()).hasSize(1);
        assertThat(packed.fires().get(0).segments()).hasSize(2);
        List<SegmentOutcome> outcomes = new Firer(db.dataSource()).fire(packed.fires().get(0));

        SegmentOutcome vault = outcomes.stream().filter(o -> o.segment().destination().queue().equals("vault")).findFirst().orElseThrow();
        assertThat(vault.result()).isEqualTo(FireResult.REFUSED);
        assertThat(vault.refused()).extracting(t -> t.key().timerKey()).containsExactly("secret");
        assertThat(vault.baseOffset()).isNull();
        assertThat(outcomes).filteredOn(o -> o.segment().destination().queue().equals("open"))
                .extracting(SegmentOutcome::result).containsExactly(FireResult.FIRED);

        assertThat(LogContents.read(db.dataSource())).extracting(LogContents.Message::txn).containsExactly("txn-plain");
        assertRefused("secret");
        Staging.Row sealed = staging.row(DEFAULT_TENANT, "vault", "sealed");
        assertThat(sealed.claimToken()).isNull();                            // released by the fire, claimable now
        assertThat(sealed.visibleAt()).isBeforeOrEqualTo(sealed.dbNow());
        assertThat(sealed.attempts()).isZero();

        assertThat(FireDue.now(db.dataSource())).isEqualTo(1);               // the next cycle fires the sealed one
        assertThat(LogContents.read(db.dataSource())).extracting(LogContents.Message::txn).containsExactlyInAnyOrder("txn-plain", "txn-sealed");
        assertNoClearPayloadOf("secret");
        assertThat(staging.count("SELECT count(*) FROM queen.log_timers")).isZero();
    }

    @Test
    void aFlagSwitchedOnAfterTheClaimIsReadByTheFire() throws Exception {
        staging.execute("INSERT INTO queen.queues (tenant_id, name, encryption_enabled) VALUES ('" + DEFAULT_TENANT + "', 'vault', false)");
        staging.schedule(DEFAULT_TENANT, "vault", "secret", -1);
        FireBatch batch = packer.pack(claim()).fires().get(0);

        staging.execute("UPDATE queen.queues SET encryption_enabled = true WHERE name = 'vault'");   // between claim and fire
        List<SegmentOutcome> outcomes = new Firer(db.dataSource()).fire(batch);

        assertThat(outcomes).extracting(SegmentOutcome::result).containsExactly(FireResult.REFUSED);
        assertThat(LogContents.read(db.dataSource())).isEmpty();
        assertRefused("secret");
    }

    @Test
    void aFlagSwitchInProgressDuringTheFireIsWaitedForAndRead() throws Exception {
        staging.execute("INSERT INTO queen.queues (tenant_id, name, encryption_enabled) VALUES ('" + DEFAULT_TENANT + "', 'vault', false)");
        staging.schedule(DEFAULT_TENANT, "vault", "secret", -1);
        FireBatch batch = packer.pack(claim()).fires().get(0);

        try (Connection flip = db.dataSource().getConnection()) {
            flip.setAutoCommit(false);
            try (Statement st = flip.createStatement()) {
                st.execute("UPDATE queen.queues SET encryption_enabled = true WHERE name = 'vault'");
            }
            CompletableFuture<List<SegmentOutcome>> fire = CompletableFuture.supplyAsync(() -> {
                try {
                    return new Firer(db.dataSource()).fire(batch);
                } catch (SQLException e) {
                    throw new IllegalStateException(e);
                }
            });
            // the fire must not read the flag as it was before this transaction decides: it waits on the queue row
            await().atMost(10, TimeUnit.SECONDS).until(() -> staging.count("SELECT count(*) FROM pg_stat_activity"
                    + " WHERE wait_event_type = 'Lock' AND query LIKE '%timer_fire_v3%'") == 1);
            flip.commit();
            assertThat(fire.get(10, TimeUnit.SECONDS)).extracting(SegmentOutcome::result).containsExactly(FireResult.REFUSED);
        }
        assertThat(LogContents.read(db.dataSource())).isEmpty();
        assertRefused("secret");
    }

    @Test
    void aRefusalIsNotAFailureOfTheDeliveryAndSpendsNoAttempt() throws Exception {
        staging.execute("INSERT INTO queen.queues (tenant_id, name, encryption_enabled) VALUES ('" + DEFAULT_TENANT + "', 'vault', true)");
        staging.schedule(DEFAULT_TENANT, "vault", "secret", -1);
        staging.schedule(DEFAULT_TENANT, "open", "plain", -1);
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        Delivery delivery = new Delivery(packer, new Firer(db.dataSource()),
                new Failer(db.dataSource(), Duration.ofSeconds(1), Duration.ofSeconds(1), Duration.ofSeconds(60), 5),
                new SweeperMetrics(registry), 8 * 1024 * 1024, Duration.ofSeconds(15));

        Delivery.Report report = delivery.deliver(claim(), () -> false);

        assertThat(report.fired()).isEqualTo(1);
        assertThat(report.failedTransiently()).isZero();
        assertThat(registry.get("queen.timers.fired").tag("result", "refused").counter().count()).isEqualTo(1.0);
        assertThat(registry.get("queen.timers.dead.lettered").counter().count()).isEqualTo(1.0);
        assertThat(staging.count("SELECT count(*) FROM queen.timer_audit_events WHERE type = 'retrying'")).isZero();
        assertThat(LogContents.read(db.dataSource())).extracting(LogContents.Message::txn).containsExactly("txn-plain");
        assertRefused("secret");
    }

    @Test
    void theDeadLetterKeepsThePayloadAsStagedForTheReplayAZstdOneInItsStoredForm() throws Exception {
        staging.execute("INSERT INTO queen.queues (tenant_id, name, encryption_enabled) VALUES ('" + DEFAULT_TENANT + "', 'vault', true)");
        staging.schedule(DEFAULT_TENANT, "vault", "secret", -2);
        byte[] raw = ("{\"big\":\"" + "x".repeat(5000) + "\"}").getBytes(StandardCharsets.UTF_8);
        staging.schedule(DEFAULT_TENANT, "vault", "zipped", "Default", -1, "txn-zipped", Compression.compress(raw), true, raw.length);

        assertThat(FireDue.now(db.dataSource())).isZero();

        assertRefused("secret");
        assertRefused("zipped");
        assertThat(staging.count("SELECT count(*) FROM queen.log_dlq WHERE transaction_id = 'txn-secret'"
                + " AND payload = '{\"key\":\"secret\"}'::jsonb")).isEqualTo(1);
        assertThat(staging.count("SELECT count(*) FROM queen.log_dlq WHERE transaction_id = 'txn-zipped'"
                + " AND payload->>'encoding' = 'zstd+base64' AND payload->>'encrypted' = 'false'")).isEqualTo(1);
        assertThat(LogContents.read(db.dataSource())).isEmpty();
        assertThat(staging.count("SELECT count(*) FROM queen.log_timers")).isZero();
    }
}
