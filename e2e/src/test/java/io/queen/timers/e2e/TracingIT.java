package io.queen.timers.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.opentelemetry.api.common.AttributeKey;
import io.opentelemetry.api.trace.Span;
import io.opentelemetry.api.trace.SpanContext;
import io.opentelemetry.api.trace.SpanKind;
import io.opentelemetry.api.trace.TraceFlags;
import io.opentelemetry.api.trace.TraceState;
import io.opentelemetry.api.trace.Tracer;
import io.opentelemetry.api.trace.propagation.W3CTraceContextPropagator;
import io.opentelemetry.context.Context;
import io.opentelemetry.context.propagation.TextMapGetter;
import io.opentelemetry.context.propagation.TextMapSetter;
import io.opentelemetry.sdk.OpenTelemetrySdk;
import io.opentelemetry.sdk.testing.exporter.InMemorySpanExporter;
import io.opentelemetry.sdk.trace.SdkTracerProvider;
import io.opentelemetry.sdk.trace.data.LinkData;
import io.opentelemetry.sdk.trace.data.SpanData;
import io.opentelemetry.sdk.trace.export.SimpleSpanProcessor;
import io.queen.timers.core.ops.Dependencies;
import io.queen.timers.bridge.BridgeMain;
import io.queen.timers.bridge.BridgeSettings;
import io.queen.timers.client.audit.AuditEvent;
import io.queen.timers.client.command.TimerCommand;
import io.queen.timers.core.telemetry.Telemetry;
import io.queen.timers.sql.Migrations;
import io.queen.timers.sweeper.SweeperMain;
import io.queen.timers.sweeper.SweeperSettings;
import io.queen.timers.sweeper.Sweepers;
import io.queen.timers.testkit.PostgresDatabase;
import io.queen.timers.testkit.TestKafka;
import io.queen.timers.testkit.WireSchemas;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.header.Headers;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * docs/tracing.md#tracing, end to end through the real bridge, sweeper, relay, broker and PostgreSQL, with the SDK's
 * in-memory exporter: the bridge's span of a command is a child of the producer's span; the sweeper's span of its
 * fire is linked to it; a consumer using OpenTelemetry's W3C propagator on an audit record's headers joins the
 * producer's trace, flags and tracestate as the producer sent them (sampled or not).
 */
class TracingIT {

    @RegisterExtension
    static final PostgresDatabase db = PostgresDatabase.initializedWith(Migrations::migrate);

    static final InMemorySpanExporter SPANS = InMemorySpanExporter.create();
    static final OpenTelemetrySdk SDK = OpenTelemetrySdk.builder()
            .setTracerProvider(SdkTracerProvider.builder().addSpanProcessor(SimpleSpanProcessor.create(SPANS)).build()).build();
    static final AttributeKey<String> TIMER_KEY = AttributeKey.stringKey("queen.timers.timer_key");

    /** The producer's span of the sampled command, and the context of the unsampled one (a remote parent, flags 00). */
    static SpanContext sampled;
    static SpanContext unsampled;
    static final List<ConsumerRecord<byte[], byte[]>> auditRecords = new ArrayList<>();

