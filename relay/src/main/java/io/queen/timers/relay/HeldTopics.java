package io.queen.timers.relay;

import io.queen.timers.core.retry.Backoff;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Future;
import java.util.function.Consumer;

/**
 * The audit topics the relay cannot write to right now, and how each is probed until it can. Failures
 * are per destination: a topic that is missing (auto-create off), not authorized or not accepting
 * writes is <i>held</i> — its outbox rows are left out of the relay's rounds, so they keep their order
 * and wait — while every other topic keeps flowing.
 *
 * <p>A held topic is probed off the relay's thread ({@code partitionsFor}, which blocks for up to the
 * send timeout while the topic has no metadata), after a backoff ({@link Backoff}: jittered under a ceiling
 * that doubles from 100 ms to the configured maximum; each topic has its own sequence). Once a probe
 * succeeds the topic is on <i>trial</i>: its rows are fetched again, oldest first; a round that publishes them all releases it, a failure holds it again with the longer
 * backoff. PRICE: the relay's thread still pays one send timeout when a topic first fails (the send
 * that finds out), and the fetch skips the held tenants' rows by filter, reading past them on every round
 * while they wait.
 *
 * <p>Used by the relay's thread only, except the probes, which run on {@code prober} and only complete
 * a future.
 */
final class HeldTopics {

    private static final Duration MIN_BACKOFF = Duration.ofMillis(100);

    private static final class Hold {
        final Instant since;
        String reason;
        final Backoff.Waits waits;
        Instant retryAt;
        Future<?> probe;
        boolean trial;

        Hold(Instant since, String reason, Backoff backoff) {
            this.since = since;
            this.reason = reason;
            this.waits = backoff.waits();
        }
    }

    private final Map<String, Hold> holds = new LinkedHashMap<>();
    private final Map<String, Set<UUID>> tenantsOf = new HashMap<>();
    private final Backoff backoff;
    private final ExecutorService prober;
    private final Clock clock;

    HeldTopics(Duration maxBackoff, ExecutorService prober, Clock clock) {
        this.backoff = new Backoff(MIN_BACKOFF, maxBackoff);
        this.prober = prober;
        this.clock = clock;
    }

    /** Remembers which tenants publish to {@code topic}, so a held topic's rows can be left out of the fetch. */
    void seen(String topic, UUID tenant) {
        tenantsOf.computeIfAbsent(topic, t -> new HashSet<>()).add(tenant);
    }

    boolean isEmpty() {
        return holds.isEmpty();
    }

    /** Whether the relay may send to {@code topic} in this round (not held, or on trial). */
    boolean sendable(String topic) {
        Hold h = holds.get(topic);
        return h == null || h.trial;
    }

    /** Tenants whose rows the next fetch leaves out: those of held topics not on trial. */
    List<UUID> excludedTenants() {
        List<UUID> out = new ArrayList<>();
        holds.forEach((topic, h) -> {
            if (!h.trial) {
                out.addAll(tenantsOf.getOrDefault(topic, Set.of()));
            }
        });
        return out;
    }

    /** Sends to {@code topic} failed in this round: hold it (or hold it again, with a longer backoff). */
    void fail(String topic, String reason) {
        Instant now = clock.instant();
        Hold h = holds.get(topic);
        if (h == null) {
            h = new Hold(now, reason, backoff);
            holds.put(topic, h);
        }
        h.reason = reason;
        h.trial = false;
        h.probe = null;
        h.retryAt = now.plus(h.waits.next());
    }

    /** Every send to {@code topic} in this round was acknowledged: a topic on trial is released. */
    void succeeded(String topic) {
        Hold h = holds.get(topic);
        if (h != null && h.trial) {
            holds.remove(topic);
        }
    }

    /**
     * Before a round: starts the probes that are due and moves the topics whose probe succeeded to trial.
     *
     * @param probe checks that the topic can be written to (blocks; throws when it cannot)
     */
    void advance(Consumer<String> probe) {
        Instant now = clock.instant();
        holds.forEach((topic, h) -> {
            if (h.trial) {
                return;
            }
            if (h.probe == null) {
                if (!now.isBefore(h.retryAt)) {
                    h.probe = prober.submit(() -> probe.accept(topic));
                }
                return;
            }
            if (h.probe.isDone()) {
                try {
                    h.probe.get();
                    h.trial = true;
                } catch (Exception e) {
                    Throwable cause = e.getCause() != null ? e.getCause() : e;
                    fail(topic, String.valueOf(cause));
                }
            }
        });
    }

    /** For readiness: which topics are held, since when and why; null when none is. */
    String describe() {
        if (holds.isEmpty()) {
            return null;
        }
        StringBuilder b = new StringBuilder("audit events held for ");
        boolean first = true;
        for (Map.Entry<String, Hold> e : holds.entrySet()) {
            Hold h = e.getValue();
            b.append(first ? "" : "; ").append("topic ").append(e.getKey()).append(" since ").append(h.since)
                    .append(h.trial ? " (on trial after a successful probe)" : "").append(": ").append(h.reason);
            first = false;
        }
        return b.append(" (other topics flow)").toString();
    }

    Map<String, Instant> heldSince() {
        Map<String, Instant> out = new LinkedHashMap<>();
        holds.forEach((t, h) -> out.put(t, h.since));
        return out;
    }
}
