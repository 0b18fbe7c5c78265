package io.queen.timers.e2e;

import static io.queen.timers.sweeper.Staging.DEFAULT_TENANT;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.queen.timers.bridge.apply.BatchApplier;
import io.queen.timers.bridge.apply.Incoming;
import io.queen.timers.bridge.apply.OffsetAdvance;
import io.queen.timers.bridge.apply.Outcome;
import io.queen.timers.bridge.apply.Source;
import io.queen.timers.bridge.crypto.EncryptionKey;
import io.queen.timers.bridge.crypto.EncryptionPolicy;
import io.queen.timers.bridge.crypto.PayloadCipher;
import io.queen.timers.bridge.crypto.QueueEncryption;
import io.queen.timers.bridge.wire.Command;
import io.queen.timers.client.command.Op;
import io.queen.timers.core.telemetry.Telemetry;
import io.queen.timers.sql.BridgeGroups;
import io.queen.timers.sql.Migrations;
import io.queen.timers.sweeper.LogContents;
import io.queen.timers.sweeper.Staging;
import io.queen.timers.sweeper.SweeperMain;
import io.queen.timers.sweeper.Sweepers;
import io.queen.timers.testkit.IndependentGcm;
import io.queen.timers.testkit.PostgresDatabase;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.bouncycastle.crypto.InvalidCipherTextException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Payload encryption end to end: sealed by the bridge's apply step, staged encrypted, fired by the real
 * sweeper with frame flag 4 (and flag 2 for the producer sub), and the envelope read back from the log
 * opened by an independent AES-GCM implementation.
 */
class EncryptedFireIT {

    @RegisterExtension
    static final PostgresDatabase db = PostgresDatabase.initializedWith(Migrations::migrate);

    static final String KEY_HEX = "3c".repeat(32);
    static final ObjectMapper JSON = new ObjectMapper();

    @Test
    void sealedAtScheduleFiredWithFlagFourAndOpenedFromTheLogByAnIndependentAesGcm() throws Exception {
        new Staging(db.dataSource()).clear();   // each test of this class starts from an empty log
        PayloadCipher cipher = new PayloadCipher(EncryptionKey.fromHex(KEY_HEX, "encryption.key"), List.of());
        BatchApplier applier = new BatchApplier(db.dataSource(), "enc-test", BatchApplier.Limits.defaults(Duration.ofSeconds(30), 64),
                new QueueEncryption(new EncryptionPolicy(List.of("vault.*")), Optional.of(cipher)), Telemetry.off());
        String small = "{\"card\":\"4111-1111-1111-1111\"}";
        String large = "{\"card\":\"4111-1111-1111-1111\",\"note\":\"" + "z".repeat(500) + "\"}";
        Instant due = Instant.now().minusSeconds(1);
        List<Incoming> batch = new ArrayList<>();
        batch.add(incoming(0, "billing-svc", "vault.cards", "a", due, small));
        batch.add(incoming(1, "billing-svc", "vault.cards", "b", due, large));
        batch.add(incoming(2, null, "open", "c", due, small));
        assertThat(applier.apply(batch, List.of(new OffsetAdvance("t", 0, null, 3)))).isInstanceOf(Outcome.Applied.class);

        Staging staging = new Staging(db.dataSource());
        assertThat(staging.count("SELECT count(*) FROM queen.log_timers WHERE encrypted AND queue = 'vault.cards'")).isEqualTo(2);
        assertThat(staging.count("SELECT count(*) FROM queen.log_timers WHERE position('4111'::bytea IN payload) > 0")).isEqualTo(1); // 'open' only

        try (SweeperMain sweeper = Sweepers.start(db, Map.of())) {
            await().atMost(Duration.ofSeconds(60)).until(() -> LogContents.read(db.dataSource()).size() == 3);
        }
        assertThat(staging.count("SELECT count(*) FROM queen.log_timers")).isZero();
        for (LogContents.Message m : LogContents.read(db.dataSource())) {
            String txn = m.txn();
            if (m.queue().equals("open")) {
                assertThat(m.frame().encrypted()).isFalse();
                assertThat(m.frame().producerSub()).isNull();
                assertThat(new String(m.frame().payload(), StandardCharsets.UTF_8)).isEqualTo(small);
                continue;
            }
            assertThat(m.frame().encrypted()).as("flag 4 of %s", txn).isTrue();
            assertThat(m.frame().producerSub()).as("flag 2 of %s", txn).isEqualTo("billing-svc");
            byte[] envelope = m.frame().payload();
            assertThat(new String(envelope, StandardCharsets.UTF_8)).doesNotContain("4111");
            IndependentGcm.Opened opened = IndependentGcm.open(envelope, HexFormat.of().parseHex(KEY_HEX));
            assertThat(opened.ivBytes()).isEqualTo(PayloadCipher.IV_BYTES);
            assertThat(opened.tagBytes()).isEqualTo(PayloadCipher.TAG_BYTES);
            assertThat(new String(opened.plaintext(), StandardCharsets.UTF_8)).isEqualTo(txn.equals("t-a") ? small : large);

            ObjectNode tampered = (ObjectNode) JSON.readTree(envelope);
            String ct = tampered.get("encrypted").asText();
            tampered.put("encrypted", (ct.charAt(0) == 'A' ? "B" : "A") + ct.substring(1));
            byte[] bad = JSON.writeValueAsBytes(tampered);
            assertThatThrownBy(() -> IndependentGcm.open(bad, HexFormat.of().parseHex(KEY_HEX))).isInstanceOf(InvalidCipherTextException.class);
            assertThatThrownBy(() -> cipher.open(bad)).isInstanceOf(PayloadCipher.EnvelopeException.class);
        }
        assertThat(staging.count("SELECT count(*) FROM queen.queues WHERE tenant_id = '" + DEFAULT_TENANT + "'")).isEqualTo(2);
    }

