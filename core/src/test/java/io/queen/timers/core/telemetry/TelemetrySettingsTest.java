package io.queen.timers.core.telemetry;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Map;
import java.util.Properties;
import org.junit.jupiter.api.Test;

/** docs/tracing.md#tracing: when the services trace, from the standard OTEL_* variables alone. */
class TelemetrySettingsTest {

    @Test
    void offUnlessAnExporterOrEndpointIsNamed() {
        assertThat(on(Map.of())).isFalse();
        assertThat(on(Map.of("OTEL_SERVICE_NAME", "timers"))).as("a name says who, not where").isFalse();
        assertThat(on(Map.of("OTEL_TRACES_EXPORTER", "none"))).isFalse();
        assertThat(on(Map.of("OTEL_EXPORTER_OTLP_ENDPOINT", " "))).as("blank is unset").isFalse();
        assertThat(on(Map.of("OTEL_TRACES_EXPORTER", "otlp"))).isTrue();
        assertThat(on(Map.of("OTEL_EXPORTER_OTLP_ENDPOINT", "http://collector:4318"))).isTrue();
        assertThat(on(Map.of("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "http://collector:4318/v1/traces"))).isTrue();
        assertThat(on(Map.of("OTEL_EXPORTER_OTLP_ENDPOINT", "http://collector:4318", "OTEL_SDK_DISABLED", "TRUE"))).isFalse();
        assertThat(on(Map.of("OTEL_EXPORTER_OTLP_ENDPOINT", "http://collector:4318", "OTEL_TRACES_EXPORTER", "none")))
                .as("an explicit none wins over an endpoint").isFalse();
    }

    @Test
    void aSystemPropertyWinsOverItsVariable() {
        Properties p = new Properties();
        p.setProperty("otel.traces.exporter", "none");
        assertThat(TelemetrySettings.from(Map.of("OTEL_TRACES_EXPORTER", "otlp"), p, "bridge").enabled()).isFalse();
        p.setProperty("otel.traces.exporter", "console");
        assertThat(TelemetrySettings.from(Map.of(), p, "bridge").enabled()).isTrue();
    }

    @Test
    void theServiceIsNamedUnlessTheEnvironmentNamesIt() {
        assertThat(TelemetrySettings.from(Map.of(), new Properties(), "sweeper").defaultServiceName()).isEqualTo("queen-timers-sweeper");
        assertThat(TelemetrySettings.from(Map.of("OTEL_SERVICE_NAME", "x"), new Properties(), "sweeper").defaultServiceName()).isNull();
        assertThat(TelemetrySettings.from(Map.of("OTEL_RESOURCE_ATTRIBUTES", "env=prod, service.name=y"), new Properties(), "sweeper")
                .defaultServiceName()).isNull();
    }

    @Test
    void offBuildsNoSdk() {
        Telemetry t = Telemetry.start(TelemetrySettings.from(Map.of(), new Properties(), "bridge"));
        assertThat(t.enabled()).isFalse();
        assertThat(t).isSameAs(Telemetry.off());
        assertThat(t.tracer().spanBuilder("x").startSpan().getSpanContext().isValid()).as("the no-op API").isFalse();
    }

    /** The autoconfigured SDK with its OTLP exporter on the JDK's HTTP sender (no OkHttp on the class path) builds and traces. */
    @Test
    void onBuildsTheAutoconfiguredSdk() {
        try (Telemetry t = Telemetry.start(new TelemetrySettings(true, "test", "queen-timers-test"))) {
            assertThat(t.enabled()).isTrue();
            // not ended: nothing to export at close, so no wait on a collector that is not there
            assertThat(t.tracer().spanBuilder("x").startSpan().getSpanContext().isValid()).isTrue();
        }
    }

    private static boolean on(Map<String, String> env) {
        return TelemetrySettings.from(env, new Properties(), "bridge").enabled();
    }
}
