package io.queen.timers.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.queen.timers.core.ops.Dependencies;
import io.queen.timers.bridge.BridgeMain;
import io.queen.timers.bridge.BridgeSettings;
import io.queen.timers.client.audit.AuditEvent;
import io.queen.timers.client.audit.EventType;
import io.queen.timers.client.command.TimerCommand;
import io.queen.timers.client.command.TraceParent;
import io.queen.timers.sql.Migrations;
import io.queen.timers.sweeper.LogContents;
import io.queen.timers.sweeper.SweeperMain;
import io.queen.timers.sweeper.Sweepers;
import io.queen.timers.testkit.AuditTopicReader;
import io.queen.timers.testkit.PostgresDatabase;
import io.queen.timers.testkit.TestKafka;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * docs/tracing.md#trace-context: a command's W3C traceparent (either form) reaches the fired frame's trace id
 * (flag 1) and every audit event of its timer, through the real bridge, sweeper, relay and broker.
 */
class TraceAcrossTheDelayIT {

    @RegisterExtension
    static final PostgresDatabase db = PostgresDatabase.initializedWith(Migrations::migrate);

    static final TraceParent HEADERS_TRACE = TraceParent.parse("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01").orElseThrow();
    static final TraceParent ENVELOPE_TRACE = TraceParent.parse("00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-00").orElseThrow();

    @Test
    void theTraceOfTheCommandReachesTheFrameAndEveryEventOfItsTimer() {
        String topic = TestKafka.newTopic("trace-cmd", 1);
        String audit = TestKafka.newTopic("trace-audit", 1);
        try (BridgeMain bridge = BridgeMain.start(BridgeSettings.from(BridgeSettings.definition().parse(bridgeSettings(topic, audit))), Dependencies.defaults(new SimpleMeterRegistry()));
                SweeperMain sweeper = Sweepers.start(db, Map.of());
                KafkaProducer<byte[], byte[]> producer = TestKafka.commandProducer()) {
            producer.send(TimerCommand.schedule("trace.q", "by-headers").delay(Duration.ZERO).txn("t-headers").payload("{\"h\":1}")
                    .trace(HEADERS_TRACE).headers(topic));
            // rescheduled with a second trace before it fires: the timer's events from then on carry the new one
            producer.send(TimerCommand.schedule("trace.q", "by-envelope").delay(Duration.ofHours(1)).txn("t-envelope").payload("1")
                    .traceparent("00-11111111111111111111111111111111-2222222222222222-01").envelope(topic));
            producer.send(TimerCommand.reschedule("trace.q", "by-envelope").delay(Duration.ZERO).txn("t-envelope").payload("2")
                    .trace(ENVELOPE_TRACE).envelope(topic));
            producer.send(TimerCommand.schedule("trace.q", "untraced").delay(Duration.ZERO).txn("t-untraced").payload("3").envelope(topic));
            producer.send(TimerCommand.schedule("trace.q", "bad-trace").delay(Duration.ZERO).txn("t-bad").payload("4")
                    .traceparent("00-00000000000000000000000000000000-00f067aa0ba902b7-01").envelope(topic)); // invalid: ignored
            producer.flush();

            List<AuditEvent> events = AuditTopicReader.awaitEvents(audit, 9, Duration.ofSeconds(120));
            assertTrace(events, "by-headers", HEADERS_TRACE, EventType.SCHEDULED, EventType.FIRED);
            assertTrace(events, "by-envelope", ENVELOPE_TRACE, EventType.RESCHEDULED, EventType.FIRED);
            assertThat(events).filteredOn(e -> key(e).equals("by-envelope") && e.type() == EventType.SCHEDULED).singleElement()
                    .satisfies(e -> assertThat(e.meta().traceId()).isEqualTo("11111111111111111111111111111111"));
            for (String untraced : List.of("untraced", "bad-trace")) {
                assertThat(events).filteredOn(e -> key(e).equals(untraced)).extracting(AuditEvent::type)
                        .containsExactly(EventType.SCHEDULED, EventType.FIRED);
                assertThat(events).filteredOn(e -> key(e).equals(untraced))
                        .allSatisfy(e -> assertThat(e.meta().traceId()).isNull()).allSatisfy(e -> assertThat(e.meta().spanId()).isNull());
            }
        }
        // The frames, decoded: flag 1 carries the trace id of the command that scheduled what was delivered.
        Map<String, Optional<UUID>> traceByTxn = new HashMap<>();
        LogContents.read(db.dataSource()).forEach(m -> traceByTxn.put(m.txn(), Optional.ofNullable(m.frame().traceId())));
        assertThat(traceByTxn).containsEntry("t-headers", Optional.of(uuid(HEADERS_TRACE.traceId())))
                .containsEntry("t-envelope", Optional.of(uuid(ENVELOPE_TRACE.traceId())))
                .containsEntry("t-untraced", Optional.empty())
                .containsEntry("t-bad", Optional.empty());
    }

    private static void assertTrace(List<AuditEvent> events, String key, TraceParent trace, EventType... types) {
        List<AuditEvent> mine = events.stream().filter(e -> key(e).equals(key)).filter(e -> List.of(types).contains(e.type())).toList();
        assertThat(mine).extracting(AuditEvent::type).containsExactly(types);
        assertThat(mine).allSatisfy(e -> {
            assertThat(e.meta().traceId()).as("%s %s traceId", key, e.type()).isEqualTo(trace.traceId());
            assertThat(e.meta().spanId()).as("%s %s spanId", key, e.type()).isEqualTo(trace.spanId());
        });
    }

    private static String key(AuditEvent e) {
        if (e instanceof AuditEvent.TimerVerdict v) {
            return v.timerKey();
        }
        if (e instanceof AuditEvent.Fired f) {
            return f.timerKey();
        }
        if (e instanceof AuditEvent.Retrying r) {
            return r.timerKey();
        }
        return e instanceof AuditEvent.DeadLettered d ? d.timerKey() : "";
    }

    private static UUID uuid(String hex32) {
        return new UUID(Long.parseUnsignedLong(hex32.substring(0, 16), 16), Long.parseUnsignedLong(hex32.substring(16), 16));
    }

    private static Map<String, String> bridgeSettings(String topic, String audit) {
        Map<String, String> s = new HashMap<>();
        s.put("jdbc.url", db.jdbcUrl());
        s.put("jdbc.user", db.user());
        s.put("db.role.check", "false"); // the testkit connects as the server's superuser: the single-role opt-out (docs/schema-and-roles.md#database-roles)
        s.put("jdbc.password", db.password());
        s.put("jdbc.pool.size", "4");
        s.put("kafka.bootstrap.servers", TestKafka.bootstrapServers());
        s.put("command.topics", topic);
        s.put("audit.topic", audit);   // this bridge's relay publishes every event of the database, fired ones too
        s.put("audit.relay.poll.interval", "50ms");
        s.put("bridge.group.id", "trace-" + UUID.randomUUID());
        s.put("http.port", "0");
        s.put("bridge.start.position", "earliest"); // records sent before the group's first join are applied
        s.put("db.retry.backoff.max", "1s");
        return s;
    }
}
