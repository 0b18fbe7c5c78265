package io.queen.timers.bridge;

import static io.queen.timers.bridge.BridgeTestSupport.awaitRecords;
import static io.queen.timers.bridge.BridgeTestSupport.longQuery;
import static io.queen.timers.bridge.BridgeTestSupport.readAll;
import static io.queen.timers.bridge.BridgeTestSupport.storedOffsetSum;
import static io.queen.timers.bridge.BridgeTestSupport.verdictsBySource;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.queen.timers.client.command.TimerCommand;
import io.queen.timers.client.command.WireFormat;
import io.queen.timers.client.command.RejectReason;
import io.queen.timers.core.config.CommonSettings;
import io.queen.timers.relay.AuditSettings;
import io.queen.timers.routes.RouteSettings;
import io.queen.timers.stack.ServiceSettings;
import io.queen.timers.stack.Stack;
import io.queen.timers.testkit.PerClass;
import io.queen.timers.testkit.TestKafka;
import io.queen.timers.testkit.TestPostgres;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.UUID;
import java.util.concurrent.Future;
import java.util.function.Consumer;
import javax.sql.DataSource;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** The bridge in this JVM against a real PostgreSQL and a real Kafka broker. */
class BridgeEndToEndIT {

    @RegisterExtension
    static final PerClass<Stack> stack = PerClass.of(Stack::shared);

    static final String OTHER_TENANT = "6a1f0000-0000-4000-8000-00000000beef";

    /** One database per class: a test's unpublished verdicts must not reach the next test's audit topic. */
    @BeforeEach
    void emptyOutbox() throws Exception {
        try (Connection c = stack.get().owner().getConnection(); Statement st = c.createStatement()) {
            st.execute("DELETE FROM queen.timer_audit_outbox");
        }
    }

