package io.queen.timers.sweeper.claim;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.time.Duration;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Iterator;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.UUID;
import java.util.function.LongSupplier;

/**
 * The per-tenant fire budget of one sweeper process ({@code sweeper.tenant.fires.per.second}, docs/sweeper.md#the-fire-budget):
 * a token bucket per tenant, shared by the process's loops, refilled at the budget's rate up to a tenth of a second's
 * worth ({@link #burst()}). A claim {@link #reserve reserves} every bucket's whole tokens as that tenant's allowance and
 * {@link #settle settles} what it took; the claim ({@code timer_claim_v6}) holds a tenant to its allowance only while
 * two tenants or more have a timer visible within {@code sweeper.sleep.near}, so a tenant alone is never held.
 *
 * <p>What it counts: rows claimed, each one fire (or fire attempt) of one timer. A tenant without a bucket has a full
 * one; a bucket that is full again is forgotten, so the map holds only the tenants claimed in the last tenth of a
 * second. Rows taken while the budget did not bind still empty the bucket (never below zero): a tenant that was
 * alone meets its first contention at its rate, not with a burst.
 *
 * <p>Where it holds: in this process only. Several sweepers (leaderless) give one tenant up to their number times the
 * budget: what the budget protects is each process's cycles (a quiet tenant's timer waits for the cycle in flight of
 * the loop that claims it), and each process fires its own share. PRICE: a global count would be a row per tenant
 * that every claim of every sweeper locks and writes.
 *
 * <p>Two loops of a process never spend the same tokens: the first to reserve takes a bucket's whole tokens, the other
 * sees what is left (usually nothing) until the first settles; only a tenant first seen may overshoot, once, by a
 * burst per loop.
 *
 * <p>Which tenants it holds, as far as this process can tell: the claim does not say whether the budget bound, so a
 * tenant counts as held ({@link #untilRefilled}) only after a claim took exactly what it was allowed, and no longer
 * once a claim took more (the budget did not bind: it was alone) or less (it had no more due). So a tenant alone,
 * whose claims take a whole batch whatever its tokens, never makes an empty claim wait for the budget. PRICE: a tenant
 * alone whose last claim took exactly its tokens by chance makes the next empty claim wait once, a fifth of a burst.
 */
public final class FireBudget {

    private static final ObjectMapper JSON = new ObjectMapper();

    private final double perSecond;
    private final double burst;
    private final double chunk;
    private final Duration near;
    private final LongSupplier nanos;
    private final Map<UUID, double[]> tokens = new HashMap<>();
    /** Tenants whose last claim took exactly their allowance: held by the budget, as far as a claim shows it. */
    private final Set<UUID> held = new HashSet<>();
    private long refilledAt;

    /**
     * @param perSecond the tenant's fires per second in this process; 0: no budget ({@link #off()})
     * @param near      sweeper.sleep.near: the budget binds while another tenant has a timer visible within it
     * @param nanos     the clock ({@code System::nanoTime}; a test's own)
     */
    public FireBudget(int perSecond, Duration near, LongSupplier nanos) {
        if (perSecond < 0) {
            throw new IllegalArgumentException("fires per second must not be negative, got " + perSecond);
        }
        this.perSecond = perSecond;
        this.burst = Math.max(1, perSecond / 10.0);
        this.chunk = Math.max(1, burst / 5);
        this.near = near;
        this.nanos = nanos;
        this.refilledAt = nanos.getAsLong();
    }

    /** No budget: every claim is as without one (timer_claim_v6 with p_budget NULL). */
    public static FireBudget off() {
        return new FireBudget(0, Duration.ZERO, System::nanoTime);
    }

    public boolean enabled() {
        return perSecond > 0;
    }

    /** The most one tenant claims at once after a pause: a tenth of a second of its budget, at least one. */
    public int burst() {
        return (int) burst;
    }

