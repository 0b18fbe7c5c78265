package io.queen.timers.http.api;

import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Each tenant's share of the API's workers (api.senders of api.threads): its requests in progress at once, reads and
 * writes together, each counted from the moment its tenant is known (its token verified) until its work is done; one
 * more is refused at once (429 with Retry-After, nothing read or written) rather than queued behind its own. So a tenant
 * whose bridge is behind (its writes wait for verdicts) or whose reads are slow (a statement near the operator's timeout)
 * holds at most its share, and the other tenants keep the rest. PRICE: a burst of more than the share of one tenant's
 * requests has its excess refused (the caller retries), even when the server is otherwise idle. One entry per tenant the
 * API serves (its configured command topics), never per caller.
 */
final class TenantShares {

    private final int share;
    private final ConcurrentHashMap<UUID, AtomicInteger> inProgress = new ConcurrentHashMap<>();

    TenantShares(int share) {
        this.share = share;
    }

    /** One place of {@code tenant}'s share, released once by its {@link Taken#close}; empty when the share is used up now. */
    Optional<Taken> take(UUID tenant) {
        AtomicInteger n = inProgress.computeIfAbsent(tenant, t -> new AtomicInteger());
        if (n.incrementAndGet() > share) {
            n.decrementAndGet();
            return Optional.empty();
        }
        return Optional.of(new Taken(n));
    }

    /** Requests of {@code tenant} in progress now. */
    int inProgress(UUID tenant) {
        AtomicInteger n = inProgress.get(tenant);
        return n == null ? 0 : n.get();
    }

    /** A place of a tenant's share; closing it twice gives it back once. */
    static final class Taken implements AutoCloseable {
        private final AtomicInteger count;
        private final AtomicBoolean released = new AtomicBoolean();

        private Taken(AtomicInteger count) {
            this.count = count;
        }

        @Override
        public void close() {
            if (released.compareAndSet(false, true)) {
                count.decrementAndGet();
            }
        }
    }
}
