package io.queen.timers.client.command;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.HexFormat;
import org.junit.jupiter.api.Test;

class TraceParentTest {

    @Test
    void readsVersion00AndKeepsTraceAndSpan() {
        TraceParent t = TraceParent.parse("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01").orElseThrow();
        assertThat(t.traceId()).isEqualTo("4bf92f3577b34da6a3ce929d0e0e4736");
        assertThat(t.spanId()).isEqualTo("00f067aa0ba902b7");
        assertThat(t.header()).isEqualTo("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01");
        assertThat(HexFormat.of().formatHex(t.bytes())).isEqualTo("4bf92f3577b34da6a3ce929d0e0e473600f067aa0ba902b701"); // and the flags (V127)
        assertThat(TraceParent.of(t.traceId(), t.spanId())).isEqualTo(t);
    }

    @Test
    void aLaterVersionMayAppendFields() {
        assertThat(TraceParent.parse("01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-extra")).isPresent();
    }

    @Test
    void invalidContextsAreIgnoredNotGuessed() {
        for (String bad : new String[] {null, "", "garbage", "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-extra",
                "ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01", "00-00000000000000000000000000000000-00f067aa0ba902b7-01",
                "00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01", "00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01",
                "00-4bf92f3577b34da6a3ce929d0e0e473-00f067aa0ba902b7-01"}) {
            assertThat(TraceParent.parse(bad)).as(bad).isEmpty();
        }
    }

    @Test
    void flagsAreKeptNotForcedToSampled() {
        TraceParent unsampled = TraceParent.parse("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-00").orElseThrow();
        assertThat(unsampled.sampled()).isFalse();
        assertThat(unsampled.header()).endsWith("-00");
        assertThat(TraceParent.of(unsampled.traceId(), unsampled.spanId(), "00", null)).isEqualTo(unsampled);
        assertThat(TraceParent.of(unsampled.traceId(), unsampled.spanId()).sampled()).as("an event of before V127 has no flags").isTrue();
    }

    @Test
    void traceStateIsKeptNormalizedAndDroppedWhenInvalid() {
        String header = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
        assertThat(TraceParent.parse(header, " congo=t61rcWkgMzE ,, rojo=00f067aa0ba902b7,tenant@sys=v\\1 ").orElseThrow().traceState())
                .isEqualTo("congo=t61rcWkgMzE,rojo=00f067aa0ba902b7,tenant@sys=v\\1");
        for (String bad : new String[] {"Upper=1", "novalue", "k=", "k=a,b", "k=" + "x".repeat(600), "k=tab\tx"}) {
            TraceParent t = TraceParent.parse(header, bad).orElseThrow();
            assertThat(t.traceState()).as(bad).isNull();
            assertThat(t.header()).isEqualTo(header); // an invalid tracestate never drops the trace
        }
        assertThat(TraceParent.parse(header, String.join(",", java.util.Collections.nCopies(33, "k=v"))).orElseThrow().traceState()).isNull();
    }

    @Test
    void storedBytesCarryFlagsAndTraceState() {
        TraceParent t = TraceParent.parse("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-00", "congo=t61rcWkgMzE").orElseThrow();
        assertThat(t.bytes()).hasSize(25 + "congo=t61rcWkgMzE".length());
        assertThat(TraceParent.fromBytes(t.bytes())).contains(t);
        byte[] beforeV127 = HexFormat.of().parseHex("4bf92f3577b34da6a3ce929d0e0e473600f067aa0ba902b7");
        assertThat(TraceParent.fromBytes(beforeV127).orElseThrow().header()).isEqualTo("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01");
        assertThat(TraceParent.fromBytes(null)).isEmpty();
    }
}
