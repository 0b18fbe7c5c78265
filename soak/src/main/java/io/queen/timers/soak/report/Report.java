package io.queen.timers.soak.report;

import io.queen.timers.soak.Variant;
import io.queen.timers.soak.sample.Column;
import io.queen.timers.soak.sample.Sample;
import io.queen.timers.soak.sample.Sampler;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.function.ToDoubleFunction;
import org.knowm.xchart.BitmapEncoder;
import org.knowm.xchart.XYChart;
import org.knowm.xchart.XYChartBuilder;
import org.knowm.xchart.XYSeries;
import org.knowm.xchart.style.markers.SeriesMarkers;

/**
 * The dated report: {@code samples.csv} (every sample of every variant), {@code summary.md} (what each
 * variant cost, side by side) and the PNG plots, drawn here with XChart.
 */
public final class Report {

    /** One finished variant: its settings, samples, per-sample lateness values and cumulative call histograms. */
    public record VariantRun(Variant variant, List<Sample> samples, List<long[]> lateness, List<Sampler.CallHistograms> calls, String startedAt) {
    }

    private Report() {
    }

    public static void write(Path dir, String header, List<VariantRun> runs) throws IOException {
        Files.createDirectories(dir);
        List<String> csv = new ArrayList<>();
        csv.add(Sample.csvHeader());
        runs.forEach(r -> r.samples().forEach(s -> csv.add(s.csvRow())));
        Files.write(dir.resolve("samples.csv"), csv, StandardCharsets.UTF_8);

        List<VariantSummary> summaries = runs.stream().map(r -> VariantSummary.of(r.variant().name(), r.samples(), r.lateness(), r.calls())).toList();
        Files.writeString(dir.resolve("summary.md"), markdown(header, runs, summaries), StandardCharsets.UTF_8);

        line(dir, "dead_tuples", "Dead tuples of queen.log_timers", "tuples", runs, s -> s.get(Column.TIMERS_DEAD));
        line(dir, "visible_index_size", "Size of idx_log_timers_visible", "MB", runs, s -> s.get(Column.VISIBLE_IDX_BYTES) / 1e6);
        line(dir, "lateness_p50", "Lateness p50 per 10 s (segment created_at - deliverAt)", "ms", runs, s -> s.get(Column.LATE_P50_MS));
        line(dir, "lateness_p99", "Lateness p99 per 10 s (segment created_at - deliverAt)", "ms", runs, s -> s.get(Column.LATE_P99_MS));
        line(dir, "wal_rate", "WAL written", "MB/s", runs, s -> s.get(Column.WAL_BYTES_PER_S) / 1e6);
        line(dir, "cpu_postgres", "CPU of PostgreSQL", "% of one core", runs, s -> s.get(Column.CPU_POSTGRES));
        line(dir, "claim_p99", "Claim call p99 per 10 s (sweepers' histogram buckets)", "ms", runs, s -> s.get(Column.CLAIM_P99_MS));
        scatter(dir, "claim_vs_dead_tuples", "Claim call p99 per 10 s against dead tuples of queen.log_timers", runs);
    }

