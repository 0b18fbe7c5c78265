package io.queen.timers.sweeper.loop;

import io.queen.timers.sweeper.claim.ClaimedTimer;
import io.queen.timers.sweeper.claim.Claimer;
import io.queen.timers.sweeper.probe.DueProbe;
import io.queen.timers.sweeper.probe.ProbeResult;
import java.sql.SQLException;
import java.time.Duration;
import java.util.List;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One sweep loop: probe → claim → deliver (pack, fire, fail) → sleep. Leaderless: any number of loops in
 * any number of processes; they meet only in SKIP LOCKED. A cycle claims again while claims come back full,
 * but stops claiming once half the lease has passed since the cycle began, so it returns to the probe
 * (metrics, wake-up time) regularly and never builds a long tail of claims whose leases age while earlier
 * batches are fired.
 */
public final class SweepLoop implements Runnable {

    private static final Logger LOG = LoggerFactory.getLogger(SweepLoop.class);

    private final DueProbe probe;
    private final Claimer claimer;
    private final Delivery delivery;
    private final Pacer pacer;
    private final WakeSignal wake;
    private final SweeperMetrics metrics;
    private volatile boolean stopping;

    public SweepLoop(DueProbe probe, Claimer claimer, Delivery delivery, Pacer pacer, WakeSignal wake, SweeperMetrics metrics) {
        this.probe = probe;
        this.claimer = claimer;
        this.delivery = delivery;
        this.pacer = pacer;
        this.wake = wake;
        this.metrics = metrics;
    }

    /** One cycle; returns how long to sleep before the next. */
    Duration cycle() throws SQLException {
        ProbeResult p = probe.probe();
        metrics.probed(p);
        if (p.due() == 0) {
            return pacer.afterProbe(p);
        }
        long start = System.nanoTime();
        long halfLease = claimer.lease().toNanos() / 2;
        int claimed;
        do {
            long t0 = System.nanoTime();
            List<ClaimedTimer> batch = claimer.claim();
            metrics.claimTimer().record(Duration.ofNanos(System.nanoTime() - t0));
            claimed = batch.size();
            delivery.deliver(batch, () -> stopping);
        } while (claimed >= claimer.batchSize() && !stopping && System.nanoTime() - start < halfLease);
        return pacer.afterWork();
    }

    @Override
    public void run() {
        while (!stopping) {
            long seen = wake.generation();
            Duration sleep;
            try {
                sleep = cycle();
            } catch (SQLException | RuntimeException e) {
                sleep = pacer.afterError();
                LOG.warn("sweep cycle failed ({}); next try in {} ms", e.toString(), sleep.toMillis());
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

    /** Asks the loop to stop after the fire in flight; the caller wakes it and joins its thread. */
    public void stop() {
        stopping = true;
    }
}
