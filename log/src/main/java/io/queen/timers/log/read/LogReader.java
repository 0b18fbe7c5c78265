package io.queen.timers.log.read;

import io.queen.timers.log.codec.CodecException;
import io.queen.timers.log.codec.Frame;
import io.queen.timers.log.codec.SegmentCodec;
import io.queen.timers.log.codec.TxnHash;
import io.queen.timers.sql.SqlFile;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Optional;
import java.util.UUID;
import javax.sql.DataSource;

/**
 * Reads the log: messages of a partition from an offset, and "was it sent?" (where a txn appears in
 * a queue). Reads take no locks and see committed segments only.
 *
 * <p>A segment is one zstd stream, so reading any frame decompresses its whole segment. The reader
 * fetches only the segments that hold the requested offsets (primary-key range on
 * {@code (partition_id, base_offset)}), at most {@code limit} of them.
 */
public final class LogReader {

    private static final String PARTITIONS = SqlFile.load(LogReader.class, "partitions.sql");
    private static final String READ_SEGMENTS = SqlFile.load(LogReader.class, "read_segments.sql");
    private static final String TXN_CANDIDATES = SqlFile.load(LogReader.class, "txn_candidates.sql");
    private static final String SEGMENT = SqlFile.load(LogReader.class, "segment.sql");

    private final DataSource dataSource;

    public LogReader(DataSource dataSource) {
        this.dataSource = dataSource;
    }

    /** The partitions of a queue, by name. Empty when the queue does not exist (yet). */
    public List<PartitionInfo> partitions(UUID tenant, String queue) throws SQLException {
        List<PartitionInfo> out = new ArrayList<>();
        try (Connection c = dataSource.getConnection(); PreparedStatement st = c.prepareStatement(PARTITIONS)) {
            st.setObject(1, tenant);
            st.setString(2, queue);
            try (ResultSet rs = st.executeQuery()) {
                while (rs.next()) {
                    OffsetDateTime lastWrite = rs.getObject("last_write_at", OffsetDateTime.class);
                    out.add(new PartitionInfo(rs.getObject("partition_id", UUID.class), rs.getString("partition_name"),
                            rs.getLong("last_offset"),
                            lastWrite == null ? null : lastWrite.toInstant()));
                }
            }
        }
        return out;
    }

    /**
     * Up to {@code limit} messages of (tenant, queue, partition) with offset {@code >= fromOffset}, in
     * offset order. Empty when the partition does not exist or holds nothing from there on.
     *
     * @throws CodecException when a segment on the way does not decode (named by partition and offset)
     */
    public List<LogMessage> read(UUID tenant, String queue, String partition, long fromOffset, int limit) throws SQLException {
        if (limit < 1) {
            throw new IllegalArgumentException("limit must be >= 1, got " + limit);
        }
        long from = Math.max(0, fromOffset);
        long to = from > Long.MAX_VALUE - limit ? Long.MAX_VALUE : from + limit - 1;
        List<LogMessage> out = new ArrayList<>();
        try (Connection c = dataSource.getConnection(); PreparedStatement st = c.prepareStatement(READ_SEGMENTS)) {
            st.setLong(1, from);
            st.setLong(2, from);
            st.setLong(3, to);
            st.setObject(4, tenant);
            st.setString(5, queue);
            st.setString(6, partition);
            try (ResultSet rs = st.executeQuery()) {
                while (rs.next() && out.size() < limit) {
                    UUID partitionId = rs.getObject("partition_id", UUID.class);
                    long base = rs.getLong("base_offset");
                    List<Frame> frames = decode(rs.getBytes("blob"), partitionId, base, rs.getLong("end_offset"));
                    Instant createdAt = rs.getObject("created_at", OffsetDateTime.class).toInstant();
                    int first = (int) Math.min(frames.size(), Math.max(0, from - base)); // from may lie past this segment
                    for (int j = first; j < frames.size() && out.size() < limit; j++) {
                        out.add(new LogMessage(partitionId, partition, base + j, createdAt, frames.get(j)));
                    }
                }
            }
        }
        return out;
    }