    static String markdown(String header, List<VariantRun> runs, List<VariantSummary> sums) {
        StringBuilder b = new StringBuilder(header).append("\n\n## Variants\n\n");
        b.append("| variant | change | fillfactor | av scale / threshold / insert scale | batch | lease | tenant per shard | started (UTC) |\n");
        b.append("|---|---|---|---|---|---|---|---|\n");
        for (VariantRun r : runs) {
            Variant v = r.variant();
            b.append(String.format(Locale.ROOT, "| %s | %s | %d | %s / %d / %s | %d | %d s | %d | %s |%n", v.name(), v.changes(), v.fillfactor(),
                    num(v.vacuumScaleFactor()), v.vacuumThreshold(), num(v.vacuumInsertScaleFactor()), v.batchSize(), v.leaseSeconds(),
                    v.tenantPerShard(), r.startedAt()));
        }
        b.append("\n## Results (steady half of each run: from its middle to its end)\n\n");
        Map<String, ToDoubleFunction<VariantSummary>> cols = new LinkedHashMap<>();
        cols.put("produced /s", VariantSummary::producedPerS);
        cols.put("fired /s", VariantSummary::firedPerS);
        cols.put("late p50 ms", VariantSummary::lateP50Ms);
        cols.put("late p99 ms", VariantSummary::lateP99Ms);
        cols.put("late max ms", VariantSummary::lateMaxMs);
        cols.put("claim p50 / p99 / mean ms", null);
        cols.put("claims /s", VariantSummary::claimsPerS);
        cols.put("fire p50 / p99 / mean ms", null);
        cols.put("dead tup mean", VariantSummary::deadTuplesMean);
        cols.put("dead tup max", VariantSummary::deadTuplesMax);
        cols.put("live tup end", VariantSummary::liveTuplesEnd);
        cols.put("idx entries read /scan", VariantSummary::idxTupReadPerScan);
        cols.put("visible idx MB end / max", null);
        cols.put("heap MB end", VariantSummary::heapMbEnd);
        cols.put("HOT %", VariantSummary::hotPercent);
        cols.put("autovacuums timers / outbox", null);
        cols.put("WAL MB/s", VariantSummary::walMbPerS);
        cols.put("WAL B / fired", VariantSummary::walBytesPerFired);
        cols.put("CPU % bridge / sweeper / broker / pg / rig", null);
        cols.put("load avg", VariantSummary::loadMean);
        cols.put("DLQ", VariantSummary::deadLettered);
        cols.put("stale segments", VariantSummary::staleSegments);
        b.append("| variant | ").append(String.join(" | ", cols.keySet())).append(" |\n|---|");
        cols.keySet().forEach(k -> b.append("---|"));
        b.append('\n');
        for (VariantSummary s : sums) {
            b.append("| ").append(s.variant());
            for (var e : cols.entrySet()) {
                b.append(" | ");
                switch (e.getKey()) {
                    case "claim p50 / p99 / mean ms" -> b.append(num(s.claimP50Ms())).append(" / ").append(num(s.claimP99Ms()))
                            .append(" / ").append(num(s.claimMeanMs()));
                    case "fire p50 / p99 / mean ms" -> b.append(num(s.fireP50Ms())).append(" / ").append(num(s.fireP99Ms()))
                            .append(" / ").append(num(s.fireMeanMs()));
                    case "visible idx MB end / max" -> b.append(num(s.visibleIdxMbEnd())).append(" / ").append(num(s.visibleIdxMbMax()));
                    case "autovacuums timers / outbox" -> b.append(num(s.autovacuums())).append(" / ").append(num(s.outboxAutovacuums()));
                    case "CPU % bridge / sweeper / broker / pg / rig" -> b.append(num(s.cpuBridge())).append(" / ").append(num(s.cpuSweeper()))
                            .append(" / ").append(num(s.cpuBroker())).append(" / ").append(num(s.cpuPostgres())).append(" / ").append(num(s.cpuRig()));
                    default -> b.append(num(e.getValue().applyAsDouble(s)));
                }
            }
            b.append(" |\n");
        }
        b.append("\n## Columns of samples.csv\n\n| column | meaning |\n|---|---|\n");
        for (Column c : Column.values()) {
            b.append("| `").append(c.header()).append("` | ").append(c.doc()).append(" |\n");
        }
        b.append("\n## Plots\n\n");
        for (String p : List.of("dead_tuples", "visible_index_size", "lateness_p50", "lateness_p99", "claim_p99", "claim_vs_dead_tuples", "wal_rate", "cpu_postgres")) {
            b.append("![").append(p).append("](").append(p).append(".png)\n");
        }
        return b.toString();
    }

    static String num(double v) {
        if (Double.isNaN(v)) {
            return "–";
        }
        if (Math.abs(v) >= 100) {
            return String.format(Locale.ROOT, "%,.0f", v);
        }
        if (Math.abs(v) >= 10) {
            return String.format(Locale.ROOT, "%.1f", v);
        }
        return String.format(Locale.ROOT, "%.2f", v);
    }

    private static void line(Path dir, String file, String title, String unit, List<VariantRun> runs, ToDoubleFunction<Sample> y) throws IOException {
        XYChart chart = new XYChartBuilder().width(1000).height(560).title(title).xAxisTitle("seconds into the run").yAxisTitle(unit).build();
        chart.getStyler().setDefaultSeriesRenderStyle(XYSeries.XYSeriesRenderStyle.Line);
        chart.getStyler().setMarkerSize(4);
        for (VariantRun r : runs) {
            List<Double> xs = new ArrayList<>();
            List<Double> ys = new ArrayList<>();
            for (Sample s : r.samples()) {
                double v = y.applyAsDouble(s);
                if (!Double.isNaN(v) && !Double.isInfinite(v)) {
                    xs.add(s.get(Column.T_S));
                    ys.add(v);
                }
            }
            if (!xs.isEmpty()) {
                chart.addSeries(r.variant().name(), xs, ys);
            }
        }
        if (!chart.getSeriesMap().isEmpty()) {
            BitmapEncoder.saveBitmap(chart, dir.resolve(file + ".png").toString(), BitmapEncoder.BitmapFormat.PNG);
        }
    }

    private static void scatter(Path dir, String file, String title, List<VariantRun> runs) throws IOException {
        XYChart chart = new XYChartBuilder().width(1000).height(560).title(title).xAxisTitle("dead tuples (≈ dead entries in idx_log_timers_visible)")
                .yAxisTitle("claim p99 ms").build();
        chart.getStyler().setDefaultSeriesRenderStyle(XYSeries.XYSeriesRenderStyle.Scatter);
        chart.getStyler().setMarkerSize(6);
        for (VariantRun r : runs) {
            List<Double> xs = new ArrayList<>();
            List<Double> ys = new ArrayList<>();
            for (Sample s : r.samples()) {
                double x = s.get(Column.TIMERS_DEAD);
                double v = s.get(Column.CLAIM_P99_MS);
                if (!Double.isNaN(x) && !Double.isNaN(v)) {
                    xs.add(x);
                    ys.add(v);
                }
            }
            if (!xs.isEmpty()) {
                chart.addSeries(r.variant().name(), xs, ys).setMarker(SeriesMarkers.CIRCLE);
            }
        }
        if (!chart.getSeriesMap().isEmpty()) {
            BitmapEncoder.saveBitmap(chart, dir.resolve(file + ".png").toString(), BitmapEncoder.BitmapFormat.PNG);
        }
    }
}
