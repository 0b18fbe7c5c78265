package io.queen.timers.relay;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.queen.timers.core.config.CommonSettings;
import io.queen.timers.core.config.Config;
import io.queen.timers.core.config.ConfigDef;
import io.queen.timers.sql.Migrations;
import io.queen.timers.testkit.PostgresDatabase;
import io.queen.timers.testkit.TestKafka;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.Node;
import org.apache.kafka.common.TopicPartition;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** The relay against a real PostgreSQL and a real Kafka broker. */
class AuditRelayIT {

    @RegisterExtension
    static final PostgresDatabase db = PostgresDatabase.initializedWith(Migrations::migrate);

    static final String DEFAULT = CommonSettings.DEFAULT_TENANT;
    static final String OTHER = "6a1f0000-0000-4000-8000-00000000beef";
    static final String CONFIGURED = "6a1f0000-0000-4000-8000-0000000c0fee";
    static final ObjectMapper JSON = new ObjectMapper();

    @Test
    void theRelaysProducerGetsKafkaProducerOverridesAndNoOtherClientsOverrides() {
        Map<String, String> s = settings(TestKafka.newTopic("audit", 1));
        s.put("kafka.sasl.jaas.config", "shared");
        s.put("kafka.producer.sasl.jaas.config", "producer-only");
        s.put("kafka.consumer.client.id", "consumer-only");
        s.put("kafka.admin.client.id", "admin-only");
        try (AuditRelay relay = new AuditRelay(db.dataSource(), AuditSettings.from(config(s)), CommonSettings.from(config(s)), new SimpleMeterRegistry())) {
            assertThat(relay.producerProps()).containsEntry("sasl.jaas.config", "producer-only")
                    .containsEntry("client.id", "queen-timers-audit-relay")
                    .doesNotContainKeys("producer.sasl.jaas.config", "consumer.client.id", "admin.client.id");
        }
    }

    @Test
    void publishesInIdOrderToEachTenantsTopicAndDeletesAfterAck() throws Exception {
        String audit = TestKafka.newTopic("audit", 2);
        String configured = TestKafka.newTopic("audit-configured", 1);
        TestKafka.createTopic(audit + "." + OTHER, 1);
        Map<String, String> s = settings(audit);
        s.put("tenant." + CONFIGURED + ".audit.topic", configured);
        for (int i = 0; i < 50; i++) {
            insert(DEFAULT, "q/k" + (i % 5), "scheduled", "{\"n\":" + i + "}");
        }
        insert(OTHER, "q/k", "cancelled", "{\"n\":0}");
        insert(CONFIGURED, "q/k", "absent", "{\"n\":0}");
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        try (AuditRelay relay = new AuditRelay(db.dataSource(), AuditSettings.from(config(s)), CommonSettings.from(config(s)), registry).start()) {
            await().atMost(Duration.ofSeconds(30)).until(() -> count() == 0);
            assertThat(registry.counter("queen.timers.audit.published").count()).isEqualTo(52);
        }
        List<ConsumerRecord<String, JsonNode>> events = readAll(audit);
        assertThat(events).hasSize(50);
        Map<String, List<Integer>> perKey = new HashMap<>();
        for (ConsumerRecord<String, JsonNode> r : events) {
            assertThat(r.value().get("tenant").asText()).isEqualTo(DEFAULT);
            assertThat(r.value().get("type").asText()).isEqualTo("scheduled");
            assertThat(r.value().get("eventId").asText()).isNotBlank();
            assertThat(r.value().get("at").asText()).isNotBlank();
            perKey.computeIfAbsent(r.key(), k -> new ArrayList<>()).add(r.value().get("n").asInt());
        }
        perKey.values().forEach(ns -> assertThat(ns).isSorted()); // per-key order kept
        assertThat(readAll(audit + "." + OTHER)).singleElement().satisfies(r -> assertThat(r.value().get("tenant").asText()).isEqualTo(OTHER));
        assertThat(readAll(configured)).singleElement().satisfies(r -> assertThat(r.value().get("type").asText()).isEqualTo("absent"));
    }