    @Test
    void commandsBecomeTimersAndAuditEventsOnEachTenantsTopic() throws Exception {
        String a = TestKafka.newTopic("cmd-a", 1);
        String b = TestKafka.newTopic("cmd-b", 1);
        String audit = TestKafka.newTopic("audit", 1);
        TestKafka.createTopic(audit + "." + OTHER_TENANT, 1);
        Consumer<ServiceSettings> s = consuming(List.of(a, b), audit, stack.get().uniqueName("g-tenants-"))
                .andThen(t -> t.topic(a, "producer.sub", "svc-a")
                        .topic(a, "tenant", "00000000-0000-0000-0000-000000000001") // two topics: each names its tenant
                        .topic(b, "tenant", OTHER_TENANT));
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        try (BridgeMain bridge = Bridges.start(stack.get(), s, registry);
                KafkaProducer<byte[], byte[]> producer = TestKafka.commandProducer()) {
            Instant at = Instant.now().plus(1, ChronoUnit.HOURS).truncatedTo(ChronoUnit.MILLIS);
            producer.send(TimerCommand.schedule("orders.reminders", "order-42").at(at).txn("remind-42").payload("{\"orderId\":42}").envelope(a));
            RecordHeaders h = new RecordHeaders();
            h.add("queen-op", bytes("schedule")).add("queen-queue", bytes("orders.reminders")).add("queen-timer-key", bytes("order-42"))
                    .add("queen-delay-ms", bytes("60000")).add("queen-txn", bytes("remind-42-b"));
            producer.send(new ProducerRecord<>(b, null, WireFormat.keyBytes("orders.reminders", "order-42"), bytes("{\"orderId\": 42}"), h));
            producer.send(TimerCommand.cancel("orders.reminders", "never").envelope(a));
            producer.flush();

            awaitRecords(audit, 2, Duration.ofSeconds(60));
            awaitRecords(audit + "." + OTHER_TENANT, 1, Duration.ofSeconds(60));
            assertThat(registry.get("queen.timers.commands").tag("verdict", "scheduled").counter().count()).isEqualTo(2);
            assertThat(registry.get("queen.timers.commands").tag("verdict", "absent").counter().count()).isEqualTo(1);
            assertThat(registry.get("queen.timers.audit.published").counter().count()).isEqualTo(3);
            assertThat(registry.get("queen.timers.bridge.batch.apply").timer().count()).isPositive();
            assertThat(registry.get("queen.timers.bridge.ingest.lag").gauge().value()).isZero();
            assertThat(bridge.health().report().ready()).as(bridge.health().report().text()).isTrue();
        }
        List<JsonNode> defaultEvents = readAll(audit);
        assertThat(defaultEvents).extracting(e -> e.get("type").asText()).containsExactly("scheduled", "absent");
        JsonNode scheduled = defaultEvents.get(0);
        assertThat(scheduled.get("tenant").asText()).isEqualTo("00000000-0000-0000-0000-000000000001");
        assertThat(scheduled.get("txn").asText()).isEqualTo("remind-42");
        assertThat(scheduled.get("eventId").asText()).isNotBlank();
        assertThat(scheduled.get("at").asText()).isNotBlank();
        assertThat(scheduled.get("source").get("topic").asText()).isEqualTo(a);
        JsonNode other = readAll(audit + "." + OTHER_TENANT).get(0);
        assertThat(other.get("tenant").asText()).isEqualTo(OTHER_TENANT);
        assertThat(other.get("type").asText()).isEqualTo("scheduled");

        try (Connection c = stack.get().owner().getConnection(); Statement st = c.createStatement();
                ResultSet rs = st.executeQuery("SELECT tenant_id, coalesce(producer_sub, '-'), message_id, convert_from(payload, 'UTF8') "
                        + "FROM queen.log_timers WHERE queue = 'orders.reminders' ORDER BY tenant_id")) {
            rs.next();
            assertThat(rs.getString(1)).isEqualTo("00000000-0000-0000-0000-000000000001");
            assertThat(rs.getString(2)).isEqualTo("svc-a");
            assertThat(rs.getString(3)).isEqualTo(scheduled.get("messageId").asText());
            assertThat(rs.getString(4)).isEqualTo("{\"orderId\":42}");
            rs.next();
            assertThat(rs.getString(1)).isEqualTo(OTHER_TENANT);
            assertThat(rs.getString(2)).isEqualTo("-");
            assertThat(rs.getString(4)).isEqualTo("{\"orderId\":42}");
            assertThat(rs.next()).isFalse();
        }
    }

