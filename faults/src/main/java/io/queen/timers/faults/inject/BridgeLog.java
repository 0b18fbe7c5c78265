package io.queen.timers.faults.inject;

import java.io.IOException;
import java.io.RandomAccessFile;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * What a bridge's own log says about its command partitions, for a pause to aim at and to judge (never for the checks):
 * {@code consuming [faults.commands.a-3, ...] from the stored offsets ...} when the group gives it partitions
 * (PartitionPositions), {@code partitions revoked} or {@code partitions LOST} when it gives them away (IngestLoop), and the
 * harness's {@code === harness: start #} line at each start. The group's own view (the admin client) is often unreadable
 * while the broker has faults of its own; the bridge's log is written by the process that holds the partitions.
 */
final class BridgeLog {

    private static final Pattern CONSUMING = Pattern.compile(Pattern.quote(FaultInjector.BRIDGE_CONSUMING_LINE) + "([^\\]]*)\\]");
    private static final String START = "=== harness: start #";
    private static final int CHUNK = 64 * 1024;

    private BridgeLog() {
    }

    /** The partitions named by every {@code consuming [...]} line of {@code text}. */
    static List<String> consumed(String text) {
        List<String> out = new ArrayList<>();
        Matcher m = CONSUMING.matcher(text);
        while (m.find()) {
            for (String p : m.group(1).split(",")) {
                if (!p.isBlank()) {
                    out.add(p.trim());
                }
            }
        }
        return out;
    }

    /**
     * The partitions the bridge holds now by its log: those of its last {@code consuming} line, unless a revocation, a
     * loss or a new start came after it (then none). Read backwards from the end, a chunk at a time (a bridge's log grows
     * to megabytes of client warnings in a run).
     */
    static List<String> held(Path log) throws IOException {
        try (RandomAccessFile f = new RandomAccessFile(log.toFile(), "r")) {
            long end = f.length();
            String carry = "";
            while (end > 0) {
                long from = Math.max(0, end - CHUNK);
                byte[] b = new byte[(int) (end - from)];
                f.seek(from);
                f.readFully(b);
                String text = new String(b, StandardCharsets.UTF_8) + carry;
                String[] lines = text.split("\n", -1);
                // the first line may be cut: keep it for the next (earlier) chunk
                for (int i = lines.length - 1; i >= (from == 0 ? 0 : 1); i--) {
                    String line = lines[i];
                    if (line.contains(START) || line.contains(FaultInjector.BRIDGE_REVOKED_LINE) || line.contains(FaultInjector.BRIDGE_LOST_LINE)) {
                        return List.of();
                    }
                    if (line.contains(FaultInjector.BRIDGE_CONSUMING_LINE)) {
                        return consumed(line);
                    }
                }
                carry = from == 0 ? "" : lines[0];
                end = from;
            }
            return List.of();
        }
    }
}