    /**
     * Issue 25: an idle relay is woken by the commit that writes the outbox (its insert trigger's NOTIFY), not by its
     * next poll: with a poll interval of a minute, the row is published within seconds.
     */
    @Test
    void anIdleRelayIsWokenByTheCommitThatWritesTheOutbox() throws Exception {
        String audit = TestKafka.newTopic("audit", 1);
        Map<String, String> s = settings(audit);
        s.put("audit.relay.poll.interval", "60s");
        AuditRelay relay = new AuditRelay(db.dataSource(), AuditSettings.from(config(s)), CommonSettings.from(config(s)), new SimpleMeterRegistry()).start();
        try {
            await().atMost(Duration.ofSeconds(10)).until(() -> relay.isActive() && count() == 0);
            Thread.sleep(500); // its round found the outbox empty: it waits, for up to a minute
            insert(DEFAULT, "q/woken", "scheduled", "{}");
            await().atMost(Duration.ofSeconds(20)).until(() -> count() == 0);
            Thread.sleep(500); // waiting again, for up to a minute
        } finally {
            relay.close();
        }
        // close() is seen within the wait (its join gives up after 30 s, and a relay still waiting would hold the lease)
        assertThat(relay.isActive()).isFalse();
        assertThat(readAll(audit)).extracting(ConsumerRecord::key).containsExactly("q/woken");
    }

    @Test
    void onlyOneRelayPerDatabaseIsActiveAndAStandbyTakesOver() throws Exception {
        String audit = TestKafka.newTopic("audit", 1);
        Config config = config(settings(audit));
        try (AuditRelay a = new AuditRelay(db.dataSource(), AuditSettings.from(config), CommonSettings.from(config), new SimpleMeterRegistry()).start();
                AuditRelay b = new AuditRelay(db.dataSource(), AuditSettings.from(config), CommonSettings.from(config), new SimpleMeterRegistry()).start()) {
            await().atMost(Duration.ofSeconds(10)).until(() -> a.isActive() || b.isActive());
            Thread.sleep(1000); // the other has tried for the lease at least once by now
            assertThat(a.isActive() && b.isActive()).isFalse();
            AuditRelay active = a.isActive() ? a : b;
            AuditRelay standby = active == a ? b : a;
            active.close();
            insert(DEFAULT, "q/after", "scheduled", "{}");
            await().atMost(Duration.ofSeconds(10)).until(standby::isActive);
            await().atMost(Duration.ofSeconds(10)).until(() -> count() == 0);
        }
        assertThat(readAll(audit)).extracting(ConsumerRecord::key).containsExactly("q/after");
    }

    /**
     * The relay publishes under a lease that only the relay's roles may take (V151): a login of another role (the
     * operator's) is refused the lease and its row, and the advisory lock the relay took before, which it can still
     * hold, stops nobody: the relay publishes while that login holds all it can.
     */
    @Test
    void aLoginOfAnotherRoleCanNeitherTakeTheLeaseNorStopPublication() throws Exception {
        String audit = TestKafka.newTopic("audit", 1);
        var operator = db.login("ar_operator", "queen_operator");
        try (Connection op = db.connect(operator)) {
            try (Statement st = op.createStatement(); ResultSet rs = st.executeQuery("SELECT pg_try_advisory_lock(" + OLD_RELAY_LOCK_KEY + ")")) {
                rs.next();
                assertThat(rs.getBoolean(1)).as("the lock of the release before: any login may hold it").isTrue();
            }
            op.setAutoCommit(false);
            for (String attempt : List.of("SELECT * FROM queen.timer_audit_lease_v1(NULL)",
                    "SELECT * FROM queen.timer_audit_relay_lease FOR UPDATE", "SELECT queen.timer_audit_lease_release_v1(NULL)")) {
                try (Statement st = op.createStatement()) {
                    st.execute(attempt);
                    throw new AssertionError(attempt + " was not refused");
                } catch (java.sql.SQLException e) {
                    assertThat(e.getSQLState()).as(attempt).isEqualTo("42501");
                    op.rollback();
                }
            }
            insert(DEFAULT, "q/held-by-nobody", "scheduled", "{}");
            try (AuditRelay relay = new AuditRelay(db.dataSource(), AuditSettings.from(config(settings(audit))),
                    CommonSettings.from(config(settings(audit))), new SimpleMeterRegistry()).start()) {
                await().atMost(Duration.ofSeconds(30)).until(() -> count() == 0);
                assertThat(relay.isActive()).isTrue();
            }
        }
        assertThat(readAll(audit)).extracting(ConsumerRecord::key).containsExactly("q/held-by-nobody");
    }

