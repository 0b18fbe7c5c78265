package io.queen.timers.sweeper.loop;

import io.queen.timers.core.health.LoopProgress;
import io.queen.timers.core.db.ErrorClass;
import io.queen.timers.core.db.SqlStates;
import io.queen.timers.core.logging.TimerMdc;
import io.queen.timers.sweeper.claim.ClaimedTimer;
import io.queen.timers.sweeper.claim.Claimer;
import io.queen.timers.sweeper.probe.DueProbe;
import io.queen.timers.sweeper.probe.ProbeResult;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One sweep loop: probe → claim → deliver (group, pack, fire, fail) → sleep. Leaderless: any number of
 * loops in any number of processes; they meet only in SKIP LOCKED.
 *
 * <p>A cycle claims batch after batch while claims come back full, until it holds a fire's worth of bytes
 * ({@code sweeper.max.fire.bytes}), {@code sweeper.cycle.claim.max} (50 ms) has passed since its first claim,
 * or half the lease, and only then packs and fires. Accumulating is what makes segments large under a backlog (a claim of 200 spread over
 * 100 queues would otherwise push 100 segments of two frames each) and what makes one fire carry
 * thousands of timers; stopping at half the lease leaves the first claim at least half its lease for the
 * fire. PRICE: under a backlog the first timers claimed wait for the last claims of the cycle, bounded by
 * {@code sweeper.cycle.claim.max}: without that bound a cycle under another tenant's flood claimed for
 * seconds (8 MiB of timers) before firing, so a quiet tenant's due timers, claimed in its first claim, were
 * a second late (TenantFloodBench); the bound makes the segments of a backlog smaller (more fire
 * transactions per timer). With no backlog the first claim comes back short and is fired at once.
 *
 * <p>A cycle after one that fired claims without probing first, as long as the last probe is younger than
 * {@code sweeper.sleep.near}: under a stream the probe only told it what the claim finds anyway (PipelineBench
 * --mode steady 2,000/s: a probe per cycle, ~3,000 in 60 s, 50-55 µs of statement time per timer). A claim that
 * finds nothing sends the next cycle back to the probe, which paces the sleep. PRICE: the due and oldest-late
 * gauges are as old as the last probe, up to sweeper.sleep.near (1 s) while the loop works.
 *
 * <p>While another tenant has work near, the claim holds each tenant to its fire budget ({@code sweeper.tenant.fires.per.second},
 * {@link io.queen.timers.sweeper.claim.FireBudget}): a claim comes back short, so the cycle fires at once and stays short,
 * and the quiet tenant's timer waits for a short cycle. A cycle that claimed nothing while a tenant is held waits until
 * that tenant has a few rows' worth of budget again (a fifth of its burst), not for a probe.
 */
public final class SweepLoop implements Runnable {

    private static final Logger LOG = LoggerFactory.getLogger(SweepLoop.class);

    private final DueProbe probe;
    private final Claimer claimer;
    private final Delivery delivery;
    private final Pacer pacer;
    private final WakeSignal wake;
    private final SweeperMetrics metrics;
    private final int maxFireBytes;
    private final long claimMaxNanos;
    private final LoopProgress progress;
    private final FireGate gate;
    private final SuspectPolicy suspects;
    private volatile boolean stopping;
    private boolean deploymentBroken;
    /** The last cycle claimed something, and when the last probe ran: see the class comment. */
    private boolean worked;
    private long probedAtNanos;
    private final long probeEveryNanos;
    /** What this loop has claimed in the cycle under way (keys and tokens, no payloads). */
    private final List<ClaimedTimer> inHand = new ArrayList<>();
    /** What a failed cycle left in this loop's hands: handed back before anything else (see {@link #handBackOwed}). */
    private List<ClaimedTimer> owed = List.of();

    /**
     * What a loop works with. {@code gate} is shared by every loop of the process (suspects fire holding it alone), as are
     * the wake signal and the metrics.
     */
    public record Parts(DueProbe probe, Claimer claimer, Delivery delivery, Pacer pacer, WakeSignal wake, SweeperMetrics metrics,
                        FireGate gate) {}