    /**
     * What one claim may take per tenant while the budget binds: {@code tenants} for those with a bucket below full (its
     * whole tokens, now reserved for this claim), {@code otherwise} for every other tenant (a full bucket).
     */
    public record Allowances(Map<UUID, Integer> tenants, int otherwise, long nearMs) {

        /** As timer_claim_v6 reads p_budget: {"near_ms", "allowance", "tenants": {"<tenant_id>": n}}. */
        public String json() {
            ObjectNode o = JSON.createObjectNode().put("near_ms", nearMs).put("allowance", otherwise);
            ObjectNode t = o.putObject("tenants");
            tenants.forEach((tenant, n) -> t.put(tenant.toString(), n));
            return o.toString();
        }
    }

    /** Reserves every bucket's whole tokens for one claim; null when there is no budget. Settle it, whatever happens. */
    public synchronized Allowances reserve() {
        if (!enabled()) {
            return null;
        }
        refill();
        Map<UUID, Integer> out = new HashMap<>();
        for (Map.Entry<UUID, double[]> e : tokens.entrySet()) {
            int whole = (int) Math.floor(e.getValue()[0]);
            e.getValue()[0] -= whole;
            out.put(e.getKey(), whole);
        }
        return new Allowances(Map.copyOf(out), (int) burst, near.toMillis());
    }

    /** Gives back what a claim reserved and did not take, and spends what it took of tenants it had no reservation for. */
    public synchronized void settle(Allowances reserved, Map<UUID, Integer> taken) {
        if (reserved == null) {
            return;
        }
        refill();
        for (Map.Entry<UUID, Integer> r : reserved.tenants().entrySet()) {
            int took = taken.getOrDefault(r.getKey(), 0);
            add(r.getKey(), r.getValue() - took);
            heldIf(r.getKey(), r.getValue(), took);
        }
        for (Map.Entry<UUID, Integer> t : taken.entrySet()) {
            if (!reserved.tenants().containsKey(t.getKey())) {
                add(t.getKey(), -t.getValue());
                heldIf(t.getKey(), reserved.otherwise(), t.getValue());
            }
        }
        forgetFull();
    }

    /** A claim allowed {@code allowed} of a tenant's rows took {@code took}: exactly that, it may have been held; else not. */
    private void heldIf(UUID tenant, int allowed, int took) {
        if (took == allowed && took > 0) {
            held.add(tenant);
        } else if (took != allowed) {
            held.remove(tenant);
        }   // nothing allowed and nothing taken says nothing either way
    }

    /**
     * After a claim that took nothing: how long until a tenant the budget holds has a few rows' worth again (a fifth of a
     * burst, at least one token), so the loop waits that long instead of claiming nothing again at once; empty when no
     * tenant is held (the claim was empty for another reason).
     */
    public synchronized Optional<Duration> untilRefilled() {
        if (!enabled()) {
            return Optional.empty();
        }
        refill();
        double most = -1;
        for (UUID tenant : held) {
            double[] t = tokens.get(tenant);
            if (t != null && t[0] < chunk) {
                most = Math.max(most, t[0]);
            }
        }
        return most < 0 ? Optional.empty() : Optional.of(Duration.ofNanos((long) Math.ceil((chunk - most) / perSecond * 1e9)));
    }

    private void add(UUID tenant, double n) {
        double[] t = tokens.computeIfAbsent(tenant, k -> new double[] {burst});
        t[0] = Math.max(0, Math.min(burst, t[0] + n));
    }

    private void refill() {
        long now = nanos.getAsLong();
        double add = (now - refilledAt) * perSecond / 1e9;
        refilledAt = now;
        if (add <= 0) {
            return;
        }
        for (double[] t : tokens.values()) {
            t[0] = Math.min(burst, t[0] + add);
        }
        forgetFull();
    }

    private void forgetFull() {
        for (Iterator<Map.Entry<UUID, double[]>> i = tokens.entrySet().iterator(); i.hasNext(); ) {
            Map.Entry<UUID, double[]> e = i.next();
            if (e.getValue()[0] >= burst) {
                i.remove();
                held.remove(e.getKey());
            }
        }
    }
}