    /**
     * A relay whose lease another holder took (here the owner, as a lease that ran out during a pause of the relay would
     * be taken by another relay) publishes nothing more: its read is refused without the live lease, it stands by, and
     * it takes the lease again only once the other's ran out; then it publishes what waited.
     */
    @Test
    void aRelayWhoseLeaseWasTakenPublishesNothingUntilItHoldsItAgain() throws Exception {
        String audit = TestKafka.newTopic("audit", 1);
        try (AuditRelay relay = new AuditRelay(db.dataSource(), AuditSettings.from(config(settings(audit))),
                CommonSettings.from(config(settings(audit))), new SimpleMeterRegistry()).start()) {
            await().atMost(Duration.ofSeconds(10)).until(relay::isActive);
            exec("UPDATE queen.timer_audit_relay_lease SET token = gen_random_uuid(), holder = 'another relay',"
                    + " expires_at = clock_timestamp() + interval '4 seconds'");
            insert(DEFAULT, "q/while-taken", "scheduled", "{}");
            await().atMost(Duration.ofSeconds(10)).until(() -> !relay.isActive());
            assertThat(count()).as("not published while another holds the lease").isOne();
            assertThat(readAll(audit)).isEmpty();
            await().atMost(Duration.ofSeconds(30)).until(() -> count() == 0);
        }
        assertThat(readAll(audit)).extracting(ConsumerRecord::key).containsExactly("q/while-taken");
    }

    /** The advisory lock key the relay of the release before published under ("queenaud"). */
    static final long OLD_RELAY_LOCK_KEY = 0x7175_6565_6e61_7564L;

    @Test
    void aStandbyHoldsNoConnectionWhileItWaits() throws Exception {
        String audit = TestKafka.newTopic("audit", 1);
        Map<String, String> s = settings(audit);
        s.put("audit.relay.standby.interval", "30s");
        com.zaxxer.hikari.HikariDataSource standbyPool = (com.zaxxer.hikari.HikariDataSource) db.newDataSource(2);
        try (AuditRelay active = new AuditRelay(db.dataSource(), AuditSettings.from(config(settings(audit))), CommonSettings.from(config(settings(audit))), new SimpleMeterRegistry()).start()) {
            await().atMost(Duration.ofSeconds(10)).until(active::isActive);
            try (AuditRelay standby = new AuditRelay(standbyPool, AuditSettings.from(config(s)), CommonSettings.from(config(s)), new SimpleMeterRegistry()).start()) {
                var pool = standbyPool.getHikariPoolMXBean();
                // it has tried for the lease (a connection was opened for it) and gave the connection back to wait
                await().atMost(Duration.ofSeconds(10)).until(() -> pool.getTotalConnections() > 0 && pool.getActiveConnections() == 0);
                assertThat(standby.isActive()).isFalse();
            }
        }
    }

    @Test
    void crashBetweenPublishAndDeleteRepublishesWithTheSameEventId() throws Exception {
        String audit = TestKafka.newTopic("audit", 1);
        exec("CREATE TABLE public.fail_delete (on_ boolean)");
        exec("INSERT INTO public.fail_delete VALUES (true)");
        exec("CREATE FUNCTION public.fail_delete_f() RETURNS trigger LANGUAGE plpgsql AS "
                + "$$ BEGIN IF (SELECT on_ FROM public.fail_delete) THEN RAISE EXCEPTION 'simulated crash before delete'; END IF; RETURN OLD; END $$");
        exec("CREATE TRIGGER fail_delete_t BEFORE DELETE ON queen.timer_audit_outbox FOR EACH ROW EXECUTE FUNCTION public.fail_delete_f()");
        try {
            for (int i = 0; i < 10; i++) {
                insert(DEFAULT, "q/k", "scheduled", "{\"n\":" + i + "}");
            }
            try (AuditRelay relay = new AuditRelay(db.dataSource(), AuditSettings.from(config(settings(audit))), CommonSettings.from(config(settings(audit))), new SimpleMeterRegistry()).start()) {
                await().atMost(Duration.ofSeconds(30)).until(() -> readAll(audit).size() >= 20); // published, not deleted, published again
                exec("UPDATE public.fail_delete SET on_ = false");
                await().atMost(Duration.ofSeconds(30)).until(() -> count() == 0);
            }
        } finally {
            exec("DROP TRIGGER IF EXISTS fail_delete_t ON queen.timer_audit_outbox");
        }
        List<ConsumerRecord<String, JsonNode>> events = readAll(audit);
        Set<String> ids = events.stream().map(r -> r.value().get("eventId").asText()).collect(Collectors.toSet());
        assertThat(events.size()).isGreaterThanOrEqualTo(20);
        assertThat(ids).hasSize(10); // at-least-once, and every copy carries the row's one eventId
        Map<String, JsonNode> first = new HashMap<>();
        for (ConsumerRecord<String, JsonNode> r : events) {
            JsonNode prior = first.putIfAbsent(r.value().get("eventId").asText(), r.value());
            if (prior != null) {
                assertThat(r.value()).isEqualTo(prior);
            }
        }
    }