    /**
     * @param maxFireBytes sweeper.max.fire.bytes: a cycle claims up to this many held bytes
     * @param claimMax     sweeper.cycle.claim.max: how long a cycle keeps claiming before it fires (null: half the lease only)
     * @param maxAttempts  sweeper.max.attempts: a suspect at it is dead-lettered, not fired ({@link SuspectPolicy})
     */
    public SweepLoop(Parts parts, int maxFireBytes, Duration claimMax, int maxAttempts, LoopProgress progress) {
        this.claimMaxNanos = claimMax == null ? Long.MAX_VALUE : claimMax.toNanos();
        this.probeEveryNanos = parts.pacer().near().toNanos();
        this.gate = parts.gate();
        this.suspects = new SuspectPolicy(maxAttempts);
        this.probe = parts.probe();
        this.claimer = parts.claimer();
        this.delivery = parts.delivery();
        this.pacer = parts.pacer();
        this.wake = parts.wake();
        this.metrics = parts.metrics();
        this.maxFireBytes = maxFireBytes;
        this.progress = progress;
    }

    /** One cycle; returns how long to sleep before the next. */
    Duration cycle() throws SQLException {
        handBackOwed();
        inHand.clear();
        if (!worked || System.nanoTime() - probedAtNanos >= probeEveryNanos) {
            worked = false;
            ProbeResult p = probe.probe();
            probedAtNanos = System.nanoTime();
            metrics.probed(p);
            if (p.due() == 0) {
                return pacer.afterProbe(p);
            }
        }
        Cycle c = gate.shared(this::claimAndDeliver);
        // nothing claimed while the fire budget holds a tenant: its rows are due, so the next cycle claims without probing,
        // after a wait for the budget (a probe, and a claim, every few milliseconds would find the same)
        Optional<Duration> held = c.claimed() == 0 ? claimer.heldFor() : Optional.empty();
        worked = c.claimed() > 0 || held.isPresent();
        Delivery.Report report = c.report();
        if (!c.group().isEmpty()) {
            // nothing else of this process is in hand meanwhile (FireGate): if one of them kills it, the death
            // is counted against this group alone (SuspectPolicy)
            try (TimerMdc m = Delivery.mdc(c.group().get(0))) {
                LOG.warn("firing {} timer(s) a lease of which ran out in a sweeper's hands, alone in this process (first: {}, {} death(s),"
                        + " attempt {})", c.group().size(), c.group().get(0).name(), c.group().get(0).history().deaths(), c.group().get(0).history().attempts());
            }
            report = report.plus(gate.alone(() -> {
                if (c.group().size() == 1) {
                    // alone in the process: if its lease runs out now, the next claim blames it (one attempt)
                    delivery.holdAlone(c.group());
                }
                return delivery.deliver(c.group(), () -> stopping);
            }));
        }
        inHand.clear();   // delivered: fired, failed, released or handed back, each by our token
        report.throwIfNothingFired();
        if (held.isPresent()) {
            metrics.heldByBudget();
            return pacer.afterHeld(held.get());
        }
        return pacer.afterWork();
    }

    /**
     * A cycle that failed (most often: the database went away mid-fire, so neither the fire nor the fail nor the
     * release could run) leaves its timers leased in our hands. Left alone they would wait for the lease to run out
     * (30 s by default: a lateness incident after every database restart) and the next claim would count a death
     * against each. So the next cycle hands them back first, by token, before it probes: a timer that fired, failed or
     * was taken by another sweeper meanwhile no longer carries our token and is not touched. If the database is still
     * away this throws and the loop retries after its backoff; after the lease ran out and another sweeper took them,
     * nothing is ours to release and the list is dropped.
     */
    private void handBackOwed() throws SQLException {
        if (owed.isEmpty()) {
            return;
        }
        int released = delivery.handBackCounting(owed);
        if (released > 0) {
            LOG.info("handed back {} timer(s) a failed cycle left leased in this loop's hands (no death counted)", released);
        }
        owed = List.of();
    }

    /** Keys and tokens of timers just claimed, without their payloads (what a hand-back needs, nothing it holds). */
    private void holding(List<ClaimedTimer> timers) {
        for (ClaimedTimer t : timers) {
            inHand.add(t.keyAndToken());
        }
    }

    /** What the shared part of a cycle did, and the group of suspects still in hand to fire alone. */
    private record Cycle(Delivery.Report report, List<ClaimedTimer> group, int claimed) {}

