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
 * Plots {@code bench/results/history.csv} (written by {@code bench/run}): one chart per figure, its value per run,
 * each run labelled with its commit, all charts in one PNG. The CSV's columns are
 * {@code utc,commit,figure,value,unit,source}; source is the results file the figure was read from.
 *
 * <pre>
 * java -cp bench/target/benchmarks.jar io.queen.timers.bench.history.HistoryPlot bench/results/history.csv bench/results/history.png
 * </pre>
 */
public final class HistoryPlot {

    private static final int WIDTH = 420;
    private static final int HEIGHT = 260;

    private HistoryPlot() {}

    record Row(String utc, String commit, String figure, double value, String unit) {}

    public static void main(String[] args) throws IOException {
        Path csv = Path.of(args.length > 0 ? args[0] : "bench/results/history.csv");
        Path png = Path.of(args.length > 1 ? args[1] : "bench/results/history.png");
        Map<String, List<Row>> byFigure = read(csv);
        List<CategoryChart> charts = new ArrayList<>();
        for (Map.Entry<String, List<Row>> e : byFigure.entrySet()) {
            List<Row> rows = e.getValue();
            CategoryChart chart = new CategoryChartBuilder().width(WIDTH).height(HEIGHT).title(e.getKey())
                    .yAxisTitle(rows.get(0).unit()).build();
            chart.getStyler().setDefaultSeriesRenderStyle(CategorySeries.CategorySeriesRenderStyle.Line);
            chart.getStyler().setLegendVisible(false);
            chart.getStyler().setXAxisLabelRotation(45);
            chart.getStyler().setMarkerSize(7);
            List<String> xs = new ArrayList<>();
            List<Double> ys = new ArrayList<>();
            for (Row r : rows) {
                // a commit measured twice keeps both runs apart on the axis
                xs.add(xs.size() + 1 + " " + r.commit());
                ys.add(r.value());
            }
            chart.addSeries(e.getKey(), xs, ys).setMarker(SeriesMarkers.CIRCLE); // a figure's first run is one point
            charts.add(chart);
        }
        if (charts.isEmpty()) {
            throw new IllegalStateException(csv + " holds no figure");
        }
        // XChart's own grid (BitmapEncoder.saveBitmap(list, rows, cols, ...)) wants exactly rows x cols charts; the
        // figures are any number, so each chart is painted into its cell of one image here
        int cols = Math.min(4, charts.size());
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
        System.out.println("history: " + charts.size() + " figures plotted into " + png);
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
