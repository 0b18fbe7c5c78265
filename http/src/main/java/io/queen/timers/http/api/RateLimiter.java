package io.queen.timers.http.api;

import java.util.LinkedHashMap;
import java.util.Map;

/**
 * A token bucket per client (a verified token's sub, else the remote address): {@code perSecond} requests a second,
 * {@code burst} at once. PRICE: the buckets of the {@link #CLIENTS} most recent clients are kept; a client pushed out
 * (by a flood of new addresses) starts again with a full bucket, so the limit is per client only while they fit.
 * One process's count: N API processes behind a balancer allow N times the rate.
 */
final class RateLimiter {

    static final int CLIENTS = 10_000;

    private final double perNano;
    private final double burst;
    private final Map<String, Bucket> buckets = new LinkedHashMap<>(1024, 0.75f, true) {
        @Override
        protected boolean removeEldestEntry(Map.Entry<String, Bucket> eldest) {
            return size() > CLIENTS;
        }
    };

    RateLimiter(int perSecond, int burst) {
        this.perNano = perSecond / 1e9;
        this.burst = burst;
    }

    boolean enabled() {
        return perNano > 0;
    }

    /** Takes one request from {@code client}'s bucket; false when it is empty. */
    synchronized boolean allow(String client, long nowNanos) {
        if (!enabled()) {
            return true;
        }
        Bucket b = buckets.computeIfAbsent(client, c -> new Bucket(burst, nowNanos));
        b.tokens = Math.min(burst, b.tokens + (nowNanos - b.at) * perNano);
        b.at = nowNanos;
        if (b.tokens < 1) {
            return false;
        }
        b.tokens -= 1;
        return true;
    }

    /** Whether {@code client}'s bucket holds a request now, without taking it (the caller takes one once it knows it must). */
    synchronized boolean has(String client, long nowNanos) {
        if (!enabled()) {
            return true;
        }
        Bucket b = buckets.get(client);
        return b == null || Math.min(burst, b.tokens + (nowNanos - b.at) * perNano) >= 1;
    }

    private static final class Bucket {
        double tokens;
        long at;

        Bucket(double tokens, long at) {
            this.tokens = tokens;
            this.at = at;
        }
    }

    /** Seconds until one more request is allowed (Retry-After). */
    long retryAfterSeconds() {
        return Math.max(1, (long) Math.ceil(1 / (perNano * 1e9)));
    }
}
