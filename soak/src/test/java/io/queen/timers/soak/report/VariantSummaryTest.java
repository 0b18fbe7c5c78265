package io.queen.timers.soak.report;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.data.Offset.offset;

import io.queen.timers.soak.sample.Column;
import io.queen.timers.soak.sample.Histogram;
import io.queen.timers.soak.sample.Sample;
import io.queen.timers.soak.sample.Sampler;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class VariantSummaryTest {

    @Test
    void percentilesAreNearestRank() {
        long[] v = new long[100];
        for (int i = 0; i < 100; i++) {
            v[i] = 100 - i; // 1..100, unsorted
        }
        assertThat(Percentiles.of(v, 50)).isEqualTo(50);
        assertThat(Percentiles.of(v, 99)).isEqualTo(99);
        assertThat(Percentiles.of(v, 100)).isEqualTo(100);
        assertThat(Percentiles.of(new long[] {7}, 99)).isEqualTo(7);
        assertThat(Percentiles.of(new long[0], 50)).isNaN();
    }

    /** Five samples 10 s apart: the steady half is t=20..40, rates and means are taken over it only. */
    @Test
    void summaryTakesRatesMeansAndLatenessOverTheSteadyHalf() {
        List<Sample> samples = new ArrayList<>();
        List<long[]> lateness = new ArrayList<>();
        List<Sampler.CallHistograms> calls = new ArrayList<>();
        for (int k = 0; k <= 4; k++) {
            Sample s = Sample.blank("v");
            s.set(Column.T_S, 10 * k);
            s.set(Column.PRODUCED, 1000 * k);
            s.set(Column.FIRED_TOTAL, k < 2 ? 0 : 800 * (k - 1)); // nothing fires in the warm-up, then 80/s
            s.set(Column.WAL_BYTES, 1_000_000 * k);
            s.set(Column.TIMERS_DEAD, 100 * k);
            s.set(Column.STALE_TOTAL, k);
            s.set(Column.TIMERS_LIVE, 5000);
            s.set(Column.TIMERS_UPD, 1000 * k);
            s.set(Column.TIMERS_HOT_UPD, 100 * k);
            s.set(Column.VISIBLE_IDX_BYTES, 2_000_000);
            s.set(Column.VISIBLE_IDX_SCANS, 10 * k);
            s.set(Column.VISIBLE_IDX_TUP_READ, 1000 * k);
            if (k > 0) {
                s.set(Column.CLAIMS, k == 4 ? 30 : 10);
                s.set(Column.CLAIM_MEAN_MS, k == 4 ? 4.0 : 2.0);
                s.set(Column.CPU_POSTGRES, k < 2 ? 10 : 50);
            }
            samples.add(s);
            lateness.add(k < 2 ? new long[] {100_000} : new long[] {k, 10 + k});
            // claims: 100 slow ones (1-2 s) in the warm-up, then 100 per interval between 10 and 20 ms
            double slow = k >= 1 ? 100 : 0;
            double fast = Math.max(0, k - 1) * 100.0;
            Histogram claim = Histogram.of(Map.of(0.01, 0.0, 0.02, fast, 1.0, fast, 2.0, fast + slow, Double.POSITIVE_INFINITY, fast + slow));
            calls.add(new Sampler.CallHistograms(claim, Histogram.of(Map.of(0.005, 10.0 * k, Double.POSITIVE_INFINITY, 10.0 * k))));
        }
        VariantSummary sum = VariantSummary.of("v", samples, lateness, calls);
        // steady half: from t=20 (the sample at t=20 covers 10..20, so rates start at t=10)
        assertThat(sum.producedPerS()).isEqualTo(100, offset(1e-9));
        assertThat(sum.firedPerS()).isEqualTo((2400 - 0) / 30.0, offset(1e-9));
        assertThat(sum.walMbPerS()).isEqualTo(0.1, offset(1e-9));
        assertThat(sum.claimMeanMs()).isEqualTo((2.0 * 10 + 2.0 * 10 + 4.0 * 30) / 50, offset(1e-9));
        assertThat(sum.cpuPostgres()).isEqualTo(50, offset(1e-9));
        // the steady half's 300 claims are all 10-20 ms: the warm-up's slow ones are not counted
        assertThat(sum.claimP50Ms()).isEqualTo(15, offset(1e-9));
        assertThat(sum.claimP99Ms()).isEqualTo(19.9, offset(1e-9));
        assertThat(sum.fireP99Ms()).isEqualTo(4.95, offset(1e-9));
        assertThat(sum.deadTuplesMax()).isEqualTo(400);
        assertThat(sum.hotPercent()).isEqualTo(10, offset(1e-9));
        assertThat(sum.idxTupReadPerScan()).isEqualTo(100, offset(1e-9));
        assertThat(sum.staleSegments()).isEqualTo(4);
        // the warm-up's 100 s lateness is not pooled; the steady half's six values are
        assertThat(sum.lateMaxMs()).isEqualTo(14);
        assertThat(sum.lateP50Ms()).isEqualTo(4);
    }
}