    /** The last {@code n} messages of (tenant, queue, partition), in offset order. */
    public List<LogMessage> tail(UUID tenant, String queue, String partition, int n) throws SQLException {
        Optional<PartitionInfo> p = partitions(tenant, queue).stream().filter(i -> i.name().equals(partition)).findFirst();
        if (p.isEmpty() || p.get().lastOffset() < 0) {
            return List.of();
        }
        return read(tenant, queue, partition, Math.max(0, p.get().lastOffset() - n + 1), n);
    }

    /**
     * Where {@code txn} appears in a queue, over all its partitions: "was it sent?"
     * (docs/decisions.md#delete-not-mark-done). The
     * {@code log_txns} hashes are scanned first, in SQL, so only segments that hold a matching hash
     * travel and are decoded; each hit is then confirmed by decoding its frame and comparing the txn
     * (a hash match alone could be a collision). Ordered by partition name, then offset.
     *
     * <p>PRICE: the hash scan reads every {@code log_txns} row of the queue (16 bytes per message, no
     * index on hashes: the push would pay for one on every segment). Answering "was it sent?" is an
     * operator's question, not a hot path. A segment already removed by retention cannot confirm its
     * hash, so its hits are not reported.
     */
    public List<TxnHit> find(UUID tenant, String queue, String txn) throws SQLException {
        byte[] hash = TxnHash.of(txn);
        List<TxnHit> hits = new ArrayList<>();
        try (Connection c = dataSource.getConnection()) {
            List<Candidate> candidates = new ArrayList<>();
            try (PreparedStatement st = c.prepareStatement(TXN_CANDIDATES)) {
                st.setObject(1, tenant);
                st.setString(2, queue);
                st.setBytes(3, hash);
                try (ResultSet rs = st.executeQuery()) {
                    while (rs.next()) {
                        candidates.add(new Candidate(rs.getObject("partition_id", UUID.class), rs.getString("partition_name"),
                                rs.getLong("base_offset"), rs.getLong("end_offset"), rs.getBytes("hashes")));
                    }
                }
            }
            for (Candidate cand : candidates) {
                List<Integer> indexes = cand.matching(hash);
                if (!indexes.isEmpty()) {
                    confirm(c, cand, indexes, txn, hits);
                }
            }
        }
        return hits;
    }

    private void confirm(Connection c, Candidate cand, List<Integer> indexes, String txn, List<TxnHit> hits) throws SQLException {
        try (PreparedStatement st = c.prepareStatement(SEGMENT)) {
            st.setObject(1, cand.partitionId());
            st.setLong(2, cand.baseOffset());
            try (ResultSet rs = st.executeQuery()) {
                if (!rs.next()) {
                    return; // retention removed the segment: nothing to confirm
                }
                List<Frame> frames = decode(rs.getBytes("blob"), cand.partitionId(), cand.baseOffset(), rs.getLong("end_offset"));
                Instant createdAt = rs.getObject("created_at", OffsetDateTime.class).toInstant();
                for (int j : indexes) {
                    if (j < frames.size() && frames.get(j).txn().equals(txn)) {
                        hits.add(new TxnHit(cand.partitionId(), cand.partition(), cand.baseOffset() + j,
                                frames.get(j).messageId(), createdAt));
                    }
                }
            }
        }
    }

    private static List<Frame> decode(byte[] blob, UUID partitionId, long base, long end) {
        List<Frame> frames;
        try {
            frames = SegmentCodec.unpack(blob);
        } catch (CodecException e) {
            throw new CodecException("segment " + partitionId + "@" + base + ": " + e.getMessage(), e);
        }
        if (frames.size() != end - base + 1) {
            throw new CodecException("segment " + partitionId + "@" + base + " holds " + frames.size()
                    + " frames, its row says " + (end - base + 1));
        }
        return frames;
    }

    /** A log_txns row whose hashes contain the wanted hash somewhere (not necessarily aligned). */
    private record Candidate(UUID partitionId, String partition, long baseOffset, long endOffset, byte[] hashes) {

        List<Integer> matching(byte[] hash) {
            List<Integer> out = new ArrayList<>();
            for (int j = 0; (j + 1) * TxnHash.BYTES <= hashes.length; j++) {
                if (Arrays.equals(hashes, j * TxnHash.BYTES, (j + 1) * TxnHash.BYTES, hash, 0, TxnHash.BYTES)) {
                    out.add(j);
                }
            }
            return out;
        }
    }
}
