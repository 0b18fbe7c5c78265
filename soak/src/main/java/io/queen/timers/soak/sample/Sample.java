package io.queen.timers.soak.sample;

import java.util.Arrays;
import java.util.Locale;
import java.util.stream.Collectors;

/** One sample of one variant: a value per {@link Column} (NaN where it could not be read). */
public record Sample(String variant, double[] values) {

    public Sample {
        if (values.length != Column.values().length) {
            throw new IllegalArgumentException("a sample has " + Column.values().length + " values, not " + values.length);
        }
    }

    public static Sample blank(String variant) {
        double[] v = new double[Column.values().length];
        Arrays.fill(v, Double.NaN);
        return new Sample(variant, v);
    }

    public double get(Column c) {
        return values[c.ordinal()];
    }

    public void set(Column c, double v) {
        values[c.ordinal()] = v;
    }

    public static String csvHeader() {
        return "variant," + Arrays.stream(Column.values()).map(Column::header).collect(Collectors.joining(","));
    }

    public String csvRow() {
        return variant + "," + Arrays.stream(values).mapToObj(Sample::format).collect(Collectors.joining(","));
    }

    static String format(double v) {
        if (Double.isNaN(v)) {
            return "";
        }
        if (v == Math.rint(v) && Math.abs(v) < 1e15) {
            return Long.toString((long) v);
        }
        return String.format(Locale.ROOT, "%.3f", v);
    }

    /** Reads a row {@link #csvRow()} wrote (the report can be redrawn from the CSV alone). */
    public static Sample parseCsv(String row) {
        String[] f = row.split(",", -1);
        if (f.length != Column.values().length + 1) {
            throw new IllegalArgumentException("a sample row has " + (Column.values().length + 1) + " fields, not " + f.length + ": " + row);
        }
        double[] v = new double[Column.values().length];
        for (int i = 0; i < v.length; i++) {
            v[i] = f[i + 1].isEmpty() ? Double.NaN : Double.parseDouble(f[i + 1]);
        }
        return new Sample(f[0], v);
    }
}
