package io.queen.timers.bench.pipeline;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.function.Consumer;
import jdk.jfr.consumer.RecordedEvent;
import jdk.jfr.consumer.RecordedFrame;
import jdk.jfr.consumer.RecordedStackTrace;
import jdk.jfr.consumer.RecordingFile;

/**
 * The JVM half of {@code PipelineBench --profile}: a service's flight recording ({@code settings=profile}, dumped when
 * the service exits) read for one window, what {@code jfr print --events jdk.ExecutionSample} shows aggregated:
 * execution samples by top frame (the method on the CPU), by the innermost project frame (the project's code that
 * asked for that work, its callee libraries included), by stage ({@link StageProfile}) and by thread; garbage
 * collections (count, total pause); allocation (jdk.ObjectAllocationSample weight) by top frame. A sample is a Java
 * thread found running Java code; the process's CPU from /proc (GC and JIT threads included) is split in proportion to
 * the samples for the µs per timer. Printed (the top rows) and written whole to {@code <role>-jfr.txt}.
 */
final class JfrSummary {

    private JfrSummary() {}

    static void summarize(String role, Path jfr, Instant from, Instant to, double cpuSeconds, double units, String unit, Path outFile,
            Consumer<String> log) throws IOException {
        Map<String, Long> leaf = new HashMap<>();
        Map<String, Long> project = new HashMap<>();
        Map<String, Long> stage = new HashMap<>();
        Map<String, Long> threads = new HashMap<>();
        Map<String, Long> allocation = new HashMap<>();
        Map<String, Long> gcByName = new HashMap<>();
        // wall time a thread spent blocked, by event, thread and innermost project frame (profile.jfc records those of 10 ms or more)
        Map<String, Long> waitedNanos = new HashMap<>();
        long samples = 0;
        long gcs = 0;
        Duration gcPause = Duration.ZERO;
        Duration longestPause = Duration.ZERO;
        try (RecordingFile rf = new RecordingFile(jfr)) {
            while (rf.hasMoreEvents()) {
                RecordedEvent e = rf.readEvent();
                if (e.getStartTime().isBefore(from) || e.getStartTime().isAfter(to)) {
                    continue;
                }
                switch (e.getEventType().getName()) {
                    case "jdk.ExecutionSample" -> {
                        samples++;
                        RecordedStackTrace st = e.getStackTrace();
                        leaf.merge(top(st), 1L, Long::sum);
                        project.merge(innermostProject(st), 1L, Long::sum);
                        stage.merge(StageProfile.stage(st), 1L, Long::sum);
                        threads.merge(threadName(e), 1L, Long::sum);
                    }
                    case "jdk.ObjectAllocationSample" -> allocation.merge(top(e.getStackTrace()), e.getLong("weight"), Long::sum);
                    case "jdk.GarbageCollection" -> {
                        gcs++;
                        gcByName.merge(e.getString("name"), 1L, Long::sum);
                        Duration p = e.getDuration("sumOfPauses");
                        gcPause = gcPause.plus(p);
                        if (p.compareTo(longestPause) > 0) {
                            longestPause = p;
                        }
                    }
                    case "jdk.SocketRead", "jdk.SocketWrite", "jdk.ThreadPark", "jdk.ThreadSleep", "jdk.JavaMonitorWait",
                            "jdk.JavaMonitorEnter" -> waitedNanos.merge(e.getEventType().getName().substring(4) + "  " + threadOf(e) + "  "
                            + innermostProject(e.getStackTrace()) + portOf(e), e.getDuration().toNanos(), Long::sum);
                    default -> { }
                }
            }
        }
        List<String> lines = new ArrayList<>();
        double usPerSample = samples == 0 ? 0 : cpuSeconds * 1e6 / units / samples;
        String head = String.format("%s: %.2f CPU s in the window, %,d execution samples: %.1f CPU µs per %s; %d GCs %s, %d ms paused"
                + " in all, longest %d ms", role, cpuSeconds, samples, cpuSeconds * 1e6 / units, unit, gcs, gcByName, gcPause.toMillis(),
                longestPause.toMillis());
        log.accept("  " + head);
        lines.add(head);
        section("by stage", stage, samples, usPerSample, unit, 20, lines, log);
        section("by thread", threads, samples, usPerSample, unit, 12, lines, log);
        section("by top frame (the method on the CPU)", leaf, samples, usPerSample, unit, 25, lines, log);
        section("by innermost project frame (project code and the library work it called)", project, samples, usPerSample, unit, 25,
                lines, log);
        long allocated = allocation.values().stream().mapToLong(Long::longValue).sum();
        lines.add(String.format("allocation by top frame (jdk.ObjectAllocationSample weight, %,.0f bytes per %s in all):", allocated / units, unit));
        log.accept(String.format("    allocation: %,.0f bytes per %s (sampled weight); top frames:", allocated / units, unit));
        int n = 0;
        for (Map.Entry<String, Long> e : sorted(allocation)) {
            String row = String.format(Locale.ROOT, "    %10.0f B/%s  %5.1f %%  %s", e.getValue() / units, unit, 100.0 * e.getValue() / Math.max(1, allocated),
                    e.getKey());
            lines.add(row);
            if (n++ < 10) {
                log.accept(row);
            }
        }
        long windowNanos = Duration.between(from, to).toNanos();
        lines.add("waits of 10 ms or more (wall time, % of the window; by event, thread, innermost project frame, port):");
        log.accept("    waits of 10 ms or more (wall ms per second of the window; event, thread, innermost project frame, port):");
        int w = 0;
        for (Map.Entry<String, Long> e : sorted(waitedNanos)) {
            String row = String.format(Locale.ROOT, "    %8.1f ms/s  %s", e.getValue() / 1e6 / (windowNanos / 1e9), e.getKey());
            lines.add(row);
            if (w++ < 12) {
                log.accept("  " + row);
            }
        }
        Files.createDirectories(outFile.getParent());
        Files.write(outFile, lines);
    }