    @Test
    void badInputIsRejectedWithItsReasonAndNeverStallsTheConsumer() throws Exception {
        String topic = TestKafka.newTopic("cmd-bad", 3);
        String group = stack.get().uniqueName("g-bad-");
        Consumer<ServiceSettings> s = consuming(List.of(topic), stack.get().auditTopic(), group)
                .andThen(t -> t.set(AuditSettings.RELAY_ENABLED, false) // the verdicts stay in the outbox, where this test reads them
                        .set(BridgeSettings.PAYLOAD_MAX_BYTES, 65536));
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        Random random = new Random(42);
        Map<String, String> validPayloadByKey = new HashMap<>();
        List<Future<RecordMetadata>> badSends = new ArrayList<>();
        List<RejectReason> badReasons = new ArrayList<>();
        String[] unicodeKeys = {"😀-%d", "שלום-%d", "e\u0301-%d", "\u200b-%d", "a/b/c-%d", " spaced %d ", "\uFEFF%d", "日本-%d"};
        try (BridgeMain bridge = Bridges.start(stack.get(), s, registry);
                KafkaProducer<byte[], byte[]> producer = TestKafka.commandProducer();
                KafkaProducer<byte[], byte[]> hostile = new KafkaProducer<>(TestKafka.producerProps())) {
            for (int i = 0; i < 1000; i++) {
                String key = i % 4 == 0 ? String.format(unicodeKeys[(i / 4) % unicodeKeys.length], i) : "v-" + i;
                String payload = "{\"i\":" + i + "}";
                validPayloadByKey.put(key, payload);
                producer.send(TimerCommand.schedule("bad.mix", key).delay(Duration.ofHours(1)).txn("t-" + i).payload(payload).envelope(topic));
                BadRecord bad = BadRecord.generate(i, random);
                badReasons.add(bad.reason());
                badSends.add(hostile.send(new ProducerRecord<>(topic, null, bad.key(), bad.value(), bad.headers())));
            }
            producer.flush();
            hostile.flush();
            await().atMost(Duration.ofSeconds(90)).until(() -> storedOffsetSum(stack.get().owner(), group) == 2000);
            assertThat(registry.counter("queen.timers.bridge.batch.retries").count()).as("batches retried").isZero();
        }
        DataSource ds = stack.get().owner();
        Map<String, List<JsonNode>> bySource = verdictsBySource("no-such-topic-" + UUID.randomUUID(), ds);
        assertThat(bySource).hasSize(2000);
        assertThat(bySource.values()).allSatisfy(v -> assertThat(v).hasSize(1));
        for (int i = 0; i < badSends.size(); i++) {
            RecordMetadata m = badSends.get(i).get();
            JsonNode e = bySource.get(topic + "/" + m.partition() + "@" + m.offset()).get(0);
            assertThat(e.get("type").asText()).isEqualTo("rejected");
            assertThat(e.get("reason").asText()).as("bad record %d: %s", i, e).isEqualTo(badReasons.get(i).wireName());
        }
        assertThat(longQuery(ds, "SELECT count(*) FROM queen.log_timers WHERE queue = 'bad.mix'")).isEqualTo(1000);
        try (Connection c = ds.getConnection(); Statement st = c.createStatement();
                ResultSet rs = st.executeQuery("SELECT timer_key, convert_from(payload, 'UTF8') FROM queen.log_timers WHERE queue = 'bad.mix'")) {
            Map<String, String> actual = new HashMap<>();
            while (rs.next()) {
                actual.put(rs.getString(1), rs.getString(2));
            }
            assertThat(actual).isEqualTo(validPayloadByKey);
        }
    }

    @Test
    void databaseOutagePausesTheBridgeAndItResumesWithoutLossOrDuplicates() throws Exception {
        String topic = TestKafka.newTopic("cmd-outage", 2);
        String audit = TestKafka.newTopic("audit", 1);
        String group = stack.get().uniqueName("g-outage-");
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        Instant at = Instant.now().plus(1, ChronoUnit.DAYS).truncatedTo(ChronoUnit.MILLIS);
        List<TimerModel.Cmd> commands = new ArrayList<>();
        Map<String, Integer> indexBySource = new HashMap<>();
        try (BridgeMain bridge = Bridges.start(stack.get(), consuming(List.of(topic), audit, group), registry);
                KafkaProducer<byte[], byte[]> producer = TestKafka.commandProducer()) {
            send(producer, topic, commands, indexBySource, 300, at);
            await().atMost(Duration.ofSeconds(60)).until(() -> storedOffsetSum(stack.get().owner(), group) == 300);

            allowConnections(false);
            try {
                send(producer, topic, commands, indexBySource, 300, at);
                // the outage lasts until the bridge has met it (a batch not committed, read again), however long the
                // machine takes to get there: a fixed sleep let a slow bridge read the records only after the outage
                await().atMost(Duration.ofSeconds(60)).pollInterval(Duration.ofMillis(50))
                        .until(() -> registry.counter("queen.timers.bridge.batch.retries").count() > 0);
            } finally {
                allowConnections(true);
            }
            // the test's own pooled connections were ended with the outage: the first reads after it may meet one
            await().atMost(Duration.ofSeconds(60)).ignoreExceptions().until(() -> storedOffsetSum(stack.get().owner(), group) == 600);
            await().atMost(Duration.ofSeconds(30)).until(() -> longQuery(stack.get().owner(), "SELECT count(*) FROM queen.timer_audit_outbox") == 0);
        }
        assertExactlyOnce(TimerModel.of(commands), indexBySource, verdictsBySource(audit, stack.get().owner()), stack.get().owner(), "outage");
    }

