package io.queen.timers.bench.history;

import java.awt.Color;
import java.awt.Graphics2D;
import java.awt.image.BufferedImage;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import javax.imageio.ImageIO;
import org.knowm.xchart.CategoryChart;
import org.knowm.xchart.CategoryChartBuilder;
import org.knowm.xchart.CategorySeries;
import org.knowm.xchart.style.markers.SeriesMarkers;

/**
 * Plots {@code bench/results/history.csv} (written by {@code bench/run}) as the few charts a person reads: the headline
 * figures over commits, each chart with the series a reader compares side by side (ours against db-scheduler's in the
 * same run, 2,000/s against 5,000/s), each run labelled with its commit. The other figures stay in the CSV and in the
 * raw result files it names. The CSV's columns are {@code utc,commit,figure,value,unit,source}.
 *
 * <pre>
 * java -cp bench/target/benchmarks.jar io.queen.timers.bench.history.HistoryPlot bench/results/history.csv bench/results/history.png
 * </pre>
 */
public final class HistoryPlot {

    private static final int WIDTH = 640;
    private static final int HEIGHT = 400;

    /** One headline chart: its title, its unit, and the figures (CSV names) drawn in it with their legend labels. */
    record Headline(String title, String unit, boolean logarithmic, Map<String, String> series) {}

    /**
     * The headline figures (issue 39), each beside its two peers of issue 48 measured in the same run: (a) db-scheduler's
     * no-op task and (b) the same job built on db-scheduler (PipelineBench --peers).
     */
    static final List<Headline> HEADLINES = List.of(
            new Headline("CPU per timer at a steady 2,000/s (warm)", "µs", false,
                    ordered("steady2000.cpu_us_per_timer", "queen-timers, every process", "steady2000.cpu_us_per_timer_without_broker",
                            "queen-timers, services + PostgreSQL", "dbs2000.cpu_us_per_task", "(a) db-scheduler no-op task",
                            "dbsjob2000.cpu_us_per_timer", "(b) the job on db-scheduler, every process")),
            new Headline("Lateness p99 at steady rates (warm, log scale)", "ms", true,
                    ordered("steady2000.p99_ms", "2,000/s", "steady5000.p99_ms", "5,000/s", "dbs2000.p99_ms", "(a) db-scheduler 2,000/s",
                            "dbsjob2000.p99_ms", "(b) the job on db-scheduler 2,000/s")),
            new Headline("Burst of 100,000, end to end", "timers/s", false, ordered("burst.end_to_end_per_s", "queen-timers",
                    "dbsburst.end_to_end_per_s", "(a) db-scheduler no-op tasks", "dbsjobburst.end_to_end_per_s", "(b) the job on db-scheduler")),
            new Headline("One timer alone: produced → fired, p50", "ms", false, ordered("single.to_fired_event_p50_ms", "queen-timers",
                    "dbssingle.to_executed_p50_ms", "(a) db-scheduler: scheduled → executed", "dbsjobsingle.to_fired_event_p50_ms",
                    "(b) the job on db-scheduler")));

    private HistoryPlot() {}

    record Row(String utc, String commit, String figure, double value, String unit) {}

    public static void main(String[] args) throws IOException {
        Path csv = Path.of(args.length > 0 ? args[0] : "bench/results/history.csv");
        Path png = Path.of(args.length > 1 ? args[1] : "bench/results/history.png");
        List<CategoryChart> charts = charts(read(csv));
        if (charts.isEmpty()) {
            throw new IllegalStateException(csv + " holds no headline figure");
        }
        // two columns; each chart painted into its cell of one image (XChart's own grid wants exactly rows x cols charts)
        int cols = Math.min(2, charts.size());
        int rowsOfCharts = (charts.size() + cols - 1) / cols;
        BufferedImage image = new BufferedImage(cols * WIDTH, rowsOfCharts * HEIGHT, BufferedImage.TYPE_INT_RGB);
        Graphics2D g = image.createGraphics();
        g.setColor(Color.WHITE);
        g.fillRect(0, 0, image.getWidth(), image.getHeight());
        for (int i = 0; i < charts.size(); i++) {
            Graphics2D cell = (Graphics2D) g.create((i % cols) * WIDTH, (i / cols) * HEIGHT, WIDTH, HEIGHT);
            charts.get(i).paint(cell, WIDTH, HEIGHT);
            cell.dispose();
        }
        g.dispose();
        ImageIO.write(image, "png", png.toFile());
        System.out.println("history: " + charts.size() + " headline charts plotted into " + png);
    }