    /** Claims (see the class comment), fires the claim's ordinary timers, hands back the suspects beyond one group. */
    private Cycle claimAndDeliver() throws SQLException {
        long start = System.nanoTime();
        long claimFor = Math.min(claimer.lease().toNanos() / 2, claimMaxNanos);
        List<ClaimedTimer> claimed = new ArrayList<>();
        long bytes = 0;
        int got;
        do {
            long t0 = System.nanoTime();
            // bounded by decompressed bytes in SQL, so a burst of large payloads never exceeds what a
            // cycle may hold; only the first claim of a cycle may bring back one timer larger than that, alone
            Claimer.Claim claim = claimer.claim(maxFireBytes - bytes, claimed.isEmpty());
            metrics.claimTimer().record(Duration.ofNanos(System.nanoTime() - t0));
            got = claim.timers().size();
            holding(claim.timers());
            claimed.addAll(claim.timers());
            bytes += claim.heldBytes();
        } while (got >= claimer.fullClaim() && bytes < maxFireBytes && !stopping && System.nanoTime() - start < claimFor);
        long claimedAt = System.nanoTime();
        SuspectPolicy.Split split = suspects.split(claimed);
        Delivery.Report report;
        try {
            delivery.handBack(split.later());
            report = delivery.deliver(split.normal(), () -> stopping);
        } catch (SQLException | RuntimeException e) {
            try {
                delivery.handBack(split.group()); // unspent: a lease left to run out would count as a death
            } catch (SQLException | RuntimeException suppressed) {
                e.addSuppressed(suppressed);
            }
            throw e;
        }
        if (LOG.isDebugEnabled()) {
            LOG.debug("cycle: {} timers ({} bytes) claimed in {} ms (last claim {} of {}), delivered in {} ms", claimed.size(), bytes,
                    (claimedAt - start) / 1_000_000, got, claimer.batchSize(), (System.nanoTime() - claimedAt) / 1_000_000);
        }
        return new Cycle(report, split.group(), claimed.size());
    }

    /**
     * Cycles until stopped. A cycle that fails is retried after a backoff and recorded in its {@link io.queen.timers.core.health.LoopProgress};
     * a broken deployment (SQLSTATE 42883, 42P01, 42703, 42501) pauses the same way, with the timers handed back
     * unspent by {@link Delivery}. An {@link Error} is not caught, even when the driver wrapped it in an
     * SQLException: it ends the thread, and the owner of the thread stops the process.
     */
    @Override
    public void run() {
        while (!stopping) {
            long seen = wake.generation();
            Duration sleep;
            progress.begin();
            try {
                sleep = cycle();
                if (worked) {
                    progress.completed();
                } else {
                    // nothing claimed: timers whose fire waited on a held lock may be backing off (LoopProgress.idle)
                    progress.idle(delivery.transientBackoff().plus(pacer.near()));
                }
                if (deploymentBroken) {
                    deploymentBroken = false;
                    progress.impaired(null);
                }
            } catch (SQLException | RuntimeException e) {
                Error fatal = SqlStates.fatalCause(e);
                if (fatal != null) {
                    throw fatal;
                }
                if (!inHand.isEmpty()) {
                    List<ClaimedTimer> left = new ArrayList<>(owed);
                    left.addAll(inHand);
                    owed = left;
                    inHand.clear();
                }
                ErrorClass c = SqlStates.classify(e);
                String reason = describe(e);
                progress.failed(reason);
                if (c == ErrorClass.DEPLOYMENT) {
                    // said at once, not after health.failing.after: nothing fires until an operator acts
                    deploymentBroken = true;
                    progress.impaired("paused: the deployment is broken, not the timers (no attempt spent, nothing"
                            + " dead-lettered; fix the schema or the grants): " + reason);
                }
                sleep = pacer.afterError();
                if (c == ErrorClass.DEPLOYMENT) {
                    LOG.error("sweeping paused: the deployment is broken, not the timers ({}); no attempt spent; next try in {} ms",
                            reason, sleep.toMillis());
                } else {
                    LOG.warn("sweep cycle failed ({}); next try in {} ms", reason, sleep.toMillis());
                }
            }
            if (!sleep.isZero() && !stopping) {
                try {
                    wake.awaitChange(seen, sleep);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    return;
                }
            }
        }
        try {
            handBackOwed();   // stopping: what a failed cycle left leased would otherwise wait for its lease
        } catch (SQLException | RuntimeException e) {
            LOG.warn("stopping: could not hand back {} timer(s) a failed cycle left leased ({}); they return after their lease",
                    owed.size(), describe(e));
        }
    }

    private static String describe(Exception e) {
        SQLException sql = SqlStates.find(e);
        return sql != null ? "SQLSTATE " + sql.getSQLState() + ": " + sql.getMessage() : e.toString();
    }

    /** Asks the loop to stop after the fire in flight; the caller wakes it and joins its thread. */
    public void stop() {
        stopping = true;
    }
}
