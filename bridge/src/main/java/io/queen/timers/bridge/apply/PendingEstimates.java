package io.queen.timers.bridge.apply;

import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.UUID;
import java.util.function.LongSupplier;

/**
 * What this bridge knows of each tenant's pending timers between two counts (tenant.max.pending).
 *
 * <p>Counting ({@code queen.timer_tenant_pending_v1}) reads min(pending, cap) index entries of the tenant: at a steady
 * rate with thousands pending, more time per timer than the apply itself (PipelineBench --mode steady), and a tenant that holds a million
 * pays a million entries per commit. So a count is reused for {@link #RECOUNT_AFTER}: the estimate is the last count
 * plus every new key this bridge admitted since (fires and cancels only lower the real number), and it is used only
 * while it plus every schedule of the tenant in the batch stays below the cap less a tenth: a batch that could reach
 * the cap is counted, so on one bridge no verdict differs from counting every batch.
 *
 * <p>PRICE: with several bridges, each reuses its own count, and another bridge's admissions since it are not in
 * it. Counting every batch already let concurrent bridges overshoot by a batch each; now, within the second a count
 * stands, the bridges together may admit for a tenant up to their own 90 % margins, so N bridges can pass the cap by
 * what the others admitted in that second (at most (N - 1) x 90 % of the cap, for a tenant flooding them all).
 */
final class PendingEstimates {

    static final Duration RECOUNT_AFTER = Duration.ofSeconds(1);

    private record Estimate(long pending, long countedAtNanos) {}

    /** The bridge applies one batch at a time (its ingest loop is one thread): a plain map. */
    private final Map<UUID, Estimate> byTenant = new HashMap<>();
    private final long cap;
    private final LongSupplier nanoTime;

    PendingEstimates(long cap, LongSupplier nanoTime) {
        this.cap = cap;
        this.nanoTime = nanoTime;
    }

    /** The tenant's estimate when it may stand for a count in a batch with {@code schedules} schedules of it, else -1. */
    long reusable(UUID tenant, int schedules) {
        Estimate e = byTenant.get(tenant);
        if (e == null || nanoTime.getAsLong() - e.countedAtNanos() >= RECOUNT_AFTER.toNanos()) {
            return -1;
        }
        return e.pending() + schedules < cap - cap / 10 ? e.pending() : -1;
    }

    /** A count just read. */
    void counted(UUID tenant, long pending) {
        byTenant.put(tenant, new Estimate(pending, nanoTime.getAsLong()));
    }

    /**
     * The tenant's number once the batch is folded (its count or estimate plus the new keys it admitted). Kept even
     * when the batch then rolls back: the estimate is then high, which only makes the next count come sooner.
     */
    void folded(UUID tenant, long pending) {
        byTenant.computeIfPresent(tenant, (t, e) -> new Estimate(Math.max(e.pending(), pending), e.countedAtNanos()));
    }
}
