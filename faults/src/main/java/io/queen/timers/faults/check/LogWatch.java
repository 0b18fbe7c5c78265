package io.queen.timers.faults.check;

import io.queen.timers.faults.decode.DecodedFrame;
import io.queen.timers.faults.decode.IndependentSegmentDecoder;
import io.queen.timers.processes.PostgresProcess;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.LongSupplier;

/**
 * The harness's own clock on the database: a thread that reads {@code queen.log_segments} and {@code queen.log_timers}
 * every {@link #POLL_MS} while the run lasts, and notes when it first saw each message's frame committed in the log and
 * each staged version of a timer (message id and txn) in the staging table. The fire's lateness ({@link Lateness}) is
 * judged on these times: a fire is on time when it is in the log, which is what a Queen consumer reads, counted from
 * when it was staged if that came after its time; the audit events that tell of both travel through Kafka and are
 * judged on their own (the broker's outages are neither the bridge's nor the sweeper's).
 *
 * <p>It reads with the independent decoder, from each partition's next unseen offset, in one short transaction per
 * poll; a poll that fails (PostgreSQL restarting, the backend terminated) is retried on a new connection at the next
 * tick. PRICE: a fire is observed up to one poll plus the poll's own time late, counted against the product, and so is a
 * staging (in its favour, by as much; by a PostgreSQL outage's length when the staging fell in one); a second read of
 * every segment while the run lasts (a few thousand small segments) and a scan of the staging table's ids every poll
 * (the pending timers, a few thousand rows at most in a run).
 */
public final class LogWatch implements AutoCloseable {

    static final long POLL_MS = 200;
    /** New segments of every partition, from the offsets already read on (a parameter pair of arrays: id, next offset). */
    private static final String NEW_SEGMENTS = """
            SELECT p.id, s.base_offset, s.end_offset, s.blob
              FROM queen.log_partitions p
              LEFT JOIN unnest(?::uuid[], ?::bigint[]) AS seen(id, next_offset) ON seen.id = p.id
              JOIN LATERAL (SELECT base_offset, end_offset, blob FROM queen.log_segments s
                             WHERE s.partition_id = p.id AND s.base_offset >= coalesce(seen.next_offset, 0)
                             ORDER BY base_offset) s ON true
            """;

    /** Where the watch connects (a superuser of the run's database). */
    public interface Connect {
        Connection connect() throws SQLException;
    }

    private final Connect postgres;
    private final LongSupplier clock;
    private final Map<UUID, Long> firstSeen = new ConcurrentHashMap<>();
    private final Map<String, Long> stagedSeen = new ConcurrentHashMap<>();
    private final Map<UUID, Long> next = new HashMap<>();
    private final Thread thread;
    private volatile boolean stopping;
    private volatile long failedPolls;
    private volatile String lastError;

    LogWatch(Connect postgres, LongSupplier clock) {
        this.postgres = postgres;
        this.clock = clock;
        this.thread = new Thread(this::run, "log-watch");
        thread.setDaemon(true);
    }

    /** Starts watching the log of {@code postgres} (its schema must exist). */
    public static LogWatch start(PostgresProcess postgres) {
        LogWatch w = new LogWatch(postgres::connect, System::currentTimeMillis);
        w.thread.start();
        return w;
    }

    private void run() {
        Connection c = null;
        while (!stopping) {
            try {
                if (c == null) {
                    c = postgres.connect();
                    c.setAutoCommit(false);
                }
                poll(c);
            } catch (SQLException | RuntimeException e) {
                failedPolls++;
                lastError = e.toString();
                close(c);
                c = null;
            }
            try {
                Thread.sleep(POLL_MS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                break;
            }
        }
        close(c);
    }

    private void poll(Connection c) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement("SELECT message_id, txn FROM queen.log_timers");
             ResultSet rs = ps.executeQuery()) {
            long now = clock.getAsLong();
            while (rs.next()) {
                stagedSeen.putIfAbsent(staging(rs.getObject(1, UUID.class), rs.getString(2)), now);
            }
        }
        try (PreparedStatement ps = c.prepareStatement(NEW_SEGMENTS)) {
            ps.setArray(1, c.createArrayOf("uuid", next.keySet().toArray()));
            ps.setArray(2, c.createArrayOf("bigint", next.values().toArray()));
            try (ResultSet rs = ps.executeQuery()) {
                long now = clock.getAsLong();
                while (rs.next()) {
                    UUID partition = rs.getObject(1, UUID.class);
                    byte[] blob = rs.getBytes(4);
                    next.put(partition, rs.getLong(3) + 1);
                    try {
                        for (DecodedFrame frame : IndependentSegmentDecoder.decode(blob)) {
                            firstSeen.putIfAbsent(frame.messageId(), now);
                        }
                    } catch (RuntimeException undecodable) {
                        // the checker's own read of the log reports it; its frames have no time to judge
                    }
                }
            }
        } finally {
            c.rollback();
        }
    }

    /** Stops watching (after the run settled: every fire committed) and returns when each message was first seen. */
    public Map<UUID, Long> stop() throws InterruptedException, SQLException {
        stopping = true;
        thread.join(Duration.ofSeconds(30).toMillis());
        if (thread.isAlive()) {
            throw new IllegalStateException("the log watch did not stop within 30 s (last error: " + lastError + ")");
        }
        // a last read, so that a fire committed since the thread's last poll is seen (late, as it then is)
        pollOnce();
        return firstSeen;
    }

    /** One read on a connection of its own (the last one of a run; tests that drive the watch without its thread). */
    Map<UUID, Long> pollOnce() throws SQLException {
        try (Connection c = postgres.connect()) {
            c.setAutoCommit(false);
            poll(c);
        }
        return firstSeen;
    }

    /** When each staged version (see {@link #staging}) was first seen in the staging table; complete after {@link #stop}. */
    public Map<String, Long> stagedSeen() {
        return stagedSeen;
    }

    /** The key of one staged version of a timer: its message id and the txn of the command that staged it. */
    static String staging(UUID messageId, String txn) {
        return messageId + " " + txn;
    }

    /** Polls that failed (PostgreSQL down); a fact of the report. */
    public long failedPolls() {
        return failedPolls;
    }

    public String lastError() {
        return lastError;
    }

    @Override
    public void close() throws InterruptedException {
        stopping = true;
        thread.join(Duration.ofSeconds(30).toMillis());
    }

    private static void close(Connection c) {
        if (c != null) {
            try {
                c.close();
            } catch (SQLException ignored) {
                // a connection to a stopped server
            }
        }
    }
}