    private static void send(KafkaProducer<byte[], byte[]> producer, String topic, List<TimerModel.Cmd> commands,
                             Map<String, Integer> indexBySource, int n, Instant at) throws Exception {
        List<Future<RecordMetadata>> sends = new ArrayList<>();
        int base = commands.size();
        for (int i = 0; i < n; i++) {
            String key = "k" + ((base + i) % 50);
            TimerModel.Cmd c = (base + i) % 3 == 2
                    ? new TimerModel.Cmd(TimerModel.Kind.CANCEL, "outage", key, null, null, null)
                    : new TimerModel.Cmd(TimerModel.Kind.SCHEDULE, "outage", key, at.plusMillis(base + i), "t" + (base + i), "\"p" + (base + i) + "\"");
            commands.add(c);
            TimerCommand command = c.kind() == TimerModel.Kind.CANCEL ? TimerCommand.cancel(c.queue(), key)
                    : TimerCommand.schedule(c.queue(), key).at(c.deliverAt()).txn(c.txn()).payload(c.payload());
            sends.add(producer.send(command.envelope(topic)));
        }
        producer.flush();
        for (int i = 0; i < n; i++) {
            RecordMetadata m = sends.get(i).get();
            indexBySource.put(topic + "/" + m.partition() + "@" + m.offset(), base + i);
        }
    }

    /** The table equals the model's, and every source record has exactly one verdict, the model's. */
    static void assertExactlyOnce(TimerModel model, Map<String, Integer> indexBySource, Map<String, List<JsonNode>> allVerdicts,
                                  DataSource ds, String queue) throws Exception {
        // Only this workload's command topics: the class's database holds the verdicts of its other tests too, some
        // still in the outbox when a killed bridge's relay lease had not run out before that test ended.
        java.util.Set<String> topics = new java.util.HashSet<>();
        indexBySource.keySet().forEach(source -> topics.add(source.substring(0, source.lastIndexOf('/'))));
        Map<String, List<JsonNode>> verdicts = new HashMap<>();
        allVerdicts.forEach((source, events) -> {
            if (topics.contains(source.substring(0, source.lastIndexOf('/')))) {
                verdicts.put(source, events);
            }
        });
        assertThat(verdicts.keySet()).isEqualTo(indexBySource.keySet());
        indexBySource.forEach((source, i) -> {
            assertThat(verdicts.get(source)).as("verdicts of %s", source).hasSize(1);
            assertThat(verdicts.get(source).get(0).get("type").asText()).as("verdict of command %d (%s)", i, source)
                    .isEqualTo(model.verdict(i));
        });
        Map<String, TimerModel.Row> actual = new HashMap<>();
        try (Connection c = ds.getConnection(); Statement st = c.createStatement();
                ResultSet rs = st.executeQuery("SELECT queue, timer_key, deliver_at, txn, convert_from(payload, 'UTF8') FROM queen.log_timers "
                        + "WHERE queue = '" + queue + "'")) {
            while (rs.next()) {
                actual.put(rs.getString(1) + "/" + rs.getString(2),
                        new TimerModel.Row(rs.getTimestamp(3).toInstant(), rs.getString(4), rs.getString(5)));
            }
        }
        assertThat(actual).isEqualTo(model.table());
    }

    private static void allowConnections(boolean allow) throws Exception {
        var s = TestPostgres.server();
        try (Connection c = DriverManager.getConnection(s.jdbcUrl(s.adminDatabase()), s.user(), s.password());
                Statement st = c.createStatement()) {
            String database = URI.create(stack.get().jdbcUrl().substring("jdbc:".length())).getPath().substring(1);
            st.execute("ALTER DATABASE " + database + " ALLOW_CONNECTIONS " + allow);
            if (!allow) {
                st.execute("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = '" + database + "'");
            }
        }
    }

    /** A bridge on {@code topics} as {@code group}, auditing to {@code audit}. */
    private static Consumer<ServiceSettings> consuming(List<String> topics, String audit, String group) {
        return s -> s.set(RouteSettings.COMMAND_TOPICS, topics).set(CommonSettings.AUDIT_TOPIC, audit).set(BridgeSettings.GROUP_ID, group);
    }

    static byte[] bytes(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

}
