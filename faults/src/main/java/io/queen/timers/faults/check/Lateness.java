package io.queen.timers.faults.check;

import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.PriorityQueue;
import java.util.UUID;

/**
 * The lateness bounds (docs/fault-harness.md "Lateness"), judged on the whole path: from the send to the fire, and from
 * the fire to its audit event.
 *
 * <ul>
 *   <li><b>The fire</b>: from the command's own instant (its {@code deliverAt}, or the record's timestamp plus
 *       {@code delayMs}; a series' occurrence Oi), or from the send when that instant was already past, to the
 *       {@code created_at} of the segment that carries it (PostgreSQL's clock, the fire's transaction). Everything the
 *       product does is inside: the broker taking the record, the bridge staging it, the sweeper firing it.</li>
 *   <li><b>Its audit event</b>: from that {@code created_at} to when the harness's consumer ({@link AuditWatch}) first
 *       read the {@code fired} event.</li>
 * </ul>
 *
 * One rule for both, derived from the faults as they were carried out ({@link FaultTimeline}): the part of the delay
 * that lies outside every fault and its recovery budget must be within {@link #FREE_MAX_MS}; and over the fires (and
 * events) that met no fault at all, the p99 must be within {@link #FREE_P99_MS}. A run with faults ends with a
 * fault-free tail (FaultHarness), so the second bound bites on every run; {@code minFaultFree} says how many such fires
 * the run must have judged.
 *
 * <p>The harness's own observations ({@link LogWatch}: when it first saw each timer version staged and each frame in the
 * log) are reported beside, never judged: the staging's delay after the send is the bridge's share of a late fire,
 * and the sighting's delay after {@code created_at} the commit's and the watch's poll.
 *
 * <p>PRICE: {@code created_at} is the fire transaction's start, so a fire that stood still between its stamp and its commit
 * (a sweeper stopped inside it) is judged by its stamp; the sighting beside it shows such a gap. The audit event's delay
 * includes the harness consumer's own (its 200 ms poll), counted against the product.
 */
final class Lateness {

    /** Fault-free, each fire (and each fired event after its fire), and the time a late one spent outside the faults. */
    static final long FREE_MAX_MS = 3_000;
    /** Fault-free, the p99 of fires (and of fired events after their fire). */
    static final long FREE_P99_MS = 1_000;

    static final String LATE = "fired late from the send (beyond the bound the faults allow)";
    static final String FREE_P99 = "fault-free lateness from the send: p99 over the bound";
    static final String AUDIT_LATE = "fired events late after the fire (beyond the bound the faults allow)";
    static final String AUDIT_FREE_P99 = "fault-free fired events after the fire: p99 over the bound";
    static final String UNOBSERVED = "fired events the harness's consumer did not read";
    static final String TOO_FEW = "fault-free fires judged: fewer than the run requires";

    static final int SLOWEST = 5;

    private final Findings f;
    private Map<String, Long> readAt;
    private Map<UUID, Long> seenAt = Map.of();
    private Map<String, Long> stagedAt = Map.of();
    private FaultTimeline faults = FaultTimeline.none();
    private int minFaultFree;
    private final List<Long> all = new ArrayList<>();
    private final List<Long> underFaults = new ArrayList<>();
    private final List<Long> free = new ArrayList<>();
    private final List<Long> audit = new ArrayList<>();
    private final List<Long> auditFree = new ArrayList<>();
    private final List<Long> staging = new ArrayList<>();
    private final List<Long> sighting = new ArrayList<>();
    /** The latest fires, whatever the bound said: where a tail comes from is read from them (the run's logs kept). */
    private final PriorityQueue<Slow> slowest = new PriorityQueue<>(Comparator.comparingLong(Slow::lateMs));
    private final PriorityQueue<Slow> slowestAudit = new PriorityQueue<>(Comparator.comparingLong(Slow::lateMs));

    private record Slow(long lateMs, String how) {}

    Lateness(Findings f) {
        this.f = f;
        for (String k : List.of(LATE, FREE_P99, AUDIT_LATE, AUDIT_FREE_P99, UNOBSERVED, TOO_FEW)) {
            f.declare(k);
        }
    }

    /**
     * @param readAt       when the harness's consumer first read each event, by eventId (harness clock, epoch ms)
     * @param seenAt       when the harness's log watch first saw each message's frame (reported, not judged)
     * @param stagedAt     when it first saw each staged version ({@link LogWatch#staging}; reported, not judged)
     * @param faults       the impaired time of the run's faults
     * @param minFaultFree how many fault-free fires the run must judge (0: no requirement)
     */
    void observed(Map<String, Long> readAt, Map<UUID, Long> seenAt, Map<String, Long> stagedAt, FaultTimeline faults, int minFaultFree) {
        this.readAt = readAt;
        this.seenAt = seenAt;
        this.stagedAt = stagedAt;
        this.faults = faults;
        this.minFaultFree = minFaultFree;
    }

    boolean judged() {
        return readAt != null;
    }

