package io.queen.timers.bridge.ingest;

import io.queen.timers.bridge.apply.Incoming;
import io.queen.timers.bridge.apply.OffsetAdvance;
import io.queen.timers.bridge.fetch.CommandSource;
import io.queen.timers.routes.TopicRoutes;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import org.apache.kafka.common.TopicPartition;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Where each assigned command partition is read from, and why one is not read: the consumer's half of the bridge's
 * at-least-once. Positions come from {@code queen.bridge_offsets} ({@link OffsetStore}), which each batch advances in the
 * same transaction as its timers; Kafka's committed offsets play no part, so a position is never a second truth.
 *
 * <p>It keeps the stored next offset each partition was sought to ({@link #advances}: the apply's check-and-set, which
 * fences a zombie or a commit whose acknowledgement was lost), and it rewinds: after a failed or fenced apply, or a
 * rebalance, every partition pauses and is sought again to its stored offset ({@link #resync}), so nothing is skipped
 * and a record applied twice is caught by the fence. A partition is not read while its stored offset is out of range
 * ({@link #stopOutOfRange}: never auto-reset), while the group has none there and bridge.start.position is not set
 * ({@link #firstOffsets}), or while its jwt topic's timestamps are unsafe ({@link #hold}).
 *
 * <p>PRICE: the stored offsets are read again at every rewind (one query), and every 2 s ({@code STOPPED_CHECK}) while a
 * partition is stopped or waiting. Not thread-safe: the ingest loop's thread only, except
 * {@link #stoppedPartitions()} and {@link #waiting()}, read by readiness and a gauge from any thread.
 */
final class PartitionPositions {

    private static final Logger LOG = LoggerFactory.getLogger(PartitionPositions.class);
    /** How often a stopped partition's stored offset is read again. */
    private static final Duration STOPPED_CHECK = Duration.ofSeconds(2);

    private final CommandSource source;
    private final OffsetStore offsets;
    private final List<String> topics;
    private final TopicRoutes routes;
    /** bridge.start.position: earliest, latest, or null (unset). */
    private final String startPosition;
    /** The stored next offset each assigned partition was sought to (null value: none stored yet). */
    private final Map<TopicPartition, Long> expected = new HashMap<>();
    /** Partitions stopped on an out-of-range stored offset, and that offset. Read by {@link #stoppedPartitions()} from any thread. */
    private final Map<TopicPartition, Long> stopped = new ConcurrentHashMap<>();
    /**
     * Partitions with no stored offset that hold records, waiting (paused) because bridge.start.position is not set,
     * and the log range they hold. Read by {@link #stoppedPartitions()} from any thread.
     */
    private final Map<TopicPartition, String> unstarted = new ConcurrentHashMap<>();
    /** jwt topics whose timestamp settings are unsafe: their partitions stay paused (never rejected) until safe. */
    private Set<String> held = Set.of();
    private long stoppedCheckAtNanos = System.nanoTime();
    private boolean resync = true;
    private long retryAtNanos = System.nanoTime();

    PartitionPositions(CommandSource source, OffsetStore offsets, List<String> topics, TopicRoutes routes,
                       String startPosition) {
        this.source = source;
        this.offsets = offsets;
        this.topics = List.copyOf(topics);
        this.routes = routes;
        this.startPosition = startPosition;
    }

    /** True when the partitions wait to be sought to their stored offsets and the wait after the last failure is over. */
    boolean resyncDue() {
        return resync && System.nanoTime() - retryAtNanos >= 0;
    }

    /** True from a rewind (or an assignment) until the next {@link #resync} succeeds. */
    boolean resyncPending() {
        return resync;
    }

    /**
     * Seek every assigned partition to its stored offset and resume. A partition with none stored gets its first one
     * ({@link #firstOffsets}); one that cannot be given one yet stays paused. When it throws (the stored offsets cannot
     * be read), nothing was resumed: the caller {@link #rewind}s after its backoff.
     */
    void resync() throws SQLException {
        Collection<TopicPartition> assigned = source.assignment();
        Map<TopicPartition, Long> stored = offsets.load(topics);
        List<TopicPartition> none = assigned.stream().filter(tp -> !stored.containsKey(tp)).toList();
        if (!none.isEmpty()) {
            stored.putAll(firstOffsets(none));
        }
        expected.clear();
        for (TopicPartition tp : assigned) {
            Long s = stored.get(tp);
            if (s != null) {
                source.seek(tp, s);
                if (unstarted.remove(tp) != null) {
                    LOG.warn("partition {} starts at stored offset {}, set on purpose", tp, s);
                }
            }
            expected.put(tp, s);
        }
        List<TopicPartition> resumed = new ArrayList<>();
        for (TopicPartition tp : assigned) {
            Long was = stopped.get(tp);
            if (was != null && !was.equals(stored.get(tp))) {
                stopped.remove(tp);
                LOG.warn("partition {} resumes at stored offset {}, set on purpose (it was stopped at out-of-range offset {})",
                        tp, stored.get(tp), was);
            }
            if (!stopped.containsKey(tp) && !unstarted.containsKey(tp) && !held.contains(tp.topic())) {
                resumed.add(tp);
            }
        }
        source.resume(resumed);
        if (!assigned.isEmpty()) {
            LOG.info("consuming {} from the stored offsets {}", assigned, describe(assigned));
        }
        resync = false;
    }

    /**
     * The first stored offset of partitions where the group has none. Kafka never chooses it (auto.offset.reset=none):
     * an empty partition starts at its log start; one holding records where bridge.start.position says (its log start,
     * or its end with an offset_moved audit event), and without that setting it is left out and waits, paused, named by
     * readiness ({@link #stoppedPartitions()}): a new or mistyped group id must not replay a topic, nor skip it, without
     * a decision. Each is stored at once, so a restart before the first batch does not decide again.
     */
    private Map<TopicPartition, Long> firstOffsets(List<TopicPartition> none) throws SQLException {
        Duration t = Duration.ofSeconds(10);
        Map<TopicPartition, Long> begin = source.beginningOffsets(none, t);
        Map<TopicPartition, Long> end = source.endOffsets(none, t); // the last stable offset under read_committed
        Map<TopicPartition, Long> out = new HashMap<>();
        for (TopicPartition tp : none) {
            long b = begin.get(tp);
            long e = Math.max(b, end.get(tp));
            if (e == b) {
                out.put(tp, offsets.start(tp, b, "empty", b, e, routes.route(tp.topic()).tenant()));
                unstarted.remove(tp);
            } else if (startPosition == null) {
                if (unstarted.put(tp, b + ".." + (e - 1)) == null) {
                    LOG.error("partition {} WAITS: group {} has no stored offset there and it holds records {}..{}; set {}=earliest"
                            + " (apply them) or latest (skip them), or `queen-timers offsets set --group {} --topic {} --partition {}"
                            + " --offset N --reason ...`", tp, offsets.groupId(), b, e - 1, "bridge.start.position",
                            offsets.groupId(), tp.topic(), tp.partition());
                }
                // a position, or every poll throws NoOffsetForPartitionException and the other partitions stop too;
                // paused (never resumed while it waits), so nothing of it is fetched
                source.seek(tp, b);
                stoppedCheckAtNanos = System.nanoTime() + STOPPED_CHECK.toNanos();
            } else {
                long first = offsets.start(tp, "latest".equals(startPosition) ? e : b, startPosition, b, e, routes.route(tp.topic()).tenant());
                LOG.warn("partition {}: group {} had no stored offset; bridge.start.position={} starts it at {} (the log holds {}..{})",
                        tp, offsets.groupId(), startPosition, first, b, e - 1);
                out.put(tp, first);
                unstarted.remove(tp);
            }
        }
        return out;
    }

    /**
     * Pause every assigned partition and seek them to their stored offsets again once {@code after} has passed: what a
     * failed or fenced apply and a failed resync do, so the loop never skips.
     */
    void rewind(Duration after) {
        source.pause(source.assignment());
        resync = true;
        retryAtNanos = System.nanoTime() + after.toNanos();
    }

    /**
     * The stored offset of these partitions is outside the log (topic recreated, or retention passed
     * it). Kafka would jump to one end and drop or replay commands without a verdict; instead the
     * partition stops here, loudly, until an operator sets its offset on purpose
     * ({@code queen-timers offsets set}, docs/commands.md). The other partitions go on.
     */
    void stopOutOfRange(Map<TopicPartition, Long> outOfRange) {
        for (Map.Entry<TopicPartition, Long> e : outOfRange.entrySet()) {
            TopicPartition tp = e.getKey();
            source.pause(List.of(tp));
            if (stopped.put(tp, e.getValue()) == null) {
                LOG.error("partition {} STOPPED: its stored offset {} (group {}) is out of range{}; nothing is skipped on its own:"
                        + " move it on purpose with `queen-timers offsets set --group {} --topic {} --partition {} --offset N --reason ...`",
                        tp, e.getValue(), offsets.groupId(), logRange(tp), offsets.groupId(), tp.topic(), tp.partition());
            }
        }
        stoppedCheckAtNanos = System.nanoTime() + STOPPED_CHECK.toNanos();
    }

    private String logRange(TopicPartition tp) {
        try {
            Duration t = Duration.ofSeconds(5);
            return " (the log holds " + source.beginningOffsets(List.of(tp), t).get(tp) + ".." + source.endOffsets(List.of(tp), t).get(tp) + ")";
        } catch (RuntimeException e) {
            return "";
        }
    }

    /** Once a poll: re-reads the stored offsets every {@link #STOPPED_CHECK}: a stopped (or unstarted) partition resumes once an operator set its offset. */
    void recheckStopped() {
        if ((!stopped.isEmpty() || !unstarted.isEmpty()) && !resync && System.nanoTime() - stoppedCheckAtNanos >= 0) {
            resync = true;
            retryAtNanos = System.nanoTime();
            stoppedCheckAtNanos = System.nanoTime() + STOPPED_CHECK.toNanos();
        }
    }

    /**
     * The jwt topics whose timestamp settings are unsafe now: their assigned partitions are paused (their records
     * wait in Kafka, none is rejected: they would be lost), a topic safe again resumes where it paused.
     */
    void hold(Set<String> now) {
        Set<String> was = held;
        held = now;
        List<TopicPartition> pause = new ArrayList<>();
        List<TopicPartition> resume = new ArrayList<>();
        for (TopicPartition tp : source.assignment()) {
            if (now.contains(tp.topic())) {
                pause.add(tp);
            } else if (was.contains(tp.topic()) && !resync && !stopped.containsKey(tp) && !unstarted.containsKey(tp)) {
                resume.add(tp); // paused with its position: it goes on from there (a pending resync resumes it otherwise)
            }
        }
        source.pause(pause);
        source.resume(resume);
    }

    /** The stored offset {@code tp} is read from, or null when it is not read (stopped, waiting, held, none stored). */
    Long readFrom(TopicPartition tp) {
        if (stopped.containsKey(tp) || unstarted.containsKey(tp) || held.contains(tp.topic())) {
            return null;
        }
        return expected.get(tp);
    }

    /** One offset advance per partition of {@code batch}, from the offset it was sought (or last committed) to. */
    List<OffsetAdvance> advances(List<Incoming> batch) {
        Map<TopicPartition, Long> last = new LinkedHashMap<>();
        for (Incoming in : batch) {
            last.put(new TopicPartition(in.source().topic(), in.source().partition()), in.source().offset());
        }
        List<OffsetAdvance> out = new ArrayList<>(last.size());
        last.forEach((tp, offset) -> out.add(new OffsetAdvance(tp.topic(), tp.partition(), expected.get(tp), offset + 1)));
        return out;
    }

    /** The {@code advances} were committed: the next batch of each partition is checked against them. */
    void advanced(List<OffsetAdvance> advances) {
        advances.forEach(a -> expected.put(new TopicPartition(a.topic(), a.partition()), a.next()));
    }

    /** Newly assigned partitions wait, paused, until the loop has sought them to their stored offsets. */
    void assigned(Collection<TopicPartition> partitions) {
        source.pause(partitions);
        resync = true;
    }

    /** Revoked or lost partitions: another member reads them now, and their next apply here would be fenced. */
    void forget(Collection<TopicPartition> partitions) {
        expected.keySet().removeAll(partitions);
        stopped.keySet().removeAll(partitions);
        unstarted.keySet().removeAll(partitions);
    }

    /** Partitions stopped or waiting for an offset. Any thread. */
    int waiting() {
        return stopped.size() + unstarted.size();
    }

    /**
     * Empty while no partition is stopped; otherwise which, at which stored offset, and what to do. A stopped
     * partition never resumes on its own, so readiness reports it at once rather than after
     * {@code health.failing.after} like a passing failure. Any thread.
     */
    Optional<String> stoppedPartitions() {
        if (stopped.isEmpty() && unstarted.isEmpty()) {
            return Optional.empty();
        }
        StringBuilder b = new StringBuilder();
        if (!stopped.isEmpty()) {
            b.append("stopped on an out-of-range stored offset (set it with `queen-timers offsets set`):");
            stopped.forEach((tp, offset) -> b.append(' ').append(tp).append('@').append(offset));
        }
        if (!unstarted.isEmpty()) {
            b.append(b.length() == 0 ? "" : "; ").append("waiting: no stored offset of group ").append(offsets.groupId())
                    .append(" in partitions that hold records (set bridge.start.position=earliest or latest, or `queen-timers offsets set`):");
            unstarted.forEach((tp, range) -> b.append(' ').append(tp).append(" holds ").append(range));
        }
        return Optional.of(b.toString());
    }

    private String describe(Collection<TopicPartition> assigned) {
        StringBuilder b = new StringBuilder();
        for (TopicPartition tp : assigned) {
            Long e = expected.get(tp);
            b.append(b.length() == 0 ? "" : ", ").append(tp).append('@').append(e == null ? "waiting" : e);
        }
        return b.toString();
    }
}
