package io.queen.timers.e2e;

import static io.queen.timers.sweeper.Staging.DEFAULT_TENANT;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.queen.timers.bridge.apply.Verdict;
import io.queen.timers.core.config.CommonSettings;
import io.queen.timers.inspect.TimerInspector;
import io.queen.timers.inspect.TimerState;
import io.queen.timers.relay.AuditSettings;
import io.queen.timers.sql.Migrations;
import io.queen.timers.sweeper.LogContents;
import io.queen.timers.sweeper.Poison;
import io.queen.timers.sweeper.Staging;
import io.queen.timers.sweeper.SweeperMain;
import io.queen.timers.sweeper.SweeperSettings;
import io.queen.timers.sweeper.Sweepers;
import io.queen.timers.sweeper.claim.ClaimedTimer;
import io.queen.timers.testkit.PostgresDatabase;
import io.queen.timers.testkit.TestKafka;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * One poisoned timer among 200 for one destination: it must not hold back the other 199, it must stay
 * cancellable while it backs off, and after max attempts it must sit in queen.log_dlq. The poison is a
 * trigger in this test's database that refuses its txn with a permanent SQLSTATE ({@link Poison}).
 */
class PoisonIT {

    @RegisterExtension
    static final PostgresDatabase db = PostgresDatabase.initializedWith(Migrations::migrate);

    private static Staging staging;
    private static Poison poison;

    @BeforeAll
    static void installPoison() {
        staging = new Staging(db.dataSource());
        poison = new Poison(staging).install();
    }

    @BeforeEach
    void clean() {
        staging.clear();
        poison.cureAll();
    }

    private void schedule200WithOnePoisoned() {
        poison.poison("txn-poison");
        for (int i = 0; i < 200; i++) {
            String key = i == 137 ? "poison" : String.format("k%03d", i);
            staging.schedule(DEFAULT_TENANT, "orders", key, -2 + i * 0.001);
        }
    }

    @Test
    void onePoisonedTimerHoldsBackNobodyAndIsCancellableDuringItsBackoff() throws Exception {
        schedule200WithOnePoisoned();
        try (SweeperMain sweeper = Sweepers.start(db, Map.of(SweeperSettings.BACKOFF_BASE, "30s"))) {
            await().atMost(30, TimeUnit.SECONDS).until(() -> LogContents.read(db.dataSource()).size() == 199);
            // the 199 went out while the poisoned timer failed once: in that cycle, not after its retry
            Staging.Row row = staging.row(DEFAULT_TENANT, "orders", "poison");
            assertThat(row.attempts()).isEqualTo(1);
            assertThat(row.claimToken()).isNull();
            assertThat(row.lastError()).contains("23514");
            assertThat(new TimerInspector(db.dataSource()).peek(DEFAULT_TENANT, "orders", "poison").orElseThrow().state())
                    .isEqualTo(TimerState.BACKOFF);

            assertThat(new Commands(db.dataSource()).cancel(DEFAULT_TENANT, "orders", "poison")).isEqualTo(Verdict.CANCELLED);
        }
        assertThat(staging.row(DEFAULT_TENANT, "orders", "poison")).isNull();
        assertThat(LogContents.txnCounts(db.dataSource())).hasSize(199).doesNotContainKey("txn-poison").allSatisfy((txn, n) -> assertThat(n).isEqualTo(1));
        assertThat(staging.count("SELECT count(*) FROM queen.log_dlq")).isZero();
        assertThat(staging.count("SELECT count(*) FROM queen.timer_audit_events WHERE type = 'retrying' AND kafka_key = 'orders/poison'"))
                .isEqualTo(1);
    }

    @Test
    void aTracedTimersRetryingAndDeadLetteredEventsCarryItsTrace() {
        poison.poison("txn-traced");
        staging.schedule(DEFAULT_TENANT, "orders", "traced", -1);
        staging.execute("UPDATE queen.log_timers SET trace_context = decode('4bf92f3577b34da6a3ce929d0e0e473600f067aa0ba902b7', 'hex')"
                + " WHERE timer_key = 'traced'");   // as the bridge stores a command's traceparent (V090)
        try (SweeperMain sweeper = Sweepers.start(db, Map.of(SweeperSettings.MAX_ATTEMPTS, "2"))) {
            await().atMost(30, TimeUnit.SECONDS).until(() -> staging.count("SELECT count(*) FROM queen.log_dlq") == 1);
        }
        String traced = "event->>'traceId' = '4bf92f3577b34da6a3ce929d0e0e4736' AND event->>'spanId' = '00f067aa0ba902b7'";
        assertThat(staging.count("SELECT count(*) FROM queen.timer_audit_events WHERE type = 'retrying' AND " + traced)).isEqualTo(2);
        assertThat(staging.count("SELECT count(*) FROM queen.timer_audit_events WHERE type = 'dead_lettered' AND " + traced)).isEqualTo(1);
        staging.checkAuditEvents();
    }

