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
        assertThat(HexFormat.of().formatHex(t.bytes())).isEqualTo("4bf92f3577b34da6a3ce929d0e0e473600f067aa0ba902b7");
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
}