    private static void section(String title, Map<String, Long> counts, long samples, double usPerSample, String unit, int show,
            List<String> lines, Consumer<String> log) {
        lines.add(title + ":");
        log.accept("    " + title + ":");
        int n = 0;
        for (Map.Entry<String, Long> e : sorted(counts)) {
            String row = String.format(Locale.ROOT, "    %8.1f µs/%s  %5.1f %%  %s", e.getValue() * usPerSample, unit,
                    100.0 * e.getValue() / Math.max(1, samples), e.getKey());
            lines.add(row);
            if (n++ < show) {
                log.accept("  " + row);
            }
        }
    }

    private static List<Map.Entry<String, Long>> sorted(Map<String, Long> m) {
        List<Map.Entry<String, Long>> l = new ArrayList<>(m.entrySet());
        l.sort(Map.Entry.<String, Long>comparingByValue().reversed());
        return l;
    }

    private static String top(RecordedStackTrace st) {
        if (st == null || st.getFrames().isEmpty()) {
            return "(no stack)";
        }
        return frame(st.getFrames().get(0));
    }

    private static String innermostProject(RecordedStackTrace st) {
        if (st == null) {
            return "(no stack)";
        }
        for (RecordedFrame f : st.getFrames()) {
            if (f.getMethod() != null && f.getMethod().getType() != null && f.getMethod().getType().getName().startsWith("io.queen.timers.")) {
                return frame(f);
            }
        }
        return "(no project frame: " + top(st) + ")";
    }

    private static String frame(RecordedFrame f) {
        if (f.getMethod() == null || f.getMethod().getType() == null) {
            return "(unknown)";
        }
        return f.getMethod().getType().getName() + "." + f.getMethod().getName();
    }

    private static String threadOf(RecordedEvent e) {
        var t = e.getThread();
        return t == null ? "(unknown)" : t.getJavaName() == null ? t.getOSName() : t.getJavaName().replaceAll("-\\d+$", "-N");
    }

    /** The remote port of a socket event (which server a thread waited for), empty for the others. */
    private static String portOf(RecordedEvent e) {
        return e.hasField("port") ? "  port " + e.getInt("port") : "";
    }

    private static String threadName(RecordedEvent e) {
        try {
            var t = e.getThread("sampledThread");
            // numbered threads of one pool are one row
            return t == null ? "(unknown)" : t.getJavaName() == null ? t.getOSName() : t.getJavaName().replaceAll("-\\d+$", "-N");
        } catch (IllegalArgumentException noSuchField) {
            return "(unknown)";
        }
    }

    static void deleteQuietly(Path p) {
        try {
            Files.deleteIfExists(p);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
