package io.queen.timers.sweeper.loop;

import io.queen.timers.core.health.LoopProgress;
import io.queen.timers.core.db.ErrorClass;
import io.queen.timers.core.db.SqlStates;
import io.queen.timers.sweeper.claim.ClaimedTimer;
import io.queen.timers.sweeper.claim.Claimer;
import io.queen.timers.sweeper.probe.DueProbe;
import io.queen.timers.sweeper.probe.ProbeResult;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One sweep loop: probe → claim → deliver (group, pack, fire, fail) → sleep. Leaderless: any number of
 * loops in any number of processes; they meet only in SKIP LOCKED.
 *
 * <p>A cycle claims batch after batch while claims come back full, until it holds a fire's worth of bytes
 * ({@code sweeper.max.fire.bytes}) or half the lease has passed since its first claim, and only then
 * packs and fires. Accumulating is what makes segments large under a backlog (a claim of 200 spread over
 * 100 queues would otherwise push 100 segments of two frames each) and what makes one fire carry
 * thousands of timers; stopping at half the lease leaves the first claim at least half its lease for the
 * fire. PRICE: under a backlog the first timers claimed wait for the last claims of the cycle (bounded by
 * half the lease, in practice by the bytes); with no backlog the first claim comes back short and is fired
 * at once.
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
    private final LoopProgress progress;
    private final FireGate gate;
    private final SuspectPolicy suspects;
    private volatile boolean stopping;
    private boolean deploymentBroken;

    public SweepLoop(DueProbe probe, Claimer claimer, Delivery delivery, Pacer pacer, WakeSignal wake, SweeperMetrics metrics,
                     int maxFireBytes, LoopProgress progress) {
        this(probe, claimer, delivery, pacer, wake, metrics, maxFireBytes, progress, new FireGate(), Integer.MAX_VALUE);
    }

    /**
     * @param gate        shared by every loop of the process (suspects fire holding it alone)
     * @param maxAttempts sweeper.max.attempts: a suspect at it is dead-lettered, not fired ({@link SuspectPolicy})
     */
    public SweepLoop(DueProbe probe, Claimer claimer, Delivery delivery, Pacer pacer, WakeSignal wake, SweeperMetrics metrics,
                     int maxFireBytes, LoopProgress progress, FireGate gate, int maxAttempts) {
        this.gate = gate;
        this.suspects = new SuspectPolicy(maxAttempts);
        this.probe = probe;
        this.claimer = claimer;
        this.delivery = delivery;
        this.pacer = pacer;
        this.wake = wake;
        this.metrics = metrics;
        this.maxFireBytes = maxFireBytes;
        this.progress = progress;
    }

    /** One cycle; returns how long to sleep before the next. */
    Duration cycle() throws SQLException {
        ProbeResult p = probe.probe();
        metrics.probed(p);
        if (p.due() == 0) {
            return pacer.afterProbe(p);
        }
        Cycle c = gate.shared(this::claimAndDeliver);
        Delivery.Report report = c.report();
        if (!c.group().isEmpty()) {
            // nothing else of this process is in hand meanwhile (FireGate): if one of them kills it, the death
            // is counted against this group alone (SuspectPolicy)
            LOG.warn("firing {} timer(s) a lease of which ran out in a sweeper's hands, alone in this process (first: {}, {} death(s),"
                    + " attempt {})", c.group().size(), c.group().get(0).name(), c.group().get(0).deaths(), c.group().get(0).attempts());
            report = report.plus(gate.alone(() -> {
                if (c.group().size() == 1) {
                    // alone in the process: if its lease runs out now, the next claim blames it (one attempt)
                    delivery.holdAlone(c.group());
                }
                return delivery.deliver(c.group(), () -> stopping);
            }));
        }
        report.throwIfNothingFired();
        return pacer.afterWork();
    }

    /** What the shared part of a cycle did, and the group of suspects still in hand to fire alone. */
    private record Cycle(Delivery.Report report, List<ClaimedTimer> group) {}

    /** Claims (see the class comment), fires the claim's ordinary timers, hands back the suspects beyond one group. */
    private Cycle claimAndDeliver() throws SQLException {
        long start = System.nanoTime();
        long halfLease = claimer.lease().toNanos() / 2;
        List<ClaimedTimer> claimed = new ArrayList<>();
        long bytes = 0;
        int got;
        do {
            long t0 = System.nanoTime();
            // bounded by bytes in SQL (V050, decompressed since V120), so a burst of large payloads never exceeds what a
            // cycle may hold; only the first claim of a cycle may bring back one timer larger than that, alone
            Claimer.Claim claim = claimer.claim(maxFireBytes - bytes, claimed.isEmpty());
            metrics.claimTimer().record(Duration.ofNanos(System.nanoTime() - t0));
            got = claim.timers().size();
            claimed.addAll(claim.timers());
            bytes += claim.heldBytes();
        } while (got >= claimer.fullClaim() && bytes < maxFireBytes && !stopping && System.nanoTime() - start < halfLease);
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
        return new Cycle(report, split.group());
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
                progress.completed();
                if (deploymentBroken) {
                    deploymentBroken = false;
                    progress.impaired(null);
                }
            } catch (SQLException | RuntimeException e) {
                Error fatal = SqlStates.fatalCause(e);
                if (fatal != null) {
                    throw fatal;
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
