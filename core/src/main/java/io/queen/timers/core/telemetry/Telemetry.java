package io.queen.timers.core.telemetry;

import io.opentelemetry.api.OpenTelemetry;
import io.opentelemetry.api.trace.Span;
import io.opentelemetry.api.trace.SpanContext;
import io.opentelemetry.api.trace.Tracer;
import io.opentelemetry.api.trace.propagation.W3CTraceContextPropagator;
import io.opentelemetry.context.Context;
import io.opentelemetry.context.propagation.TextMapGetter;
import io.opentelemetry.sdk.OpenTelemetrySdk;
import io.opentelemetry.sdk.autoconfigure.AutoConfiguredOpenTelemetrySdk;
import io.queen.timers.client.command.TraceParent;
import io.queen.timers.client.command.WireFormat;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The one owner of OpenTelemetry in a process (docs/tracing.md#tracing). {@link TelemetrySettings} decides whether the SDK
 * is built; when it is, the SDK's autoconfigure module builds it from the standard {@code OTEL_*} variables (exporter,
 * endpoint, sampler, resource, propagators) with defaults of ours: {@code service.name} {@code queen-timers-<service>},
 * no metrics or logs exporter (the services' metrics are Micrometer's on /metrics) and OTLP over http/protobuf (sent by
 * the JDK's HTTP client; the SDK's default, grpc, would need OkHttp or grpc-java on the class path). When it is not, nothing is
 * built: {@link #enabled()} is false and the callers skip every span, so tracing off costs one boolean per batch.
 *
 * <p>The spans (their names and attributes are the callers'): the bridge's {@code queen-timers apply}, one per
 * command record applied, a child of the record's {@code traceparent}; the sweeper's {@code queen-timers fire}, one per
 * timer fired, a root LINKED to the command's span (the fire happens later, in no request's context).
 */
public final class Telemetry implements AutoCloseable {

    private static final Logger LOG = LoggerFactory.getLogger(Telemetry.class);
    /** The instrumentation scope of every span of this project. */
    public static final String SCOPE = "io.queen.timers";

    private static final Telemetry OFF = new Telemetry(OpenTelemetry.noop(), false, null);
    private static Telemetry process;

    private final OpenTelemetry openTelemetry;
    private final Tracer tracer;
    private final boolean enabled;
    private final OpenTelemetrySdk owned;

    private Telemetry(OpenTelemetry openTelemetry, boolean enabled, OpenTelemetrySdk owned) {
        this.openTelemetry = openTelemetry;
        this.tracer = openTelemetry.getTracer(SCOPE);
        this.enabled = enabled;
        this.owned = owned;
    }

    /** No tracing: the no-op API, no span created. */
    public static Telemetry off() {
        return OFF;
    }

    /** Traces into {@code openTelemetry}, which the caller owns (tests: an SDK with an in-memory exporter). */
    public static Telemetry of(OpenTelemetry openTelemetry) {
        return new Telemetry(openTelemetry, true, null);
    }

    /** Builds what {@code settings} ask for: the autoconfigured SDK when enabled, else {@link #off()}. */
    public static Telemetry start(TelemetrySettings settings) {
        if (!settings.enabled()) {
            LOG.info("{}", settings.reason());
            return OFF;
        }
        Map<String, String> defaults = new HashMap<>();
        defaults.put("otel.metrics.exporter", "none");
        defaults.put("otel.logs.exporter", "none");
        // the SDK's own default is grpc, whose senders need OkHttp or grpc-java; the JDK's HTTP client speaks http/protobuf
        defaults.put("otel.exporter.otlp.protocol", "http/protobuf");
        if (settings.defaultServiceName() != null) {
            defaults.put("otel.service.name", settings.defaultServiceName());
        }
        // the OTEL_* variables and -Dotel.* win over these defaults; the SDK's shutdown hook flushes at exit
        OpenTelemetrySdk sdk = AutoConfiguredOpenTelemetrySdk.builder().addPropertiesSupplier(() -> defaults).build().getOpenTelemetrySdk();
        LOG.info("{} (OpenTelemetry SDK, configured by the OTEL_* variables)", settings.reason());
        return new Telemetry(sdk, true, sdk);
    }

    /**
     * This JVM's telemetry from its environment, built once: the first service started in the JVM names it (the local
     * stack runs the bridge and the sweeper in one JVM; they share one SDK).
     */
    public static synchronized Telemetry process(TelemetrySettings settings) {
        if (process == null) {
            process = start(settings);
        }
        return process;
    }

    /** Whether spans are made; false means the callers create nothing at all. */
    public boolean enabled() {
        return enabled;
    }

    public Tracer tracer() {
        return tracer;
    }

    public OpenTelemetry openTelemetry() {
        return openTelemetry;
    }

    /**
     * The remote span context of a stored or received trace ({@code traceparent} and {@code tracestate}), read by the
     * W3C propagator exactly as a consumer reads them: flags and tracestate as the producer sent them.
     */
    public static Optional<SpanContext> remote(TraceParent trace) {
        if (trace == null) {
            return Optional.empty();
        }
        SpanContext sc = Span.fromContext(parent(trace)).getSpanContext();
        return sc.isValid() ? Optional.of(sc) : Optional.empty();
    }

    /** The context whose span is the producer's (remote) span of {@code trace}; the root context for null. */
    public static Context parent(TraceParent trace) {
        if (trace == null) {
            return Context.root();
        }
        Map<String, String> carrier = new HashMap<>();
        carrier.put(WireFormat.TRACEPARENT, trace.header());
        if (trace.traceState() != null) {
            carrier.put(WireFormat.TRACESTATE, trace.traceState());
        }
        return W3CTraceContextPropagator.getInstance().extract(Context.root(), carrier, MAP);
    }

    private static final TextMapGetter<Map<String, String>> MAP = new TextMapGetter<>() {
        @Override
        public Iterable<String> keys(Map<String, String> carrier) {
            return List.copyOf(carrier.keySet());
        }

        @Override
        public String get(Map<String, String> carrier, String key) {
            return carrier == null ? null : carrier.get(key);
        }
    };

    /** Flushes and stops an SDK this object built; a no-op otherwise. */
    @Override
    public void close() {
        if (owned != null) {
            owned.close();
        }
    }
}
