package io.queen.timers.soak.sample;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

class SampleParsingTest {

    @Test
    void prometheusSeriesAreReadByNameAndLabel() {
        PromText m = PromText.parse("""
                # HELP queen_timers_fired_total Timers per fire verdict
                # TYPE queen_timers_fired_total counter
                queen_timers_fired_total{result="fired"} 12345.0
                queen_timers_fired_total{result="stale"} 3.0
                queen_timers_claim_duration_seconds_count 42
                queen_timers_claim_duration_seconds_sum 0.5040000000000001
                queen_timers_claim_duration_seconds_max 0.031
                queen_timers_due 1.0E4
                """);
        assertThat(m.value("queen_timers_fired_total", "result=\"fired\"")).isEqualTo(12345.0);
        assertThat(m.value("queen_timers_fired_total", "result=\"stale\"")).isEqualTo(3.0);
        assertThat(m.value("queen_timers_claim_duration_seconds_count")).isEqualTo(42);
        assertThat(m.value("queen_timers_claim_duration_seconds_sum")).isEqualTo(0.504, org.assertj.core.data.Offset.offset(1e-9));
        assertThat(m.value("queen_timers_due")).isEqualTo(10_000);
        assertThat(m.value("queen_timers_dead_lettered_total")).isNaN();
    }

    @Test
    void procStatIsReadAfterTheCommandNameEvenWithSpacesAndParentheses() {
        String line = "4242 (java (main) x) S 17 4242 4242 0 -1 4194560 2291 0 0 0 1500 250 30 7 20 0 33 0 123 0 0";
        ProcStat.Times t = ProcStat.parse(line);
        assertThat(t.ppid()).isEqualTo(17);
        assertThat(t.utime()).isEqualTo(1500);
        assertThat(t.stime()).isEqualTo(250);
        assertThat(t.cutime()).isEqualTo(30);
        assertThat(t.cstime()).isEqualTo(7);
        assertThat(t.own()).isEqualTo(1750);
    }

    @Test
    void procStatOfThisProcessIsReadable() {
        assertThat(ProcStat.ticks(ProcessHandle.current().pid())).isGreaterThanOrEqualTo(0);
        assertThat(ProcStat.ticks(-1)).isEqualTo(-1);
    }

    @Test
    void deliveryTimeIsReadFromTheRigsPayload() {
        assertThat(Lateness.deliverAtMillis("{\"d\":1764806400123,\"n\":7,\"pad\":\"xx\"}".getBytes(StandardCharsets.UTF_8)))
                .isEqualTo(1764806400123L);
        assertThat(Lateness.deliverAtMillis("{\"orderId\":42}".getBytes(StandardCharsets.UTF_8))).isEqualTo(-1);
        assertThat(Lateness.deliverAtMillis("{\"d\":\"x\"}".getBytes(StandardCharsets.UTF_8))).isEqualTo(-1);
    }

    @Test
    void aSampleSurvivesItsCsvRow() {
        Sample s = Sample.blank("ff70");
        s.set(Column.T_S, 10.004);
        s.set(Column.TIMERS_DEAD, 1234);
        s.set(Column.CLAIM_MEAN_MS, 2.5);
        Sample back = Sample.parseCsv(s.csvRow());
        assertThat(back.variant()).isEqualTo("ff70");
        assertThat(back.get(Column.T_S)).isEqualTo(10.004);
        assertThat(back.get(Column.TIMERS_DEAD)).isEqualTo(1234);
        assertThat(back.get(Column.CLAIM_MEAN_MS)).isEqualTo(2.5);
        assertThat(back.get(Column.LATE_P99_MS)).isNaN();
        assertThat(Sample.csvHeader().split(",")).hasSize(Column.values().length + 1);
        assertThatThrownBy(() -> Sample.parseCsv("ff70,1,2")).isInstanceOf(IllegalArgumentException.class);
    }
}
