package io.queen.timers.soak.sample;

import io.queen.timers.log.codec.Frame;
import io.queen.timers.log.codec.SegmentCodec;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.HashMap;
import java.util.Map;
import java.util.UUID;

/**
 * Lateness read from the log alone: every segment pushed since the last call is decoded with the
 * log's codec, and each frame's lateness is the segment's {@code created_at} minus the delivery time
 * the rig's load wrote into the payload ({@code "d"}, epoch ms). Never a service's own counter.
 */
public final class Lateness {

    private final Map<UUID, Long> lastEnd = new HashMap<>();

    /** Lateness in ms of every frame that reached the log since the previous call. */
    public long[] sinceLastCall(Connection c) throws SQLException {
        LongList out = new LongList();
        Map<UUID, Long> partitions = new HashMap<>();
        try (Statement s = c.createStatement(); ResultSet rs = s.executeQuery("SELECT id FROM queen.log_partitions")) {
            while (rs.next()) {
                UUID id = rs.getObject(1, UUID.class);
                partitions.put(id, lastEnd.getOrDefault(id, -1L));
            }
        }
        try (PreparedStatement ps = c.prepareStatement("SELECT end_offset, (extract(epoch FROM created_at) * 1000)::bigint, blob"
                + " FROM queen.log_segments WHERE partition_id = ? AND base_offset > ? ORDER BY base_offset")) {
            for (var e : partitions.entrySet()) {
                ps.setObject(1, e.getKey());
                ps.setLong(2, e.getValue());
                long end = e.getValue();
                try (ResultSet rs = ps.executeQuery()) {
                    while (rs.next()) {
                        end = rs.getLong(1);
                        long createdAt = rs.getLong(2);
                        for (Frame f : SegmentCodec.unpack(rs.getBytes(3))) {
                            long d = deliverAtMillis(f.payload());
                            if (d >= 0) {
                                out.add(createdAt - d);
                            }
                        }
                    }
                }
                lastEnd.put(e.getKey(), end);
            }
        }
        return out.toArray();
    }

    /** The {@code "d"} field of a payload the rig wrote ({@code {"d":<epoch ms>,...}}), or -1. */
    public static long deliverAtMillis(byte[] payload) {
        String s = new String(payload, 0, Math.min(payload.length, 40), StandardCharsets.UTF_8);
        int i = s.indexOf("\"d\":");
        if (i < 0) {
            return -1;
        }
        long v = 0;
        int digits = 0;
        for (int j = i + 4; j < s.length() && Character.isDigit(s.charAt(j)); j++, digits++) {
            v = v * 10 + (s.charAt(j) - '0');
        }
        return digits == 0 ? -1 : v;
    }

    /** A growable long array: a sample may hold tens of thousands of frames. */
    static final class LongList {
        private long[] a = new long[1024];
        private int n;

        void add(long v) {
            if (n == a.length) {
                a = java.util.Arrays.copyOf(a, n * 2);
            }
            a[n++] = v;
        }

        long[] toArray() {
            return java.util.Arrays.copyOf(a, n);
        }
    }
}
