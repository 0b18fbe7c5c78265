package io.queen.timers.sweeper.loop;

import io.queen.timers.core.db.ErrorClass;
import io.queen.timers.core.db.SqlStates;
import io.queen.timers.core.logging.TimerMdc;
import io.queen.timers.core.telemetry.Telemetry;
import io.queen.timers.client.command.TraceParent;
import io.opentelemetry.api.trace.SpanBuilder;
import io.opentelemetry.api.trace.SpanKind;
import io.queen.timers.sweeper.claim.ClaimedTimer;
import io.queen.timers.sweeper.fail.DeadLettered;
import io.queen.timers.sweeper.fail.FailOutcome;
import io.queen.timers.sweeper.fail.Failer;
import io.queen.timers.sweeper.fire.FireResult;
import io.queen.timers.sweeper.fire.Firer;
import io.queen.timers.sweeper.fire.SegmentOutcome;
import io.queen.timers.sweeper.pack.FireBatch;
import io.queen.timers.sweeper.pack.PackResult;
import io.queen.timers.sweeper.pack.Packer;
import io.queen.timers.sweeper.pack.Segment;
import io.queen.timers.sweeper.pack.Unpackable;
import java.sql.SQLException;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.function.BooleanSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Everything between a claim and the next claim: pack, fire, and what happens to timers that did not go
 * out (docs/decisions.md#failures-back-off-and-stay-isolated).
 * <ul>
 *   <li>A timer claimed with attempts already at the maximum (its dead-letter was interrupted by a crash)
 *       is released and dead-lettered instead of fired.</li>
 *   <li>A timer that cannot be packed fails on its own, permanently.</li>
 *   <li>A fire that meets a broken deployment (an undefined function, table or column, a missing privilege)
 *       spends nothing: this claim's timers are handed back untouched and the error goes up to the loop,
 *       which pauses and reports it. Counting it as an attempt would dead-letter healthy timers.</li>
 *   <li>A fire that fails is classified by SQLSTATE ({@link SqlStates}, the one classifier). Transient:
 *       every timer of the fire backs off {@code sweeper.transient.backoff}, no attempt spent. Permanent: a
 *       multi-segment fire is retried one segment per call, and a multi-frame segment is retried in halves,
 *       so one poisoned timer ends up failing alone and never holds back the others; only the single
 *       timer that still fails spends an attempt.</li>
 *   <li>Timers whose fail exhausts their attempts are dead-lettered right after, in their own transaction,
 *       so a reschedule in between wins.</li>
 *   <li>A timer staged in clear whose queue has {@code encryption_enabled} by the time of its fire is refused by the
 *       fire itself ({@link FireResult#REFUSED}): dead-lettered in the fire's transaction with
 *       {@code encryption_unavailable}, no attempt spent, never pushed in clear. Its segment's other
 *       timers are released by the fire and go out in the next cycle. Not an exception: the rest of the fire
 *       stands.</li>
 *   <li>A multi-segment fire that waited out its lock or statement timeout (SQLSTATE 55P03, 57014) is
 *       retried in halves while half a lease since the claim is left, so a destination whose partition lock
 *       is held elsewhere (a stopped backend, a long transaction of another writer) waits alone and the
 *       other destinations of the claim fire. PRICE: one more lock timeout per halving on the path to the
 *       held destination (at most log2 of the segments), paid only when a lock is held that long.</li>
 *   <li>{@link #deliver} reports what it fired: a claim of which nothing fired because every fire failed
 *       transiently is a failed cycle for the loop (its readiness line says why), not a completed one.</li>
 *   <li>On shutdown the fires not started yet are released (only our own tokens); the fire in flight is
 *       never interrupted: its transaction decides.</li>
 * </ul>
 */
public final class Delivery {

    private static final Logger LOG = LoggerFactory.getLogger(Delivery.class);
    /** Pauses between the retries of {@link #releaseStale}: 150 ms at most, paid only by a stale fire. */
    private static final long[] STALE_RELEASE_PAUSES_MS = {10, 40, 100};

    private final Packer packer;
    private final Firer firer;
    private final Failer failer;
    private final SweeperMetrics metrics;
    private final int maxPayloadBytes;
    private final Duration splitBudget;
    private final Telemetry telemetry;

    /** {@code splitBudget}: how long after a claim a fire that waited on a lock may still be retried in halves (half the lease). */
    public Delivery(Packer packer, Firer firer, Failer failer, SweeperMetrics metrics, int maxPayloadBytes, Duration splitBudget) {
        this(packer, firer, failer, metrics, maxPayloadBytes, splitBudget, Telemetry.off());
    }

    /** As above; {@code telemetry} gets one span per timer fired (docs/tracing.md#tracing), none when it is off. */
    public Delivery(Packer packer, Firer firer, Failer failer, SweeperMetrics metrics, int maxPayloadBytes, Duration splitBudget,
                    Telemetry telemetry) {
        this.telemetry = telemetry;
        this.packer = packer;
        this.firer = firer;
        this.failer = failer;
        this.metrics = metrics;
        this.maxPayloadBytes = maxPayloadBytes;
        this.splitBudget = splitBudget;
    }

    /** What one {@link #deliver} did: timers fired, timers whose fire failed transiently (no attempt spent), the last such error. */
    public record Report(int fired, int failedTransiently, Throwable lastTransient) {

        /**
         * Nothing fired and something failed transiently: the claim made no progress, which the loop must count
         * as a failed cycle (a completed one would keep readiness green while every fire waits on a held lock).
         */
        /** Both deliveries of one cycle together. */
        public Report plus(Report other) {
            return new Report(fired + other.fired, failedTransiently + other.failedTransiently,
                    other.lastTransient != null ? other.lastTransient : lastTransient);
        }

        public void throwIfNothingFired() throws SQLException {
            if (fired == 0 && failedTransiently > 0) {
                SQLException sql = SqlStates.find(lastTransient);
                throw new SQLException("no timer of the claim fired: " + failedTransiently + " failed transiently, the last with "
                        + describe(lastTransient), sql != null ? sql.getSQLState() : null, lastTransient);
            }
        }
    }

    /** Counts of one deliver call; the split deadline is half a lease after the claim. */
    private static final class Tally {
        final long splitUntilNanos;
        int fired;
        int failedTransiently;
        Throwable lastTransient;

        Tally(long splitUntilNanos) {
            this.splitUntilNanos = splitUntilNanos;
        }

        Report report() {
            return new Report(fired, failedTransiently, lastTransient);
        }
    }

    /** Delivers one claim. Fires not started when {@code stopping} turns true are released. */
    public Report deliver(List<ClaimedTimer> claimed, BooleanSupplier stopping) throws SQLException {
        Tally tally = new Tally(System.nanoTime() + splitBudget.toNanos());
        claimed = skipMissed(claimed);
        List<ClaimedTimer> exhausted = claimed.stream().filter(t -> t.history().attempts() >= failer.maxAttempts()).toList();
        if (!exhausted.isEmpty()) {
            deadLetter(exhausted); // under the claim just taken (timer_dead_letter_v3 requires it)
        }
        PackResult packed = packer.pack(claimed.stream().filter(t -> t.history().attempts() < failer.maxAttempts()).toList());
        handBack(packed.deferred()); // beyond the fire's bound in decompressed bytes: the next cycle takes them, unspent
        for (Unpackable u : packed.unpackable()) {
            LOG.warn("{}", u.error());
            fail(List.of(new Failer.Failure(u.timer(), u.error())), ErrorClass.PERMANENT);
        }
        List<FireBatch> fires = packed.fires();
        for (int i = 0; i < fires.size(); i++) {
            if (stopping.getAsBoolean()) {
                List<ClaimedTimer> rest = fires.subList(i, fires.size()).stream().flatMap(f -> f.timers().stream()).toList();
                int released = failer.release(rest);
                LOG.info("shutting down: released {} claimed timers not fired yet", released);
                return tally.report();
            }
            try {
                fire(fires.get(i), tally);
            } catch (BrokenDeployment broken) {
                // every timer would fail the same way: hand them all back unspent and let the loop pause
                List<ClaimedTimer> rest = fires.subList(i, fires.size()).stream().flatMap(f -> f.timers().stream()).toList();
                metrics.failed(ErrorClass.DEPLOYMENT, rest.size());
                try {
                    failer.release(rest);
                } catch (SQLException | RuntimeException e) {
                    broken.addSuppressed(e);   // they come back after their lease, still unspent
                }
                throw broken;
            }
        }
        return tally.report();
    }

    /**
     * The occurrences of recurring timers with catchUp none that a later occurrence already overtook
     * (docs/recurring.md): skipped, never delivered, their successors staged. Returns the rest of the claim. "Already
     * overtook" by the database's clock, as each claim read it: a missed occurrence stays missed, so the skip's own plan,
     * made a moment later, agrees.
     */
    private List<ClaimedTimer> skipMissed(List<ClaimedTimer> claimed) throws SQLException {
        List<ClaimedTimer> missed = claimed.stream()
                .filter(t -> t.recurring() && t.history().attempts() < failer.maxAttempts() && !t.plan(false).deliver())
                .toList();
        if (missed.isEmpty()) {
            return claimed;
        }
        int skipped = failer.skip(missed);
        LOG.info("skipped {} missed occurrences of recurring timers with catchUp none", skipped);
        return claimed.stream().filter(t -> !missed.contains(t)).toList();
    }

    /** sweeper.transient.backoff: how long a timer whose fire failed transiently waits before it is claimable again. */
    public Duration transientBackoff() {
        return failer.transientBackoff();
    }

    /** Like {@link #handBack}; returns how many still carried our token. */
    public int handBackCounting(List<ClaimedTimer> timers) throws SQLException {
        return timers.isEmpty() ? 0 : failer.release(timers);
    }

    /** Hands claimed timers back untouched, no attempt spent (they are claimable at once). */
    public void handBack(List<ClaimedTimer> timers) throws SQLException {
        if (!timers.isEmpty()) {
            failer.release(timers);
        }
    }

    /**
     * Marks a suspect about to be fired with nothing else of this process in hand (held_alone): if its lease runs
     * out in our hands now, the next claim spends one of its attempts. A timer another sweeper took meanwhile is not
     * ours and is left as it is.
     */
    public void holdAlone(List<ClaimedTimer> timers) throws SQLException {
        failer.holdAlone(timers);
    }

    private void fire(FireBatch batch, Tally tally) throws SQLException {
        List<SegmentOutcome> outcomes;
        long start = System.nanoTime();
        // a span's times are this host's wall clock, as every span's of this host is (a trace viewer lines them up); nothing
        // is decided by them, and the lateness it carries is the database's (deliver_at to the segment's created_at)
        Instant startedAt = telemetry.enabled() ? Instant.now() : null;
        try {
            outcomes = firer.fire(batch);
        } catch (SQLException | RuntimeException e) {
            ErrorClass errorClass = SqlStates.classify(e);
            if (errorClass == ErrorClass.DEPLOYMENT) {
                throw new BrokenDeployment(e);
            }
            if (errorClass == ErrorClass.PERMANENT && batch.segments().size() > 1) {
                LOG.warn("fire of {} segments failed permanently ({}); retrying one segment per fire", batch.segments().size(), describe(e));
                for (Segment s : batch.segments()) {
                    fire(FireBatch.of(s), tally);
                }
                return;
            }
            int segments = batch.segments().size();
            if (errorClass == ErrorClass.TRANSIENT && segments > 1 && SqlStates.waitedOut(e) && System.nanoTime() < tally.splitUntilNanos) {
                LOG.warn("fire of {} segments waited out its timeout ({}); retrying in halves, so that a destination whose lock is held"
                        + " elsewhere waits alone", segments, describe(e));
                fire(new FireBatch(batch.segments().subList(0, segments / 2)), tally);
                fire(new FireBatch(batch.segments().subList(segments / 2, segments)), tally);
                return;
            }
            Segment only = batch.segments().get(0);
            if (errorClass == ErrorClass.PERMANENT && only.size() > 1) {
                LOG.warn("fire of {} timers into {} failed permanently ({}); retrying in halves to isolate the cause",
                        only.size(), only.destination(), describe(e));
                for (Segment half : packer.halves(only)) {
                    fire(FireBatch.of(half), tally);
                }
                return;
            }
            List<ClaimedTimer> timers = batch.timers();
            if (errorClass == ErrorClass.TRANSIENT) {
                tally.failedTransiently += timers.size();
                tally.lastTransient = e;
                LOG.warn("fire of {} timers (first: {}) failed transiently, no attempt spent: {}", timers.size(), timers.get(0).name(), describe(e));
            } else {
                ClaimedTimer t = timers.get(0);
                try (TimerMdc m = mdc(t)) {
                    LOG.warn("fire of timer {} failed permanently (attempt {} of {}): {}", t.name(), t.history().attempts() + 1, failer.maxAttempts(), describe(e));
                }
            }
            fail(timers.stream().map(t -> new Failer.Failure(t, describe(e))).toList(), errorClass);
            return;
        } finally {
            metrics.fireTimer().record(Duration.ofNanos(System.nanoTime() - start));
        }
        List<ClaimedTimer> stale = new ArrayList<>();
        for (SegmentOutcome o : outcomes) {
            if (o.result() == FireResult.FIRED) {
                metrics.fired(FireResult.FIRED, o.segment().size());
                tally.fired += o.segment().size();
                for (ClaimedTimer t : o.segment().timers()) {
                    metrics.lateness(Duration.between(t.schedule().deliverAt(), o.createdAt()));
                }
                if (startedAt != null) {
                    spans(o, startedAt);
                }
            } else if (o.result() == FireResult.REFUSED) {
                // dead-lettered by the fire itself (encryption_unavailable); the segment's other rows were held, so the fire
                // released every one of them: they go out in the next cycle, nothing left to hand back
                metrics.fired(FireResult.REFUSED, o.refused().size());
                metrics.fired(FireResult.STALE, o.segment().size() - o.refused().size());
                metrics.deadLettered(o.refused().size());
                for (ClaimedTimer t : o.refused()) {
                    try (TimerMdc m = mdc(t)) {
                        LOG.warn("timer {} refused and moved to queen.log_dlq (encryption_unavailable): staged in clear, its queue {} now has"
                                + " encryption_enabled and the sweeper holds no key; never fired in clear", t.name(), t.key().queue());
                    }
                }
            } else {
                metrics.fired(FireResult.STALE, o.segment().size());
                stale.addAll(o.segment().timers());
            }
        }
        releaseStale(stale);
    }

    /**
     * One span per timer of a fired segment (docs/tracing.md#tracing): {@code queen-timers fire}, a PRODUCER span from the
     * fire's start to its commit. It is a ROOT: the fire runs in no request's context, minutes or days after the
     * command, so it is not a child of the command's trace but LINKED to the command's span (the traceparent the
     * command carried: flags and tracestate as sent), which a trace viewer follows both ways. Made only for a fire
     * that committed.
     */
    private void spans(SegmentOutcome o, Instant startedAt) {
        Instant end = Instant.now();
        List<ClaimedTimer> timers = o.segment().timers();
        for (int i = 0; i < timers.size(); i++) {
            ClaimedTimer t = timers.get(i);
            SpanBuilder b = telemetry.tracer().spanBuilder("queen-timers fire").setSpanKind(SpanKind.PRODUCER).setNoParent()
                    .setStartTimestamp(startedAt)
                    .setAttribute("messaging.system", "queen")
                    .setAttribute("messaging.operation.type", "send")
                    .setAttribute("messaging.destination.name", t.key().queue())
                    .setAttribute("messaging.destination.partition.id", t.message().partition())
                    .setAttribute("messaging.message.id", t.message().messageId().toString())
                    .setAttribute("queen.timers.tenant", t.key().tenantId().toString())
                    .setAttribute("queen.timers.queue", t.key().queue())
                    .setAttribute("queen.timers.timer_key", t.key().timerKey())
                    .setAttribute("queen.timers.attempts", t.history().attempts())
                    .setAttribute("queen.timers.late_ms", Duration.between(t.schedule().deliverAt(), o.createdAt()).toMillis());
            if (o.baseOffset() != null) {
                b.setAttribute("queen.timers.offset", o.baseOffset() + i);
            }
            TraceParent.fromBytes(t.message().traceContext()).flatMap(Telemetry::remote).ifPresent(b::addLink);
            b.startSpan().end(end);
        }
    }

    /**
     * A stale segment's rows that the fire held are already released by the fire; a row it could NOT hold
     * (SKIP LOCKED) still carries our token and lease. Most often that row was locked for a few
     * milliseconds by another sweeper's claim statement: its SKIP LOCKED scan locks a row it saw due in its
     * snapshot and only then re-checks it against the row's latest version. Left alone, such a row waits
     * for its whole lease (FireBench with 2 workers saw hundreds of a run's timers
     * fire a lease late). So the sweeper hands them back now, a few times over {@link #STALE_RELEASE_PAUSES_MS}
     * (only rows still carrying our token; never waiting on a row). A row a command holds longer than that
     * keeps waiting for its lease, spending no attempt: the declared price of never waiting.
     */
    private void releaseStale(List<ClaimedTimer> stale) throws SQLException {
        if (stale.isEmpty()) {
            return;
        }
        failer.release(stale);
        for (long pause : STALE_RELEASE_PAUSES_MS) {
            try {
                Thread.sleep(pause);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            }
            failer.release(stale);
        }
    }

    private void fail(List<Failer.Failure> failures, ErrorClass errorClass) throws SQLException {
        metrics.failed(errorClass, failures.size());
        List<FailOutcome> outcomes = failer.fail(failures, errorClass);
        List<ClaimedTimer> exhausted = new ArrayList<>();
        for (FailOutcome o : outcomes) {
            if (o.exhausted()) {
                failures.stream().map(Failer.Failure::timer)
                        .filter(t -> t.key().tenantId().equals(o.tenantId()) && t.key().queue().equals(o.queue()) && t.key().timerKey().equals(o.timerKey()))
                        .findFirst().ifPresent(exhausted::add);
            }
        }
        deadLetter(exhausted);
    }

    private void deadLetter(List<ClaimedTimer> timers) throws SQLException {
        if (timers.isEmpty()) {
            return;
        }
        List<DeadLettered> moved = failer.deadLetter(timers);
        for (DeadLettered d : moved) {
            UUID trace = timers.stream().filter(t -> t.key().tenantId().equals(d.tenantId()) && t.key().queue().equals(d.queue())
                    && t.key().timerKey().equals(d.timerKey())).findFirst().map(ClaimedTimer::traceId).orElse(null);
            try (TimerMdc m = TimerMdc.of(d.tenantId(), d.queue(), d.timerKey(), TimerMdc.traceId(trace))) {
                LOG.warn("timer {}/{}/{} moved to queen.log_dlq (id {}) after {} failed attempts",
                        d.tenantId(), d.queue(), d.timerKey(), d.dlqId(), failer.maxAttempts());
            }
        }
        metrics.deadLettered(moved.size());
    }

    /** The log fields of the one timer a line is about (log.format=json). */
    static TimerMdc mdc(ClaimedTimer t) {
        return TimerMdc.of(t.key().tenantId(), t.key().queue(), t.key().timerKey(), TimerMdc.traceId(t.traceId()));
    }

    /** A fire met a broken deployment (SqlStates: DEPLOYMENT); the cause is the database's error. */
    static final class BrokenDeployment extends RuntimeException {
        BrokenDeployment(Throwable cause) {
            super("the deployment is broken: " + describe(cause), cause);
        }
    }

    private static String describe(Throwable e) {
        SQLException sql = SqlStates.find(e);
        if (sql != null) {
            return "SQLSTATE " + sql.getSQLState() + ": " + sql.getMessage();
        }
        return e.toString();
    }
}