    @BeforeAll
    static void sendTracedCommandsThroughTheStack() {
        String topic = TestKafka.newTopic("otel-cmd", 1);
        String audit = TestKafka.newTopic("otel-audit", 1);
        Tracer producerTracer = SDK.getTracer("producer");
        // The producer continues a trace that carries a vendor's tracestate, as an instrumented service would.
        Context upstream = Context.root().with(Span.wrap(SpanContext.createFromRemoteParent("4bf92f3577b34da6a3ce929d0e0e4736",
                "00f067aa0ba902b7", TraceFlags.getSampled(), TraceState.builder().put("congo", "t61rcWkgMzE").build())));
        Span send = producerTracer.spanBuilder("send command").setSpanKind(SpanKind.PRODUCER).setParent(upstream).startSpan();
        sampled = send.getSpanContext();
        Map<String, String> headers = new HashMap<>();
        W3CTraceContextPropagator.getInstance().inject(Context.root().with(send), headers, MAP_SETTER);
        send.end();
        unsampled = SpanContext.createFromRemoteParent("0af7651916cd43dd8448eb211c80319c", "b7ad6b7169203331", TraceFlags.getDefault(),
                TraceState.builder().put("rojo", "00f067aa0ba902b7").build());

        Telemetry telemetry = Telemetry.of(SDK);
        try (BridgeMain bridge = BridgeMain.start(BridgeSettings.from(BridgeSettings.definition().parse(bridgeSettings(topic, audit))), Dependencies.defaults(new SimpleMeterRegistry()).withTelemetry(telemetry));
                SweeperMain sweeper = SweeperMain.start(SweeperSettings.from(Sweepers.config(db, Map.of())), Dependencies.defaults(new SimpleMeterRegistry()).withTelemetry(telemetry));
                KafkaProducer<byte[], byte[]> producer = TestKafka.commandProducer()) {
            producer.send(TimerCommand.schedule("otel.q", "sampled").delay(Duration.ZERO).txn("t-sampled").payload("1")
                    .traceparent(headers.get("traceparent")).tracestate(headers.get("tracestate")).headers(topic));
            producer.send(TimerCommand.schedule("otel.q", "unsampled").delay(Duration.ZERO).txn("t-unsampled").payload("2")
                    .traceparent("00-" + unsampled.getTraceId() + "-" + unsampled.getSpanId() + "-00").tracestate("rojo=00f067aa0ba902b7")
                    .envelope(topic));
            producer.flush();
            awaitAuditRecords(audit, 4, Duration.ofSeconds(120)); // scheduled and fired, twice
        }
    }

    @AfterAll
    static void closeSdk() {
        SDK.close();
    }

    @Test
    void theBridgesSpanOfACommandIsAChildOfTheProducersSpan() {
        SpanData apply = only("queen-timers apply", "sampled");
        assertThat(apply.getKind()).isEqualTo(SpanKind.CONSUMER);
        assertThat(apply.getTraceId()).isEqualTo(sampled.getTraceId());
        assertThat(apply.getParentSpanId()).isEqualTo(sampled.getSpanId());
        assertThat(apply.getSpanContext().getTraceState().get("congo")).as("the tracestate goes on down the trace").isEqualTo("t61rcWkgMzE");
        assertThat(apply.getAttributes().get(AttributeKey.stringKey("queen.timers.verdict"))).isEqualTo("scheduled");
        // the unsampled producer's decision stands: the bridge's span of that command is not recorded
        assertThat(spans("queen-timers apply", "unsampled")).isEmpty();
    }

    @Test
    void theSweepersSpanOfAFireIsLinkedToTheCommandsSpan() {
        SpanData fire = only("queen-timers fire", "sampled");
        assertThat(fire.getKind()).isEqualTo(SpanKind.PRODUCER);
        assertThat(fire.getParentSpanContext().isValid()).as("a root: the fire runs in no request's context").isFalse();
        assertThat(fire.getTraceId()).isNotEqualTo(sampled.getTraceId());
        assertThat(fire.getLinks()).extracting(LinkData::getSpanContext).singleElement().satisfies(link -> {
            assertThat(link.getTraceId()).isEqualTo(sampled.getTraceId());
            assertThat(link.getSpanId()).isEqualTo(sampled.getSpanId());
            assertThat(link.isSampled()).isTrue();
            assertThat(link.getTraceState().get("congo")).isEqualTo("t61rcWkgMzE");
        });
        // the unsampled command's fire is the sweeper's own root (its sampler decides), linked with the flags as sent
        assertThat(only("queen-timers fire", "unsampled").getLinks()).extracting(LinkData::getSpanContext).singleElement()
                .satisfies(link -> {
                    assertThat(link.getSpanId()).isEqualTo(unsampled.getSpanId());
                    assertThat(link.isSampled()).isFalse();
                });
    }