    /**
     * Issue 24: a schedule the bridge staged in clear (its queue was not encrypted then) whose queue gets
     * encryption_enabled before it is due is never fired in clear by the real sweeper: dead-lettered
     * (encryption_unavailable), while a clear timer for an open queue, due at the same moment, fires.
     */
    @Test
    void aTimerStagedClearBeforeItsQueueTurnedEncryptedNeverEntersTheLogInClear() throws Exception {
        Staging staging = new Staging(db.dataSource());
        staging.clear();
        BatchApplier applier = new BatchApplier(db.dataSource(), "enc-late", BatchApplier.Limits.defaults(Duration.ofSeconds(30), 64),
                QueueEncryption.none(), Telemetry.off());
        String secret = "{\"card\":\"5500-0000-0000-0004\"}";
        Instant due = Instant.now().plusSeconds(2);
        List<Incoming> batch = new ArrayList<>();
        batch.add(incoming(0, null, "late.vault", "s", due, secret));
        batch.add(incoming(1, null, "late.open", "o", due, secret));
        assertThat(applier.apply(batch, List.of(new OffsetAdvance("late", 0, null, 2)))).isInstanceOf(Outcome.Applied.class);
        assertThat(staging.count("SELECT count(*) FROM queen.log_timers WHERE NOT encrypted")).isEqualTo(2);
        // Queen switches the queue on after the schedule, before the timer is due
        staging.execute("INSERT INTO queen.queues (tenant_id, name, encryption_enabled) VALUES ('" + DEFAULT_TENANT + "', 'late.vault', true)");

        try (SweeperMain sweeper = Sweepers.start(db, Map.of())) {
            // both leave the staging table: one fired, one dead-lettered (the old fire fired both)
            await().atMost(Duration.ofSeconds(60)).until(() -> staging.count("SELECT count(*) FROM queen.log_timers") == 0);
        }
        List<LogContents.Message> log = LogContents.read(db.dataSource());
        assertThat(log).extracting(LogContents.Message::queue).containsExactly("late.open");
        assertThat(new String(log.get(0).frame().payload(), StandardCharsets.UTF_8)).isEqualTo(secret);
        assertThat(staging.count("SELECT count(*) FROM queen.log_segments s JOIN queen.log_partitions p ON p.id = s.partition_id"
                + " JOIN queen.queues q ON q.id = p.queue_id WHERE q.name = 'late.vault'")).isZero();
        assertThat(staging.count("SELECT count(*) FROM queen.log_dlq WHERE error = 'encryption_unavailable' AND transaction_id = 't-s'"))
                .isEqualTo(1);
        assertThat(staging.count("SELECT count(*) FROM queen.timer_audit_events WHERE type = 'dead_lettered'"
                + " AND kafka_key = 'late.vault/s' AND event->>'error' = 'encryption_unavailable'")).isEqualTo(1);
    }

