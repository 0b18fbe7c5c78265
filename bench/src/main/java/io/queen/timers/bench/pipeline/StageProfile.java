package io.queen.timers.bench.pipeline;

import java.io.IOException;
import java.nio.file.Path;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import jdk.jfr.consumer.RecordedEvent;
import jdk.jfr.consumer.RecordedFrame;
import jdk.jfr.consumer.RecordedStackTrace;
import jdk.jfr.consumer.RecordingFile;

/**
 * Where a service's CPU went, by pipeline stage, from the execution samples of its JDK Flight Recorder
 * file (one sample per running Java thread every 10-20 ms). A sample belongs to the stage of the
 * innermost project frame on its stack (io.queen.timers.*), refined by the library it was in at that
 * moment (the Kafka client or the PostgreSQL driver); samples with no project frame are the clients'
 * own threads (Kafka's network I/O, Hikari's housekeeping). GC and JIT threads are not sampled, so the
 * process's CPU (from /proc) is split in proportion to the samples.
 */
final class StageProfile {

    private StageProfile() {}

    /** Samples per stage within [from, to]. */
    static Map<String, Long> samples(Path jfr, Instant from, Instant to) throws IOException {
        Map<String, Long> counts = new TreeMap<>();
        try (RecordingFile rf = new RecordingFile(jfr)) {
            while (rf.hasMoreEvents()) {
                RecordedEvent e = rf.readEvent();
                if (!e.getEventType().getName().equals("jdk.ExecutionSample")) {
                    continue;
                }
                if (e.getStartTime().isBefore(from) || e.getStartTime().isAfter(to)) {
                    continue;
                }
                counts.merge(stage(e.getStackTrace()), 1L, Long::sum);
            }
        }
        return counts;
    }

    static String stage(RecordedStackTrace trace) {
        if (trace == null) {
            return "unknown";
        }
        List<RecordedFrame> frames = trace.getFrames(); // leaf first
        String library = null;
        for (RecordedFrame f : frames) {
            if (f.getMethod() == null || f.getMethod().getType() == null) {
                continue;
            }
            String cls = f.getMethod().getType().getName();
            if (cls.startsWith("io.queen.timers.")) {
                return project(cls, library);
            }
            if (library == null) {
                if (cls.startsWith("org.apache.kafka.") || cls.startsWith("kafka.")) {
                    library = "kafka";
                } else if (cls.startsWith("org.postgresql.") || cls.startsWith("com.zaxxer.hikari.")) {
                    library = "jdbc";
                } else if (cls.startsWith("com.github.luben.zstd.")) {
                    library = "zstd";
                }
            }
        }
        if ("kafka".equals(library)) {
            return "kafka client threads (network I/O)";
        }
        return library == null ? "other (JDK, logging, metrics)" : library + " (no project frame)";
    }

    private static String project(String cls, String library) {
        String jdbc = "jdbc".equals(library) ? ": JDBC client" : "";
        if (cls.startsWith("io.queen.timers.bridge.wire.")) {
            return "bridge parse";
        }
        if (cls.startsWith("io.queen.timers.bridge.apply.") || cls.startsWith("io.queen.timers.bridge.ingest.OffsetStore")) {
            return "bridge apply" + jdbc;
        }
        if (cls.startsWith("io.queen.timers.bridge.")) {
            return "kafka".equals(library) ? "bridge poll (Kafka consumer)" : "bridge loop" + jdbc;
        }
        if (cls.startsWith("io.queen.timers.relay.")) {
            if ("kafka".equals(library)) {
                return "relay publish (Kafka producer)";
            }
            return "jdbc".equals(library) ? "relay fetch/delete: JDBC client" : "relay render";
        }
        if (cls.startsWith("io.queen.timers.sweeper.claim.")) {
            return "sweeper claim" + jdbc;
        }
        if (cls.startsWith("io.queen.timers.sweeper.pack.") || cls.startsWith("io.queen.timers.log.")) {
            return "pack (log codec)";
        }
        if (cls.startsWith("io.queen.timers.sweeper.fire.")) {
            return "sweeper fire" + jdbc;
        }
        if (cls.startsWith("io.queen.timers.sweeper.")) {
            return "sweeper loop" + jdbc;
        }
        if (cls.startsWith("io.queen.timers.processes.") || cls.startsWith("io.queen.timers.embedded.")) {
            return "broker";
        }
        return "other project code (" + cls.substring("io.queen.timers.".length(), cls.lastIndexOf('.')) + ")";
    }
}
