package io.queen.timers.sweeper.fire;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.databind.JsonNode;
import io.queen.timers.sql.JsonRows;
import io.queen.timers.sql.SqlFile;
import io.queen.timers.sweeper.claim.ClaimedTimer;
import io.queen.timers.sweeper.pack.FireBatch;
import io.queen.timers.sweeper.pack.Segment;
import java.io.ByteArrayOutputStream;
import java.sql.Array;
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
 * Runs one fire: {@code queen.timer_fire_v3} (R__timer_fire.sql) as ONE autocommit statement, so the push of every
 * live segment, the delete of their staging rows, the dead-letter of clear timers refused by an encrypted queue, the
 * release of the rest and the {@code fired} and {@code dead_lettered} audit rows are one transaction. The
 * transaction decides: an exception means nothing of this call happened. The
 * segments travel as named rows (one {@link SegmentRow} each, written by {@link JsonRows}); their blobs
 * and txn hashes back to back in two binary parameters.
 */
public final class Firer {

    private static final String FIRE = SqlFile.load(Firer.class, "fire.sql");

    private final DataSource dataSource;

    public Firer(DataSource dataSource) {
        this.dataSource = dataSource;
    }

    /** p_segments of timer_fire_v3: a segment's destination, its blob's length, its timers in frame order. */
    private record SegmentRow(UUID tenantId, String queue, String partition, int blobLength, List<TimerRow> timers) {}

    /**
     * A timer of a segment: the row to delete, if it still carries this claim token; a recurring timer's
     * plan (its successor, staged by the same fire), left out for a one-shot timer.
     */
    private record TimerRow(String timerKey, UUID claimToken,
                            @JsonInclude(JsonInclude.Include.NON_NULL) JsonNode plan) {}

    /** One outcome per segment, in the batch's order. */
    public List<SegmentOutcome> fire(FireBatch batch) throws SQLException {
        List<Segment> segs = batch.segments();
        int n = segs.size();
        List<SegmentRow> rows = new ArrayList<>(n);
        ByteArrayOutputStream blobs = new ByteArrayOutputStream((int) batch.blobBytes());
        ByteArrayOutputStream hashes = new ByteArrayOutputStream();
        for (Segment s : segs) {
            List<TimerRow> timers = new ArrayList<>(s.size());
            for (ClaimedTimer t : s.timers()) {
                // the cycle decided to deliver it (Delivery skipped the missed ones of catchUp none): leaving. Planned now, by
                // the database's clock its claim read (a retried fire plans again, later)
                timers.add(new TimerRow(t.key().timerKey(), t.lease().claimToken(), t.recurring() ? t.planJson(true) : null));
            }
            rows.add(new SegmentRow(s.destination().tenantId(), s.destination().queue(), s.destination().partition(),
                    s.packed().blob().length, timers));
            blobs.writeBytes(s.packed().blob());
            hashes.writeBytes(s.packed().hashes());
        }
        try (Connection c = dataSource.getConnection()) {
            c.setAutoCommit(true);
            try (PreparedStatement st = c.prepareStatement(FIRE)) {
                st.setString(1, JsonRows.write(rows));
                st.setBytes(2, blobs.toByteArray());
                st.setBytes(3, hashes.toByteArray());
                List<SegmentOutcome> out = new ArrayList<>(n);
                try (ResultSet rs = st.executeQuery()) {
                    while (rs.next()) {
                        Segment s = segs.get(rs.getInt("seg") - 1);
                        FireResult result = FireResult.valueOf(rs.getString("verdict").toUpperCase(Locale.ROOT));
                        long base = rs.getLong("base_offset");
                        Long baseOffset = rs.wasNull() ? null : base;
                        Timestamp created = rs.getTimestamp("created_at");
                        List<ClaimedTimer> refused = new ArrayList<>();
                        Array positions = rs.getArray("refused");
                        if (positions != null) {
                            for (Object pos : (Object[]) positions.getArray()) {
                                refused.add(s.timers().get(((Number) pos).intValue()));
                            }
                        }
                        out.add(new SegmentOutcome(s, result, rs.getObject("partition_id", UUID.class), baseOffset,
                                created == null ? null : created.toInstant(), refused));
                    }
                }
                if (out.size() != n) {
                    throw new IllegalStateException("timer_fire_v3 answered " + out.size() + " verdicts for " + n + " segments");
                }
                return out;
            }
        }
    }
}
