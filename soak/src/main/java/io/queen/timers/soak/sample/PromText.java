package io.queen.timers.soak.sample;

import java.util.HashMap;
import java.util.Map;

/**
 * A scrape of a service's {@code /metrics} (Prometheus text format), by series: the metric name with
 * its labels as printed ({@code queen_timers_fired_total{result="fired"}}). Comments are skipped.
 */
public final class PromText {

    private final Map<String, Double> series;

    private PromText(Map<String, Double> series) {
        this.series = series;
    }

    public static PromText parse(String text) {
        Map<String, Double> m = new HashMap<>();
        for (String line : text.split("\n")) {
            String l = line.strip();
            if (l.isEmpty() || l.startsWith("#")) {
                continue;
            }
            int cut = l.lastIndexOf(' ');
            if (cut <= 0) {
                continue;
            }
            try {
                m.put(l.substring(0, cut).strip(), Double.parseDouble(l.substring(cut + 1)));
            } catch (NumberFormatException notANumber) {
                // a line this rig does not read
            }
        }
        return new PromText(m);
    }

    public static PromText empty() {
        return new PromText(Map.of());
    }

    /** The series' value: {@code name} alone, or {@code name{label="value"}} when {@code label} is given; NaN when absent. */
    public double value(String name, String label) {
        Double v = series.get(label == null ? name : name + "{" + label + "}");
        return v == null ? Double.NaN : v;
    }

    /** Every series of the scrape, by name with its labels as printed. */
    public Map<String, Double> series() {
        return java.util.Collections.unmodifiableMap(series);
    }

    public double value(String name) {
        return value(name, null);
    }
}