    /**
     * One chart per headline with any data: its x axis the commits that measured any of its figures, in the order they were
     * first measured; a commit measured twice shows its last run; a figure a commit did not measure is a gap.
     */
    static List<CategoryChart> charts(Map<String, List<Row>> byFigure) {
        List<CategoryChart> charts = new ArrayList<>();
        for (Headline h : HEADLINES) {
            List<String> commits = new ArrayList<>();
            for (String figure : h.series().keySet()) {
                for (Row r : byFigure.getOrDefault(figure, List.of())) {
                    if (!commits.contains(r.commit())) {
                        commits.add(r.commit());
                    }
                }
            }
            if (commits.isEmpty()) {
                continue;
            }
            CategoryChart chart = new CategoryChartBuilder().width(WIDTH).height(HEIGHT).title(h.title()).yAxisTitle(h.unit())
                    .xAxisTitle("commit").build();
            chart.getStyler().setDefaultSeriesRenderStyle(CategorySeries.CategorySeriesRenderStyle.Line);
            chart.getStyler().setLegendVisible(h.series().size() > 1);
            chart.getStyler().setMarkerSize(8);
            chart.getStyler().setOverlapped(true); // the series of one commit share its place on the axis
            if (h.logarithmic()) {
                chart.getStyler().setYAxisLogarithmic(true); // 2,000/s and 5,000/s differ by two orders of magnitude
            } else {
                chart.getStyler().setYAxisMin(0.0); // a bar of change against zero, never a zoom into noise
            }
            for (Map.Entry<String, String> s : h.series().entrySet()) {
                Map<String, Double> last = new LinkedHashMap<>();
                byFigure.getOrDefault(s.getKey(), List.of()).forEach(r -> last.put(r.commit(), r.value()));
                if (last.isEmpty()) {
                    continue;
                }
                List<Double> ys = new ArrayList<>();
                commits.forEach(c -> ys.add(last.get(c)));
                chart.addSeries(s.getValue(), commits, ys).setMarker(SeriesMarkers.CIRCLE); // a run alone is one point
            }
            charts.add(chart);
        }
        return charts;
    }

    private static Map<String, String> ordered(String... figureThenLabel) {
        Map<String, String> m = new LinkedHashMap<>();
        for (int i = 0; i < figureThenLabel.length; i += 2) {
            m.put(figureThenLabel[i], figureThenLabel[i + 1]);
        }
        return m;
    }

    /** The CSV's rows grouped by figure, in file order (the file is appended to, so that is time order). */
    static Map<String, List<Row>> read(Path csv) throws IOException {
        Map<String, List<Row>> byFigure = new LinkedHashMap<>();
        for (String line : Files.readAllLines(csv)) {
            if (line.isBlank() || line.startsWith("utc,")) {
                continue;
            }
            String[] f = line.split(",", -1);
            if (f.length < 5) {
                throw new IllegalArgumentException(csv + ": not utc,commit,figure,value,unit,source: " + line);
            }
            Row r = new Row(f[0], f[1], f[2], Double.parseDouble(f[3]), f[4]);
            byFigure.computeIfAbsent(r.figure(), k -> new ArrayList<>()).add(r);
        }
        return byFigure;
    }
}
