package io.queen.timers.sweeper.fire;

import io.queen.timers.sql.SqlFile;
import io.queen.timers.sweeper.claim.ClaimedTimer;
import io.queen.timers.sweeper.pack.FireBatch;
import io.queen.timers.sweeper.pack.Segment;
import java.io.ByteArrayOutputStream;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Timestamp;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.UUID;
import javax.sql.DataSource;

/**
 * Runs one fire: {@code queen.timer_fire_v1} (V033) as ONE autocommit statement, so the push of every live
 * segment, the delete of their staging rows, the release of the rest and the {@code fired} audit rows are
 * one transaction. The transaction decides: an exception means nothing of this call happened.
 */
public final class Firer {

    private static final String FIRE = SqlFile.load(Firer.class, "fire.sql");

    private final DataSource dataSource;

    public Firer(DataSource dataSource) {
        this.dataSource = dataSource;
    }

    /** One outcome per segment, in the batch's order. */
    public List<SegmentOutcome> fire(FireBatch batch) throws SQLException {
        List<Segment> segs = batch.segments();
        int n = segs.size();
        UUID[] tenants = new UUID[n];
        String[] queues = new String[n];
        String[] partitions = new String[n];
        Integer[] counts = new Integer[n];
        Integer[] blobLengths = new Integer[n];
        ByteArrayOutputStream blobs = new ByteArrayOutputStream((int) batch.blobBytes());
        ByteArrayOutputStream hashes = new ByteArrayOutputStream();
        List<Integer> rowSegs = new ArrayList<>();
        List<String> keys = new ArrayList<>();
        List<UUID> tokens = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            Segment s = segs.get(i);
            tenants[i] = s.destination().tenantId();
            queues[i] = s.destination().queue();
            partitions[i] = s.destination().partition();
            counts[i] = s.size();
            blobLengths[i] = s.packed().blob().length;
            blobs.writeBytes(s.packed().blob());
            hashes.writeBytes(s.packed().hashes());
            for (ClaimedTimer t : s.timers()) {
                rowSegs.add(i + 1);
                keys.add(t.timerKey());
                tokens.add(t.claimToken());
            }
        }
        try (Connection c = dataSource.getConnection()) {
            c.setAutoCommit(true);
            try (PreparedStatement st = c.prepareStatement(FIRE)) {
                st.setArray(1, c.createArrayOf("uuid", tenants));
                st.setArray(2, c.createArrayOf("text", queues));
                st.setArray(3, c.createArrayOf("text", partitions));
                st.setArray(4, c.createArrayOf("int4", counts));
                st.setBytes(5, blobs.toByteArray());
                st.setArray(6, c.createArrayOf("int4", blobLengths));
                st.setBytes(7, hashes.toByteArray());
                st.setArray(8, c.createArrayOf("int4", rowSegs.toArray(Integer[]::new)));
                st.setArray(9, c.createArrayOf("text", keys.toArray(String[]::new)));
                st.setArray(10, c.createArrayOf("uuid", tokens.toArray(UUID[]::new)));
                List<SegmentOutcome> out = new ArrayList<>(n);
                try (ResultSet rs = st.executeQuery()) {
                    while (rs.next()) {
                        Segment s = segs.get(rs.getInt(1) - 1);
                        FireResult result = FireResult.valueOf(rs.getString(2).toUpperCase(Locale.ROOT));
                        long base = rs.getLong(4);
                        Long baseOffset = rs.wasNull() ? null : base;
                        Timestamp created = rs.getTimestamp(5);
                        out.add(new SegmentOutcome(s, result, rs.getObject(3, UUID.class), baseOffset,
                                created == null ? null : created.toInstant()));
                    }
                }
                if (out.size() != n) {
                    throw new IllegalStateException("timer_fire_v1 answered " + out.size() + " verdicts for " + n + " segments");
                }
                return out;
            }
        }
    }
}