    @Test
    void afterFivePermanentFailuresThePoisonedTimerSitsInTheDlqWithADeadLetteredEvent() throws Exception {
        String auditTopic = TestKafka.newTopic("audit-poison", 1);
        schedule200WithOnePoisoned();
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        try (SweeperMain sweeper = Sweepers.start(db, Map.of(AuditSettings.RELAY_ENABLED, "true",
                CommonSettings.KAFKA_BOOTSTRAP, TestKafka.bootstrapServers(), CommonSettings.AUDIT_TOPIC, auditTopic), registry)) {
            await().atMost(30, TimeUnit.SECONDS).until(() -> staging.count("SELECT count(*) FROM queen.log_dlq") == 1);
            // the gauge counts what waits in the table (counted every 15 s)
            await().atMost(60, TimeUnit.SECONDS).until(() -> registry.get("queen.timers.dead.letters").gauge().value() == 1.0);
            // the relay publishes the outbox: the dead_lettered event reaches Kafka under the timer's key
            List<String> events = new ArrayList<>();
            try (var consumer = new KafkaConsumer<byte[], byte[]>(TestKafka.consumerProps("g-" + UUID.randomUUID()))) {
                consumer.subscribe(List.of(auditTopic));
                await().atMost(30, TimeUnit.SECONDS).until(() -> {
                    for (ConsumerRecord<byte[], byte[]> r : consumer.poll(Duration.ofMillis(200))) {
                        if (new String(r.key(), StandardCharsets.UTF_8).equals("orders/poison")) {
                            events.add(new String(r.value(), StandardCharsets.UTF_8));
                        }
                    }
                    return events.stream().anyMatch(e -> e.contains("\"dead_lettered\""));
                });
            }
            assertThat(events.stream().filter(e -> e.contains("\"retrying\""))).hasSize(5);
            assertThat(events.get(events.size() - 1)).contains("\"dead_lettered\"").contains("\"attempts\": 5").contains("txn-poison");
        }
        try (Connection c = db.dataSource().getConnection(); Statement st = c.createStatement();
                ResultSet rs = st.executeQuery("SELECT d.consumer_group, d.\"offset\", d.transaction_id, d.retry_count, d.error,"
                        + " d.payload->>'key', q.tenant_id, q.name, p.name, d.message_id IS NOT NULL"
                        + " FROM queen.log_dlq d JOIN queen.log_partitions p ON p.id = d.partition_id JOIN queen.queues q ON q.id = p.queue_id")) {
            assertThat(rs.next()).isTrue();
            assertThat(rs.getString(1)).isEqualTo("__timer__");
            assertThat(rs.getLong(2)).isEqualTo(-1);
            assertThat(rs.getString(3)).isEqualTo("txn-poison");
            assertThat(rs.getInt(4)).isEqualTo(5);
            assertThat(rs.getString(5)).contains("23514");
            assertThat(rs.getString(6)).isEqualTo("poison");   // the payload, as JSON
            assertThat(rs.getObject(7, UUID.class)).isEqualTo(DEFAULT_TENANT);
            assertThat(rs.getString(8)).isEqualTo("orders");
            assertThat(rs.getString(9)).isEqualTo("Default");
            assertThat(rs.getBoolean(10)).isTrue();
        }
        assertThat(staging.row(DEFAULT_TENANT, "orders", "poison")).isNull();
        assertThat(LogContents.txnCounts(db.dataSource())).hasSize(199).doesNotContainKey("txn-poison");
        assertThat(staging.count("SELECT count(*) FROM queen.timer_audit_events WHERE type = 'dead_lettered'")).isZero();   // published and deleted
    }

    @Test
    void aRescheduleAfterTheClaimOfAnExhaustedTimerRanOutWins() throws Exception {
        // an exhausted timer whose claim ran out before its dead-letter (the sweeper stalled): no token any more
        staging.schedule(DEFAULT_TENANT, "orders", "k", -1);
        staging.execute("UPDATE queen.log_timers SET attempts = 5, last_error = 'boom', claimed_until = now() + interval '1 hour'");
        assertThat(new Commands(db.dataSource()).reschedule(DEFAULT_TENANT, "orders", "k", java.time.Instant.now().plusSeconds(3600)))
                .isEqualTo(Verdict.RESCHEDULED);
        var failer = new io.queen.timers.sweeper.fail.Failer(db.dataSource(), Duration.ofSeconds(1), Duration.ofSeconds(1), Duration.ofSeconds(60), 5);
        var timer = new ClaimedTimer(new ClaimedTimer.Key(DEFAULT_TENANT, "orders", "k"), ClaimedTimer.Schedule.once(null, null),
                new ClaimedTimer.Message("Default", "txn-k", io.queen.timers.log.codec.UuidV7.next(), null, null),
                new ClaimedTimer.Payload(new byte[0], false, false), new ClaimedTimer.Lease(UUID.randomUUID(), null, null),
                new ClaimedTimer.History(5, "boom", 0));

        // the dead-letter needs the caller's live claim (V130): the stale token moves nothing
        assertThat(failer.deadLetter(List.of(timer))).isEmpty();
        assertThat(staging.row(DEFAULT_TENANT, "orders", "k").attempts()).isZero();
        assertThat(staging.count("SELECT count(*) FROM queen.log_dlq")).isZero();
    }
}