    /**
     * Issue 24, the encryption.queues side: a timer staged clear (no pattern matched its queue then) whose
     * queue a bridge's encryption.queues names by the time it is due (that bridge wrote its patterns at
     * start) is dead-lettered, never pushed in clear; the patterns match as the bridge matches them (a
     * LIKE wildcard in a queue name is a literal), so a queue they do not name fires.
     */
    @Test
    void aTimerStagedClearBeforeItsQueueMatchedEncryptionQueuesNeverEntersTheLogInClear() throws Exception {
        Staging staging = new Staging(db.dataSource());
        staging.clear();
        BatchApplier applier = new BatchApplier(db.dataSource(), "enc-pattern", BatchApplier.Limits.defaults(Duration.ofSeconds(30), 64),
                QueueEncryption.none(), Telemetry.off());
        String secret = "{\"card\":\"3400-0000-0000-009\"}";
        Instant due = Instant.now().plusSeconds(2);
        List<Incoming> batch = new ArrayList<>();
        batch.add(incoming(0, null, "pay_in.cards", "p", due, secret));   // named by pay_in.* below
        batch.add(incoming(1, null, "payXin.cards", "x", due, secret));   // would match if '_' were LIKE's wildcard
        assertThat(applier.apply(batch, List.of(new OffsetAdvance("pattern", 0, null, 2)))).isInstanceOf(Outcome.Applied.class);
        assertThat(staging.count("SELECT count(*) FROM queen.log_timers WHERE NOT encrypted")).isEqualTo(2);
        // the bridge restarts with pay_in.* in encryption.queues (and a key): it writes its patterns at start, and they
        // seal the queues of the tenant its command topic stands for (the owner's binding), no other tenant's
        BridgeGroups.bind(db.dataSource(), "bridge-g", db.user(), Map.of("t", DEFAULT_TENANT));
        PayloadCipher cipher = new PayloadCipher(EncryptionKey.fromHex(KEY_HEX, "encryption.key"), List.of());
        new QueueEncryption(new EncryptionPolicy(List.of("pay_in.*")), Optional.of(cipher)).publishPatterns(db.dataSource(), "bridge-g");

        try (SweeperMain sweeper = Sweepers.start(db, Map.of())) {
            await().atMost(Duration.ofSeconds(60)).until(() -> staging.count("SELECT count(*) FROM queen.log_timers") == 0);
        }
        List<LogContents.Message> log = LogContents.read(db.dataSource());
        assertThat(log).extracting(LogContents.Message::queue).containsExactly("payXin.cards");
        assertThat(staging.count("SELECT count(*) FROM queen.log_dlq WHERE error = 'encryption_unavailable' AND transaction_id = 't-p'"))
                .isEqualTo(1);
        assertThat(staging.count("SELECT count(*) FROM queen.timer_audit_events WHERE type = 'dead_lettered'"
                + " AND kafka_key = 'pay_in.cards/p' AND event->>'error' = 'encryption_unavailable'")).isEqualTo(1);

        // no patterns any more (restarted without encryption.queues): the group's row is gone
        QueueEncryption.none().publishPatterns(db.dataSource(), "bridge-g");
        assertThat(staging.count("SELECT count(*) FROM queen.bridge_sealed_queues")).isZero();
    }

    private static Incoming incoming(long offset, String sub, String queue, String key, Instant at, String payload) {
        return new Incoming(new Source("t", 0, offset), DEFAULT_TENANT, sub, new Command(Op.SCHEDULE, queue, key, Command.DEFAULT_PARTITION,
                Command.Schedule.once(at, "t-" + key, payload.getBytes(StandardCharsets.UTF_8))));
    }
}
