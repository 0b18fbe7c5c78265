package io.queen.timers.testkit;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The heap a child JVM really used, read from its unified GC log ({@code -Xlog:gc:file=...}): the largest
 * "used before" of any collection, i.e. the most the heap held when the JVM had to collect. A test of a
 * memory bound prints it and checks it against the heap.
 */
public final class GcLog {

    private static final Pattern PAUSE = Pattern.compile("(\\d+)M->(\\d+)M\\((\\d+)M\\)");

    private GcLog() {}

    /** The JVM option that writes the log this class reads. */
    public static String option(Path file) {
        return "-Xlog:gc:file=" + file.toAbsolutePath();
    }

    /** The largest heap occupancy (MiB) seen before a collection; 0 when the JVM never collected. */
    public static long peakMegabytes(Path file) throws IOException {
        return largest(file, 1);
    }

    /**
     * The largest heap occupancy (MiB) left after a collection: what the collections could not free at the fullest
     * moment (an upper bound of the live data; G1 leaves old garbage until a mixed or full collection).
     */
    public static long peakLiveMegabytes(Path file) throws IOException {
        return largest(file, 2);
    }

    /** The largest value of one group of {@link #PAUSE} over the log. */
    private static long largest(Path file, int group) throws IOException {
        long peak = 0;
        if (!Files.exists(file)) {
            return 0;
        }
        for (String line : Files.readAllLines(file)) {
            Matcher m = PAUSE.matcher(line);
            while (m.find()) {
                peak = Math.max(peak, Long.parseLong(m.group(group)));
            }
        }
        return peak;
    }

    /** Collections the log records (a bound that holds still collects: this says the log was read). */
    public static long collections(Path file) throws IOException {
        return Files.exists(file) ? Files.readAllLines(file).stream().filter(l -> PAUSE.matcher(l).find()).count() : 0;
    }
}