    /**
     * One fire.
     *
     * @param kind       the violation a late fire is reported under ({@link #LATE}, or the recurring one)
     * @param sentMs     the record's timestamp (the producer's clock at the send)
     * @param intendedMs the command's own instant, or the occurrence's
     * @param createdMs  the created_at of the segment that carries the fire
     * @param firedEvent the eventId of its fired event (null: none, reported elsewhere)
     */
    void fire(String kind, String at, long sentMs, long intendedMs, long createdMs, UUID messageId, String txn, String firedEvent) {
        long from = Math.max(sentMs, intendedMs);
        long late = Math.max(0, createdMs - from);
        long excused = faults.impaired(from, createdMs);
        boolean clear = faults.clear(from, createdMs);
        all.add(late);
        (clear ? free : underFaults).add(late);
        Long staged = stagedAt.get(LogWatch.staging(messageId, txn));
        if (staged != null) {
            staging.add(staged - sentMs);
        }
        Long seen = seenAt.get(messageId);
        if (seen != null) {
            sighting.add(seen - createdMs);
        }
        String how = at + ": created_at " + late + " ms after " + (from == intendedMs ? "its time " : "its send ") + Instant.ofEpochMilli(from)
                + (excused > 0 ? " (" + excused + " ms of it within faults and their recovery)" : " (no fault)")
                + (staged != null ? ", staged " + (staged - sentMs) + " ms after the send" : "");
        keep(slowest, new Slow(late, how));
        if (readAt == null) {
            return; // a checker without the run's observations (a test of the readers) reports, and judges nothing here
        }
        if (late - excused > FREE_MAX_MS) {
            f.violation(kind, how + ": " + (late - excused) + " ms outside them, bound " + FREE_MAX_MS + " ms");
        }
        if (firedEvent == null) {
            return;
        }
        Long read = readAt.get(firedEvent);
        if (read == null) {
            f.violation(UNOBSERVED, at + ": its fired event " + firedEvent);
            return;
        }
        long delay = Math.max(0, read - createdMs);
        long auditExcused = faults.impaired(createdMs, read);
        audit.add(delay);
        if (faults.clear(createdMs, read)) {
            auditFree.add(delay);
        }
        String auditHow = at + ": fired event read " + delay + " ms after created_at " + Instant.ofEpochMilli(createdMs)
                + (auditExcused > 0 ? " (" + auditExcused + " ms of it within faults and their recovery)" : " (no fault)");
        keep(slowestAudit, new Slow(delay, auditHow));
        if (delay - auditExcused > FREE_MAX_MS) {
            f.violation(AUDIT_LATE, auditHow + ": " + (delay - auditExcused) + " ms outside them, bound " + FREE_MAX_MS + " ms");
        }
    }

    private static void keep(PriorityQueue<Slow> heap, Slow s) {
        heap.add(s);
        if (heap.size() > SLOWEST) {
            heap.poll();
        }
    }

    void summarize() {
        for (List<Long> l : List.of(all, underFaults, free, audit, auditFree, staging, sighting)) {
            l.sort(null);
        }
        f.fact("faults: outages, their own time s, impaired time s (each + " + FaultTimeline.RECOVERY_MS / 1000 + " s recovery)",
                faults.outages() + ", " + faults.outageMs() / 1000 + ", " + faults.impairedMs() / 1000);
        f.fact("lateness from the send to created_at: fires judged", all.size());
        f.fact("  all p50 / p99 / max ms", figures(all));
        f.fact("  under faults: fires, p50 / p99 / max ms", underFaults.size() + ", " + figures(underFaults));
        f.fact("  fault-free: fires, p50 / p99 / max ms", free.size() + ", " + figures(free));
        f.fact("  staged after the send (log watch: the bridge's share) p50 / p99 / max ms", figures(staging));
        f.fact("  seen in the log after created_at (log watch) p50 / p99 / max ms", figures(sighting));
        if (readAt == null) {
            f.fact("fired event after created_at", "not judged (no live observation)");
        } else {
            f.fact("fired event after created_at: all p50 / p99 / max ms", figures(audit));
            f.fact("  fault-free: events, p50 / p99 / max ms", auditFree.size() + ", " + figures(auditFree));
        }
        list("slowest fire ", slowest);
        list("slowest fired event ", slowestAudit);
        if (readAt == null) {
            return;
        }
        if (!free.isEmpty() && p(free, 0.99) > FREE_P99_MS) {
            f.violation(FREE_P99, "p99 " + p(free, 0.99) + " ms over " + free.size() + " fault-free fires, bound " + FREE_P99_MS + " ms");
        }
        if (!auditFree.isEmpty() && p(auditFree, 0.99) > FREE_P99_MS) {
            f.violation(AUDIT_FREE_P99, "p99 " + p(auditFree, 0.99) + " ms over " + auditFree.size() + " fault-free fired events, bound "
                    + FREE_P99_MS + " ms");
        }
        if (free.size() < minFaultFree) {
            f.violation(TOO_FEW, free.size() + " fault-free fires judged, the run requires " + minFaultFree
                    + " (its fault-free tail: docs/fault-harness.md \"Lateness\")");
        }
    }

    private void list(String name, PriorityQueue<Slow> heap) {
        List<Slow> latestFirst = new ArrayList<>(heap);
        latestFirst.sort(Comparator.comparingLong(Slow::lateMs).reversed());
        int i = 0;
        for (Slow s : latestFirst) {
            f.fact(name + ++i, s.how());
        }
    }

    private static String figures(List<Long> sorted) {
        return p(sorted, 0.5) + " / " + p(sorted, 0.99) + " / " + p(sorted, 1);
    }

    static long p(List<Long> sorted, double q) {
        if (sorted.isEmpty()) {
            return 0;
        }
        return sorted.get((int) Math.min(sorted.size() - 1, Math.max(0, Math.ceil(sorted.size() * q) - 1)));
    }
}