    /**
     * audit.relay.compression (zstd by default): the broker stores the relay's batches compressed, so the
     * audit topic takes a fraction of the bytes of the events it holds (the broker's work per event follows
     * its bytes). Uncompressed, the log is larger than the events themselves.
     */
    @Test
    void theRelaysBatchesAreStoredCompressed() throws Exception {
        String audit = TestKafka.newTopic("audit", 1);
        for (int i = 0; i < 200; i++) {
            insert(DEFAULT, "q/k" + i, "scheduled", "{\"note\":\"" + "the same words as every other event ".repeat(8) + "\",\"n\":" + i + "}");
        }
        try (AuditRelay relay = new AuditRelay(db.dataSource(), AuditSettings.from(config(settings(audit))), CommonSettings.from(config(settings(audit))), new SimpleMeterRegistry()).start()) {
            await().atMost(Duration.ofSeconds(30)).until(() -> count() == 0);
        }
        long valueBytes = readAll(audit).stream().mapToLong(ConsumerRecord::serializedValueSize).sum();
        long stored;
        try (Admin admin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, TestKafka.bootstrapServers()))) {
            List<Integer> brokers = admin.describeCluster().nodes().get().stream().map(Node::id).toList();
            stored = admin.describeLogDirs(brokers).allDescriptions().get().values().stream()
                    .flatMap(dirs -> dirs.values().stream())
                    .flatMap(dir -> dir.replicaInfos().entrySet().stream())
                    .filter(e -> e.getKey().topic().equals(audit))
                    .mapToLong(e -> e.getValue().size())
                    .sum();
        }
        assertThat(valueBytes).isGreaterThan(200L * 300);
        assertThat(stored).isPositive().isLessThan(valueBytes / 3);
    }

    @Test
    void aFiredSegmentRowBecomesOneEventPerTimerInFrameOrderWithEveryFieldOfTheViewsRendering() throws Exception {
        String audit = TestKafka.newTopic("audit", 1);
        insert(DEFAULT, "q.a/before", "scheduled", "{}");
        // Three timers of one segment at offsets 40..42: a plain one, one whose key and txn need JSON
        // escaping and a whole-second deliverAt, and one delivered 0.5 ms BEFORE the segment was written
        // (lateMs rounds down to -1, as floor() does in SQL).
        exec("""
                INSERT INTO queen.timer_audit_outbox (tenant_id, type, event, fired, fired_subs, fired_traces, fired_recur)
                VALUES ('%s', 'fired',
                        jsonb_build_object('queue', 'q.a', 'partition', 'Default', 'offset', 40,
                                           'segmentCreatedAt', '2026-12-02T10:00:00.123456+00'::timestamptz),
                        ARRAY[ROW(gen_random_uuid(), 'k1', 'txn-1', gen_random_uuid(), '2026-12-02T10:00:00.1+00', 0),
                              ROW(gen_random_uuid(), 'k"2\\ü', 'txn "2"', gen_random_uuid(), '2026-12-02T09:59:58+00', 3),
                              ROW(gen_random_uuid(), 'k3', 'txn-3', gen_random_uuid(), '2026-12-02T10:00:00.123956+00', 1)
                        ]::queen.timer_fired_v1[],
                        ARRAY['billing-svc', NULL, 'svc "3"'],
                        ARRAY[decode('4bf92f3577b34da6a3ce929d0e0e473600f067aa0ba902b7', 'hex'), NULL,
                              decode('4bf92f3577b34da6a3ce929d0e0e473600f067aa0ba902b701', 'hex') || convert_to('rojo=00f067aa0ba902b7', 'UTF8')],
                        ARRAY[NULL, NULL, '{"series": {"rule": "every PT1M"}, "occurrence": 3}'::jsonb])""".formatted(DEFAULT));
        insert(DEFAULT, "q.a/after", "cancelled", "{\"queue\": \"q.a\", \"traceId\": \"4bf92f3577b34da6a3ce929d0e0e4736\","
                + " \"spanId\": \"00f067aa0ba902b7\", \"traceFlags\": \"00\", \"traceState\": \"congo=t61rcWkgMzE\"}");
        List<String> keysInView = new ArrayList<>();
        Map<String, JsonNode> viewByEventId = new HashMap<>();
        try (Connection c = db.dataSource().getConnection(); Statement st = c.createStatement();
                ResultSet rs = st.executeQuery("SELECT kafka_key, event_id, (jsonb_build_object('eventId', event_id, 'type', type,"
                        + " 'at', created_at, 'tenant', tenant_id) || event)::text FROM queen.timer_audit_events ORDER BY id, seq")) {
            while (rs.next()) {
                keysInView.add(rs.getString(1));
                viewByEventId.put(rs.getString(2), JSON.readTree(rs.getString(3)));
            }
        }
        assertThat(keysInView).containsExactly("q.a/before", "q.a/k1", "q.a/k\"2\\ü", "q.a/k3", "q.a/after");

        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        Map<String, String> s = settings(audit);
        s.put("audit.relay.batch.size", "2");   // rounds of whole rows: the 3-event segment row is never split
        try (AuditRelay relay = new AuditRelay(db.dataSource(), AuditSettings.from(config(s)), CommonSettings.from(config(s)), registry).start()) {
            await().atMost(Duration.ofSeconds(30)).until(() -> count() == 0);
            assertThat(registry.counter("queen.timers.audit.published").count()).isEqualTo(5);
        }
        List<ConsumerRecord<String, JsonNode>> events = readAll(audit);
        assertThat(events).extracting(ConsumerRecord::key).containsExactlyElementsOf(keysInView);
        for (ConsumerRecord<String, JsonNode> r : events) {
            String eventId = r.value().get("eventId").asText();
            assertThat(new String(r.headers().lastHeader("queen-event-id").value())).isEqualTo(eventId);
            // the same event as the view renders it: every field, each value alike (timestamps as the same instant,
            // also printed as PostgreSQL prints them in UTC); only the order of the fields may differ
            assertSameEvent(r.value(), viewByEventId.get(eventId));
        }
        List<JsonNode> fired = events.stream().map(ConsumerRecord::value).filter(v -> v.get("type").asText().equals("fired")).toList();
        assertThat(fired).extracting(v -> v.get("offset").asLong()).containsExactly(40L, 41L, 42L);
        assertThat(fired.get(0).get("traceId").asText()).isEqualTo("4bf92f3577b34da6a3ce929d0e0e4736");   // V090, as the view renders it
        assertThat(fired.get(0).get("spanId").asText()).isEqualTo("00f067aa0ba902b7");
        assertThat(fired.get(1).has("traceId")).isFalse();
        assertThat(fired).extracting(v -> v.get("lateMs").asLong()).containsExactly(23L, 2123L, -1L);
        assertThat(fired.get(1).get("deliverAt").asText()).contains(":58").doesNotContain(".");   // whole second: no fraction, as PostgreSQL prints it
        assertThat(fired).extracting(v -> v.get("eventId").asText()).doesNotHaveDuplicates();
        assertThat(fired).extracting(v -> v.path("producerSub").asText("(none)")).containsExactly("billing-svc", "(none)", "svc \"3\"");
        assertThat(fired.get(2).get("occurrence").asInt()).isEqualTo(3);   // a recurring timer's fields, as the view adds them
        assertThat(fired.get(2).get("traceState").asText()).isEqualTo("rojo=00f067aa0ba902b7");
        // the W3C headers: of a fired timer from its stored context, of a command's event from its body's trace fields
        assertThat(header(events.get(1), "traceparent")).isEqualTo("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01");
        assertThat(header(events.get(2), "traceparent")).isNull();
        assertThat(header(events.get(3), "traceparent")).isEqualTo("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01");
        assertThat(header(events.get(3), "tracestate")).isEqualTo("rojo=00f067aa0ba902b7");
        assertThat(header(events.get(4), "traceparent")).isEqualTo("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-00");
        assertThat(header(events.get(4), "tracestate")).isEqualTo("congo=t61rcWkgMzE");
    }

    // ---- helpers ----------------------------------------------------------------------------------

    /** The relay's value and the view's rendering of one event: the same fields with the same values. */
    static void assertSameEvent(JsonNode published, JsonNode view) {
        assertThat(fieldNames(published)).as("the fields of %s", view).isEqualTo(fieldNames(view));
        view.fields().forEachRemaining(f -> {
            JsonNode mine = published.get(f.getKey());
            if (f.getValue().isTextual() && looksLikeTimestamp(f.getValue().asText())) {
                assertThat(java.time.OffsetDateTime.parse(mine.asText()).toInstant()).as(f.getKey())
                        .isEqualTo(java.time.OffsetDateTime.parse(f.getValue().asText()).toInstant());
                assertThat(mine.asText()).as("%s printed as PostgreSQL prints it in UTC", f.getKey()).endsWith("+00:00");
            } else {
                assertThat(mine).as(f.getKey()).isEqualTo(f.getValue());
            }
        });
    }

    private static String header(ConsumerRecord<String, JsonNode> r, String name) {
        var h = r.headers().lastHeader(name);
        return h == null ? null : new String(h.value(), java.nio.charset.StandardCharsets.US_ASCII);
    }

    private static java.util.Set<String> fieldNames(JsonNode n) {
        java.util.Set<String> names = new java.util.TreeSet<>();
        n.fieldNames().forEachRemaining(names::add);
        return names;
    }

    private static boolean looksLikeTimestamp(String s) {
        return s.matches("\\d{4}-\\d{2}-\\d{2}T\\d{2}:\\d{2}:\\d{2}.*");
    }

    static Map<String, String> settings(String auditTopic) {
        Map<String, String> s = new HashMap<>();
        s.put("jdbc.url", db.jdbcUrl());
        s.put("kafka.bootstrap.servers", TestKafka.bootstrapServers());
        s.put("audit.topic", auditTopic);
        s.put("audit.relay.poll.interval", "50ms");
        s.put("audit.relay.standby.interval", "200ms");
        s.put("db.retry.backoff.max", "500ms");
        return s;
    }

    static Config config(Map<String, String> s) {
        return new ConfigDef().include(CommonSettings.definition()).include(AuditSettings.definition()).parse(s);
    }

    static void insert(String tenant, String key, String type, String event) throws Exception {
        try (Connection c = db.dataSource().getConnection();
                var st = c.prepareStatement("INSERT INTO queen.timer_audit_outbox (tenant_id, kafka_key, type, event) VALUES (?::uuid, ?, ?, ?::jsonb)")) {
            st.setString(1, tenant);
            st.setString(2, key);
            st.setString(3, type);
            st.setString(4, event);
            st.executeUpdate();
        }
    }

    static long count() throws Exception {
        try (Connection c = db.dataSource().getConnection(); Statement st = c.createStatement();
                ResultSet rs = st.executeQuery("SELECT count(*) FROM queen.timer_audit_outbox")) {
            rs.next();
            return rs.getLong(1);
        }
    }

    static void exec(String sql) throws Exception {
        try (Connection c = db.dataSource().getConnection(); Statement st = c.createStatement()) {
            st.execute(sql);
        }
    }

    static List<ConsumerRecord<String, JsonNode>> readAll(String topic) throws Exception {
        Map<String, Object> p = TestKafka.consumerProps("unused");
        p.remove(ConsumerConfig.GROUP_ID_CONFIG);
        List<ConsumerRecord<String, JsonNode>> out = new ArrayList<>();
        try (KafkaConsumer<byte[], byte[]> c = new KafkaConsumer<>(p)) {
            List<TopicPartition> tps = c.partitionsFor(topic, Duration.ofSeconds(10)).stream()
                    .map(i -> new TopicPartition(topic, i.partition())).toList();
            c.assign(tps);
            c.seekToBeginning(tps);
            Map<TopicPartition, Long> end = c.endOffsets(tps);
            while (tps.stream().anyMatch(tp -> c.position(tp) < end.get(tp))) {
                for (ConsumerRecord<byte[], byte[]> r : c.poll(Duration.ofMillis(200))) {
                    out.add(new ConsumerRecord<>(r.topic(), r.partition(), r.offset(), r.timestamp(), r.timestampType(),
                            r.serializedKeySize(), r.serializedValueSize(), r.key() == null ? null : new String(r.key()),
                            JSON.readTree(r.value()), r.headers(), r.leaderEpoch()));
                }
            }
        }
        return out;
    }
}