    @Test
    void aConsumerUsingTheW3cPropagatorOnAnAuditRecordJoinsTheProducersTrace() {
        for (String key : List.of("sampled", "unsampled")) {
            SpanContext producer = key.equals("sampled") ? sampled : unsampled;
            List<ConsumerRecord<byte[], byte[]>> mine = auditRecords.stream().filter(r -> new String(r.key(), StandardCharsets.UTF_8)
                    .equals("otel.q/" + key)).toList();
            assertThat(mine).as(key).hasSize(2); // scheduled, fired
            for (ConsumerRecord<byte[], byte[]> r : mine) {
                Context extracted = W3CTraceContextPropagator.getInstance().extract(Context.root(), r.headers(), HEADERS_GETTER);
                SpanContext parent = Span.fromContext(extracted).getSpanContext();
                String what = key + " " + WireSchemas.auditEvent(r.value()).type();
                assertThat(parent.isValid()).as(what).isTrue();
                assertThat(parent.isRemote()).as(what).isTrue();
                assertThat(parent.getTraceId()).as(what).isEqualTo(producer.getTraceId());
                assertThat(parent.getSpanId()).as(what).isEqualTo(producer.getSpanId());
                assertThat(parent.getTraceFlags()).as(what + ": flags as sent").isEqualTo(producer.getTraceFlags());
                assertThat(parent.getTraceState().asMap()).as(what + ": tracestate as sent").isEqualTo(producer.getTraceState().asMap());
                // and the event itself says the same (the client's view)
                AuditEvent e = WireSchemas.auditEvent(r.value());
                assertThat(e.meta().trace()).get().satisfies(t -> {
                    assertThat(t.sampled()).isEqualTo(producer.isSampled());
                    assertThat(t.header()).isEqualTo("00-" + producer.getTraceId() + "-" + producer.getSpanId() + "-"
                            + producer.getTraceFlags().asHex());
                });
            }
        }
    }

    private static SpanData only(String name, String timerKey) {
        List<SpanData> found = spans(name, timerKey);
        assertThat(found).as(name + " of " + timerKey).hasSize(1);
        return found.get(0);
    }

    private static List<SpanData> spans(String name, String timerKey) {
        return SPANS.getFinishedSpanItems().stream().filter(s -> s.getName().equals(name))
                .filter(s -> timerKey.equals(s.getAttributes().get(TIMER_KEY))).toList();
    }

    private static void awaitAuditRecords(String topic, int n, Duration timeout) {
        Map<String, Object> props = TestKafka.consumerProps("unused");
        props.remove(ConsumerConfig.GROUP_ID_CONFIG);
        List<String> seen = new ArrayList<>();
        long deadline = System.nanoTime() + timeout.toNanos();
        try (KafkaConsumer<byte[], byte[]> c = new KafkaConsumer<>(props)) {
            TopicPartition tp = new TopicPartition(topic, 0);
            c.assign(List.of(tp));
            c.seekToBeginning(List.of(tp));
            while (seen.size() < n) {
                if (System.nanoTime() > deadline) {
                    throw new AssertionError("only " + seen.size() + " of " + n + " audit records on " + topic + " within " + timeout);
                }
                for (ConsumerRecord<byte[], byte[]> r : c.poll(Duration.ofMillis(200))) {
                    String eventId = WireSchemas.auditEvent(r.value()).meta().eventId().toString();
                    if (!seen.contains(eventId)) { // at-least-once: a copy is dropped
                        seen.add(eventId);
                        auditRecords.add(r);
                    }
                }
            }
        }
    }

    static final TextMapSetter<Map<String, String>> MAP_SETTER = (carrier, key, value) -> carrier.put(key, value);

    /** How a consumer reads a Kafka record's headers for a propagator (what the Kafka instrumentation does). */
    static final TextMapGetter<Headers> HEADERS_GETTER = new TextMapGetter<>() {
        @Override
        public Iterable<String> keys(Headers headers) {
            List<String> keys = new ArrayList<>();
            headers.forEach(h -> keys.add(h.key()));
            return keys;
        }

        @Override
        public String get(Headers headers, String key) {
            Header h = headers == null ? null : headers.lastHeader(key);
            return h == null ? null : new String(h.value(), StandardCharsets.UTF_8);
        }
    };

    private static Map<String, String> bridgeSettings(String topic, String audit) {
        Map<String, String> s = new HashMap<>();
        s.put("jdbc.url", db.jdbcUrl());
        s.put("jdbc.user", db.user());
        s.put("db.role.check", "false"); // the testkit connects as the server's superuser: the single-role opt-out (docs/schema-and-roles.md#database-roles)
        s.put("jdbc.password", db.password());
        s.put("jdbc.pool.size", "4");
        s.put("kafka.bootstrap.servers", TestKafka.bootstrapServers());
        s.put("command.topics", topic);
        s.put("audit.topic", audit); // this bridge's relay publishes every event of the database, fired ones too
        s.put("audit.relay.poll.interval", "50ms");
        s.put("bridge.group.id", "otel-" + UUID.randomUUID());
        s.put("http.port", "0");
        s.put("bridge.start.position", "earliest");
        s.put("db.retry.backoff.max", "1s");
        return s;
    }
}
