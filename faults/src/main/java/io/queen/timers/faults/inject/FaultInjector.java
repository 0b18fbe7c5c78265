package io.queen.timers.faults.inject;

import io.queen.timers.processes.ManagedProcess;
import io.queen.timers.processes.PostgresProcess;
import io.queen.timers.processes.stack.Stack;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;

/**
 * Injects faults at seeded moments. Each kind has its own random stream (seed and kind), its own
 * thread and its own evenly spread schedule over the fault window (fault i at a random point of the
 * i-th slice), so the kinds overlap as real trouble does, and the same seed gives the same plan.
 * Faults on one resource serialize on it: PostgreSQL restarts on PostgreSQL, broker faults on the
 * broker, faults on one service on that service.
 *
 * <p>A fault counts only when it bit (docs/fault-harness.md#faults-that-count): a kill when its target was
 * alive and came back working, a PostgreSQL restart when a new postmaster started and its log shows the
 * recovery (immediate) or the clean shutdown (fast), a termination when it ended a backend, a pause when the
 * paused process held work. A kind whose planned faults did not all bite gets more attempts until they did
 * or its time is up, so "30 of every kind" means 30 that bit.
 */
public final class FaultInjector {

    private final Stack stack;
    private final long seed;
    private final Map<FaultKind, Integer> planned;
    private final Consumer<String> log;
    private final Map<FaultKind, AtomicInteger> done = new EnumMap<>(FaultKind.class);
    private final Map<FaultKind, AtomicInteger> effective = new EnumMap<>(FaultKind.class);
    private final Map<FaultKind, AtomicInteger> failed = new EnumMap<>(FaultKind.class);
    private final Map<FaultKind, AtomicInteger> skipped = new EnumMap<>(FaultKind.class);
    private final Map<String, Object> processLocks = new ConcurrentHashMap<>();
    /** Every fault carried out, from its start until its resource worked again: the lateness bound is derived from them. */
    private final List<Outage> outages = new java.util.concurrent.CopyOnWriteArrayList<>();
    /** Kills whose process was not working again {@link #BACK_WITHIN_MS} later: each a violation of the run. */
    private final List<String> notBack = new java.util.concurrent.CopyOnWriteArrayList<>();
    /** How long a killed (and restarted) service has to work again: a JVM start on a loaded 2-core machine takes 5-20 s. */
    public static final long BACK_WITHIN_MS = 120_000;
    private final Object postgresLock = new Object();
    private final Object clockLock = new Object();
    private final AtomicInteger clockSteps = new AtomicInteger();
    /** The clock step (issue 49, point 6): 30 s, ahead or behind, and about as long as it is held. */
    static final long CLOCK_STEP_MS = 30_000;
    private final Object brokerLock = new Object();
    private final long t0 = System.currentTimeMillis();
    /** How long a resource stays up at least after a fault on it before the next may begin (plus a seeded 0-1 s). */
    private static final long UP_MIN_MS = 300;
    /**
     * Faults on the broker and on PostgreSQL queue behind each other, so on a loaded machine they end after the
     * window; past the window and this grace the rest is skipped (and {@code --strict-faults} fails the run).
     */
    private static final long GRACE_MS = 300_000;
    private volatile long windowMs;

    public FaultInjector(Stack stack, long seed, Map<FaultKind, Integer> planned, Consumer<String> log) {
        this.stack = stack;
        this.seed = seed;
        this.planned = planned;
        this.log = log;
        for (FaultKind k : FaultKind.values()) {
            done.put(k, new AtomicInteger());
            effective.put(k, new AtomicInteger());
            failed.put(k, new AtomicInteger());
            skipped.put(k, new AtomicInteger());
        }
    }

    /** Faults carried out (the call returned), whether or not they bit. */
    public int done(FaultKind k) {
        return done.get(k).get();
    }

    /** Faults that bit: what {@code --strict-faults} counts. */
    public int effective(FaultKind k) {
        return effective.get(k).get();
    }

    public int failed(FaultKind k) {
        return failed.get(k).get();
    }

    /** What each kill whose process did not come back working in time left: the run fails on each. */
    public List<String> notBack() {
        return List.copyOf(notBack);
    }

    /** Every fault carried out so far, from its start until its resource worked again (whether or not it bit). */
    public List<Outage> outages() {
        return List.copyOf(outages);
    }

    /** Faults not injected because their resource was still busy with earlier ones when the window (plus a grace) was over. */
    public int skipped(FaultKind k) {
        return skipped.get(k).get();
    }

    /** Runs the whole plan over {@code windowMs}; returns when every fault has finished (processes restarted). */
    public void run(long windowMs) throws InterruptedException {
        this.windowMs = windowMs;
        List<Thread> threads = new ArrayList<>();
        for (Map.Entry<FaultKind, Integer> e : planned.entrySet()) {
            FaultKind kind = e.getKey();
            int count = e.getValue();
            if (count <= 0) {
                continue;
            }
            Random random = new Random(seed * 1_000_003L + kind.ordinal());
            Thread t = new Thread(() -> runKind(kind, count, windowMs, random), "fault-" + kind.flag());
            t.start();
            threads.add(t);
        }
        for (Thread t : threads) {
            t.join();
        }
    }

    private void runKind(FaultKind kind, int count, long windowMs, Random random) {
        List<Thread> inFlight = new ArrayList<>();
        for (int i = 0; i < count; i++) {
            long at = t0 + (long) (windowMs * (i + random.nextDouble()) / count);
            Fault fault = plan(kind, random);
            try {
                long wait = at - System.currentTimeMillis();
                if (wait > 0) {
                    Thread.sleep(wait);
                }
            } catch (InterruptedException ie) {
                Thread.currentThread().interrupt();
                return;
            }
            // Service faults may overlap (different services); each runs on its own thread under the service's lock.
            Thread t = new Thread(() -> execute(kind, fault), "fault-" + kind.flag() + "-" + i);
            t.start();
            inFlight.add(t);
            if (kind != FaultKind.KILL_BRIDGE && kind != FaultKind.KILL_SWEEPER && kind != FaultKind.PAUSE) {
                join(t);
            }
        }
        inFlight.forEach(FaultInjector::join);
        // Faults that did not bite are made up for, one at a time, while there is time (at most as many again).
        for (int extra = 0; extra < count && effective(kind) < count && skipped(kind) == 0; extra++) {
            Fault fault = plan(kind, random);
            Thread t = new Thread(() -> execute(kind, fault), "fault-" + kind.flag() + "-extra-" + extra);
            t.start();
            join(t);
        }
    }

    /**
     * The random choices of one fault, drawn when planned, so the plan does not depend on timing: its target,
     * how long it is down (killed before the restart, or stopped), and how long its resource then stays up
     * before the next fault on it may begin ({@code upMs}: the clients reconnect and work, or a fault on a
     * resource that just came back would test the restart only).
     */
    private record Fault(int target, long downMs, long upMs) {
    }

    private Fault plan(FaultKind kind, Random random) {
        return switch (kind) {
            case KILL_BRIDGE -> new Fault(random.nextInt(stack.bridges().size()), 200 + random.nextInt(1300), 0);
            case KILL_SWEEPER -> new Fault(random.nextInt(stack.sweepers().size()), 200 + random.nextInt(1300), 0);
            case PG_IMMEDIATE, PG_FAST -> new Fault(0, random.nextInt(1000), UP_MIN_MS + random.nextInt(1000));
            case PG_TERMINATE -> new Fault(0, 0, 0);
            case BROKER_KILL -> new Fault(0, 200 + random.nextInt(800), UP_MIN_MS + random.nextInt(1000));
            // Longer than the clients' request timeout by 0.5-2 s: every request in flight when it stopped times out.
            case BROKER_OUTAGE -> new Fault(0, Stack.KAFKA_REQUEST_TIMEOUT_MS + 500 + random.nextInt(1500), UP_MIN_MS + random.nextInt(1000));
            case PAUSE -> {
                int target = random.nextInt(stack.bridges().size() + stack.sweepers().size());
                boolean bridge = target < stack.bridges().size();
                // past the session by 2-4 s (and on until another bridge took its partitions), or past the lease by 1-2 s
                yield new Fault(target, bridge ? Stack.SESSION_MS + 2_000 + random.nextInt(2000) : Stack.LEASE_MS + 1_000 + random.nextInt(1000), 0);
            }
            // ahead and behind in turn (target 0: ahead), held 30-40 s
            case CLOCK_STEP -> new Fault(clockSteps.getAndIncrement() % 2, CLOCK_STEP_MS + random.nextInt(10_000), 0);
        };
    }

    /**
     * What a fault did, why it did not bite ({@code null} when it did), and when it was in effect: from the moment it was
     * applied until its resource worked again (harness clock).
     */
    private record Outcome(String what, String notBitten, String target, long startMs, long endMs) {
    }

    private void execute(FaultKind kind, Fault f) {
        try {
            Outcome o = switch (kind) {
                case KILL_BRIDGE -> killAndRestart(stack.bridges().get(f.target), f.downMs);
                case KILL_SWEEPER -> killAndRestart(stack.sweepers().get(f.target), f.downMs);
                case PG_IMMEDIATE -> restartPostgres(PostgresProcess.Shutdown.IMMEDIATE, f.downMs, f.upMs);
                case PG_FAST -> restartPostgres(PostgresProcess.Shutdown.FAST, f.downMs, f.upMs);
                case PG_TERMINATE -> terminate();
                case BROKER_KILL -> brokerKill(f.downMs, f.upMs);
                case BROKER_OUTAGE -> brokerHang(f.downMs, f.upMs);
                case PAUSE -> pause(stack.services().get(f.target), f.downMs);
                case CLOCK_STEP -> clockStep(f.target == 0 ? CLOCK_STEP_MS : -CLOCK_STEP_MS, f.downMs);
            };
            done.get(kind).incrementAndGet();
            outages.add(new Outage(kind, o.target(), o.startMs(), o.endMs()));
            if (o.notBitten() == null) {
                effective.get(kind).incrementAndGet();
            }
            log.accept(String.format("fault %-13s #%d at %6.1f s: %s%s", kind.flag(), done.get(kind).get(),
                    (System.currentTimeMillis() - t0) / 1000.0, o.what(), o.notBitten() == null ? "" : "; did NOT bite: " + o.notBitten()));
        } catch (NoTimeLeft e) {
            skipped.get(kind).incrementAndGet();
        } catch (Exception e) {
            failed.get(kind).incrementAndGet();
            log.accept("fault " + kind.flag() + " could not be injected: " + e);
        }
    }

    /**
     * A slow machine makes faults queue behind each other on their resource (a JVM start can take 20 s);
     * a fault that got its resource only after the window and its grace is counted as skipped, not
     * injected, so a run's length stays bounded.
     */
    private static final class NoTimeLeft extends RuntimeException {
        NoTimeLeft() {
            super(null, null, false, false);
        }
    }

    private void checkTimeLeft() {
        if (System.currentTimeMillis() > t0 + windowMs + GRACE_MS) {
            throw new NoTimeLeft();
        }
    }

    private Outcome killAndRestart(ManagedProcess p, long downMs) throws InterruptedException {
        synchronized (lockOf(p)) {
            checkTimeLeft();
            boolean wasRunning = p.isAlive() && !p.isPaused();
            long start = System.currentTimeMillis();
            p.kill9();
            Thread.sleep(downMs);
            p.start();
            // The next fault on this service waits until it works again: killing a JVM that never gets
            // past its start-up tests start-up only (on a loaded machine a start takes 5-20 s).
            long t = System.currentTimeMillis();
            boolean up = stack.awaitRunning(p, BACK_WITHIN_MS);
            String what = p.name() + " killed, restarted after " + downMs + " ms, " + (up ? "working again after " + (System.currentTimeMillis() - t) + " ms"
                    : "NOT working " + BACK_WITHIN_MS / 1000 + " s later (see its log)");
            if (!up) {
                notBack.add(what + " at " + String.format("%.1f s", (System.currentTimeMillis() - t0) / 1000.0));
            }
            return new Outcome(what, !wasRunning ? "it was not running when killed" : !up ? "it did not come back working" : null,
                    p.name(), start, System.currentTimeMillis());
        }
    }

    /**
     * What the server log says a start after an immediate stop or a fast one must say: crash recovery, or the
     * clean shutdown it starts from.
     */
    static final String RECOVERY_LINE = "automatic recovery in progress";
    static final String CLEAN_SHUTDOWN_LINE = "database system was shut down at";

    private Outcome restartPostgres(PostgresProcess.Shutdown mode, long downMs, long upMs) throws Exception {
        synchronized (postgresLock) {
            checkTimeLeft();
            PostgresProcess pg = stack.postgres();
            long pidBefore = pg.postmasterPid();
            long logFrom = Files.size(pg.logFile());
            long t = System.currentTimeMillis();
            pg.restart(mode, downMs);
            long up = System.currentTimeMillis();
            long back = up - t;
            long pidAfter = pg.postmasterPid();
            String since = logSince(pg.logFile(), logFrom);
            String expected = mode == PostgresProcess.Shutdown.IMMEDIATE ? RECOVERY_LINE : CLEAN_SHUTDOWN_LINE;
            Thread.sleep(upMs);
            String what = "postgres " + mode.name().toLowerCase() + " stop, up again after " + back + " ms (postmaster " + pidBefore + " -> "
                    + pidAfter + "), kept up " + upMs + " ms";
            return new Outcome(what, pidAfter == pidBefore ? "the postmaster's pid did not change"
                    : !since.contains(expected) ? "the server log does not say '" + expected + "'" : null, "postgres", t, up);
        }
    }

    private static String logSince(Path log, long from) throws IOException {
        // only what was written since: a service's log grows to megabytes in a run, and a pause reads it every 250 ms
        try (java.io.RandomAccessFile f = new java.io.RandomAccessFile(log.toFile(), "r")) {
            long start = Math.min(from, f.length());
            byte[] b = new byte[(int) Math.min(Integer.MAX_VALUE - 8, f.length() - start)];
            f.seek(start);
            f.readFully(b);
            return new String(b, StandardCharsets.UTF_8);
        }
    }

    private Outcome terminate() throws Exception {
        synchronized (postgresLock) {
            long t = System.currentTimeMillis();
            int ended = stack.postgres().terminateClientBackends();
            return new Outcome("pg_terminate_backend: " + ended + " connections", ended == 0 ? "no backend was there to end" : null,
                    "postgres", t, System.currentTimeMillis());
        }
    }

    private Outcome brokerKill(long downMs, long upMs) throws InterruptedException {
        synchronized (brokerRestartLock) {
            return brokerKillLocked(downMs, upMs);
        }
    }

    private Outcome brokerKillLocked(long downMs, long upMs) throws InterruptedException {
        synchronized (brokerLock) {
            checkTimeLeft();
            boolean wasRunning = stack.broker().isAlive() && !stack.broker().isPaused();
            long t = System.currentTimeMillis();
            stack.broker().kill9();
            Thread.sleep(downMs);
            long restart = System.currentTimeMillis();
            stack.startBroker();
            long now = System.currentTimeMillis();
            String answers;
            try {
                Stack.awaitBrokerAnswers(stack.bootstrap(), 120_000);
                answers = null;
            } catch (IllegalStateException e) {
                answers = e.getMessage();
            }
            long ledAt = System.currentTimeMillis();
            long led = ledAt - now;
            Thread.sleep(upMs);
            String what = "broker killed, restarted after " + downMs + " ms, port open again " + (now - restart) + " ms after the restart ("
                    + (now - t) + " ms unreachable), leaders named " + led + " ms later, kept up " + upMs + " ms";
            return new Outcome(what, !wasRunning ? "it was not running when killed" : answers, "broker", t, ledAt);
        }
    }

    /**
     * The broker hung rather than gone: SIGSTOP keeps its connections open, so every request in flight waits
     * for an answer until the clients' request timeout ends it, then SIGCONT. On resuming, its controller
     * finds its own broker's heartbeats older than the broker session and fences it, so the partitions'
     * leader stays unavailable until the next heartbeat unfences it.
     */
    private Outcome brokerHang(long stopMs, long upMs) throws InterruptedException {
        synchronized (brokerLock) {
            checkTimeLeft();
            long start = System.currentTimeMillis();
            if (!stack.broker().pause()) {
                throw new IllegalStateException("the broker is not running");
            }
            try {
                Thread.sleep(stopMs);
            } finally {
                stack.broker().resume();
            }
            long t = System.currentTimeMillis();
            Stack.awaitBrokerAnswers(stack.bootstrap(), 120_000);
            long answeredAt = System.currentTimeMillis();
            long answers = answeredAt - t;
            Thread.sleep(upMs);
            // It was running (pause() said so) and answers again (or awaitBrokerAnswers threw): it bit.
            return new Outcome("broker SIGSTOP for " + stopMs + " ms, then SIGCONT; answering metadata again " + answers + " ms later, kept up "
                    + upMs + " ms", null, "broker", start, answeredAt);
        }
    }

    /** What a bridge logs when the group gave its partitions to another member while it was away (IngestLoop). */
    static final String BRIDGE_LOST_LINE = "partitions LOST";
    /** What a bridge logs when it starts consuming partitions (PartitionPositions): "consuming [topic-p, ...] from ...". */
    static final String BRIDGE_CONSUMING_LINE = "consuming [";
    /** What a bridge logs when the group takes its partitions in a rebalance it took part in (IngestLoop). */
    static final String BRIDGE_REVOKED_LINE = "partitions revoked";
    /** What a bridge logs when its batch's stored-offset check found another consumer ahead of it (IngestLoop): fenced. */
    static final String BRIDGE_FENCED_LINE = "fenced: another consumer advanced the stored offsets";
    /** How long after a bridge's resume its log may take to say it lost its partitions: its next poll finds itself out. */
    private static final long LOST_WITHIN_MS = 30_000;
    /**
     * How long a bridge stays stopped at most while it waits for another bridge to take its partitions: the session (6 s),
     * then the rebalance, which waits for the other member's next poll; a broker restart meanwhile starts the session
     * again (the coordinator reloads the group).
     */
    static final long BRIDGE_PAUSE_MAX_MS = 45_000;

    /** How long a pause waits for its target to hold work before it stops it anyway (and the pause may not bite). */
    private static final long BUSY_WAIT_MS = 20_000;

    /** Bridge pauses whose next batch after the resume was fenced by the stored offsets (reported: a fact of the run). */
    private final AtomicInteger fencedAfterPause = new AtomicInteger();

    public int fencedAfterPause() {
        return fencedAfterPause.get();
    }

    /**
     * SIGSTOP past the lease or the session. It bit when the process held work and lost it: a bridge held command
     * partitions and, while it was stopped, another bridge took them (that bridge's log names them, docs/fault-harness.md
     * "Faults that count") and after the resume its own log says it lost them; a sweeper had a transaction open or a
     * statement running in PostgreSQL at the stop (its connections, by client port; frozen while it is stopped).
     */
    private Outcome pause(ManagedProcess p, long pauseMs) throws Exception {
        if (!stack.bridges().contains(p)) {
            synchronized (lockOf(p)) {
                checkTimeLeft();
                return pauseSweeper(p, pauseMs);
            }
        }
        // One bridge stopped at a time: with both stopped nobody can take the partitions, and the pause proves nothing (a
        // run on 2026-12-06 stopped both for 45 s).
        synchronized (bridgePauseLock) {
            synchronized (lockOf(p)) {
                synchronized (brokerRestartLock) {
                    checkTimeLeft();
                    return pauseBridge(p, pauseMs);
                }
            }
        }
    }

    private final Object bridgePauseLock = new Object();
    /**
     * Held by a broker kill and by a bridge's pause. A restarted broker's coordinator loads the bridges' group again and
     * starts every member's session anew, so with a kill every few seconds a stopped bridge never outlives its session
     * and nobody takes its partitions (2026-12-06: 45 s pauses with no takeover, and minutes of ingest without an
     * assignment). A broker hang (SIGSTOP) does not restart the sessions and runs on beside a pause.
     */
    private final Object brokerRestartLock = new Object();

    /**
     * A bridge is stopped once it holds partitions (its own log's last assignment, waited for up to BUSY_WAIT_MS), for
     * {@code pauseMs} (past the session) and then until another bridge's log says it consumes one of them (at most
     * {@link #BRIDGE_PAUSE_MAX_MS}), so the pause costs it its partitions; after the resume its log must say it lost them.
     */
    private Outcome pauseBridge(ManagedProcess p, long pauseMs) throws Exception {
        long until = System.currentTimeMillis() + BUSY_WAIT_MS;
        List<String> held = BridgeLog.held(p.logFile());
        while (held.isEmpty() && System.currentTimeMillis() < until) {
            Thread.sleep(250);
            held = BridgeLog.held(p.logFile());
        }
        List<ManagedProcess> others = stack.bridges().stream().filter(b -> b != p).toList();
        Map<ManagedProcess, Long> othersFrom = new java.util.HashMap<>();
        for (ManagedProcess o : others) {
            othersFrom.put(o, Files.size(o.logFile()));
        }
        long logFrom = Files.size(p.logFile());
        long start = System.currentTimeMillis();
        if (!p.pause()) {
            throw new IllegalStateException(p.name() + " is not running");
        }
        String takenBy = null;
        long resumed;
        try {
            Thread.sleep(pauseMs);
            long cap = start + BRIDGE_PAUSE_MAX_MS;
            while (!held.isEmpty() && (takenBy = takenBy(others, othersFrom, held)) == null && System.currentTimeMillis() < cap) {
                Thread.sleep(250);
            }
        } finally {
            p.resume();
            resumed = System.currentTimeMillis();
        }
        // Its own word that it gave them up: lost (out of the group), revoked (a rebalance it rejoined), or its batch in
        // flight fenced by the stored offsets the other bridge advanced.
        long deadline = resumed + LOST_WITHIN_MS;
        String since = "";
        while (!held.isEmpty() && takenBy != null && !gaveUp(since = logSince(p.logFile(), logFrom)) && System.currentTimeMillis() < deadline) {
            Thread.sleep(250);
        }
        if (since.contains(BRIDGE_FENCED_LINE)) {
            fencedAfterPause.incrementAndGet();
        }
        String notBitten = held.isEmpty() ? "it held no partitions at the stop (its log named none within " + BUSY_WAIT_MS / 1000 + " s)"
                : takenBy == null ? "no other bridge's log named one of its partitions within " + BRIDGE_PAUSE_MAX_MS / 1000 + " s of the stop"
                : !gaveUp(since) ? "its log does not say it lost them ('" + BRIDGE_LOST_LINE + "', '" + BRIDGE_REVOKED_LINE + "' or fenced) within "
                        + LOST_WITHIN_MS / 1000 + " s of the resume" : null;
        return new Outcome(p.name() + " SIGSTOP for " + (resumed - start) + " ms, then SIGCONT (held " + held.size() + " partitions"
                + (takenBy != null ? "; " + takenBy : "") + (since.contains(BRIDGE_FENCED_LINE) ? "; its next batch fenced" : "") + ")",
                notBitten, p.name(), start, resumed);
    }

    private static boolean gaveUp(String log) {
        return log.contains(BRIDGE_LOST_LINE) || log.contains(BRIDGE_REVOKED_LINE) || log.contains(BRIDGE_FENCED_LINE);
    }

    /** Which other bridge's log, since the stop, says it consumes one of {@code held}; null while none does. */
    private static String takenBy(List<ManagedProcess> others, Map<ManagedProcess, Long> from, List<String> held) throws IOException {
        for (ManagedProcess o : others) {
            for (String partition : BridgeLog.consumed(logSince(o.logFile(), from.get(o)))) {
                if (held.contains(partition)) {
                    return o.name() + " took " + partition;
                }
            }
        }
        return null;
    }

    /**
     * A sweeper's transactions last milliseconds: sampled first, most end before the stop lands. So it is stopped, then
     * looked at, and let go at once (a stop of a few ms) unless it is frozen inside one, for up to BUSY_WAIT_MS.
     */
    private Outcome pauseSweeper(ManagedProcess p, long pauseMs) throws Exception {
        Probe probe = new Probe(p);
        try {
            long until = System.currentTimeMillis() + BUSY_WAIT_MS;
            List<String> atStop;
            long start;
            while (true) {
                start = System.currentTimeMillis();
                if (!p.pause()) {
                    throw new IllegalStateException(p.name() + " is not running");
                }
                atStop = probe.backends();
                if (busy(atStop) || System.currentTimeMillis() >= until) {
                    break;
                }
                p.resume();
                Thread.sleep(20);
            }
            long resumed;
            try {
                Thread.sleep(pauseMs);
            } finally {
                p.resume();
                resumed = System.currentTimeMillis();
            }
            return new Outcome(p.name() + " SIGSTOP for " + (resumed - start) + " ms, then SIGCONT (its backends at the stop: " + atStop + ")",
                    busy(atStop) ? null : "no transaction or statement of it was in PostgreSQL at the stop " + atStop, p.name(), start, resumed);
        } finally {
            probe.close();
        }
    }

    /**
     * The stepped service's wall clock moved by {@code offsetMs} for {@code holdMs}, then back to the real time. It bit when a
     * process under the same library, file and variables read the stepped time (within 1.5 s) during the step.
     */
    private Outcome clockStep(long offsetMs, long holdMs) throws InterruptedException {
        io.queen.timers.processes.stack.SteppedClock clock = stack.steppedClock();
        if (clock == null) {
            throw new IllegalStateException("no service runs with a stepped clock (Stack.withSteppedClock)");
        }
        synchronized (clockLock) {
            checkTimeLeft();
            long start = System.currentTimeMillis();
            clock.step(offsetMs);
            Thread.sleep(1_500); // libfaketime reads the file again at most once a second
            long seen = clock.probe();
            Thread.sleep(Math.max(0, holdMs - 1_500));
            clock.step(0);
            long end = System.currentTimeMillis();
            Thread.sleep(1_500);
            long after = clock.probe();
            boolean bit = Math.abs(seen - offsetMs) <= 1_500;
            return new Outcome(stack.steppedService() + " clock stepped " + (offsetMs >= 0 ? "+" : "") + offsetMs / 1000 + " s for " + (end - start)
                    + " ms (read through its clock: " + seen + " ms off, then " + after + " ms off after the step back)",
                    bit ? null : "its clock read " + seen + " ms off, not " + offsetMs, stack.steppedService(), start, end);
        }
    }

    private static boolean busy(List<String> backends) {
        return backends.stream().anyMatch(b -> b.startsWith("active") || b.contains("in a transaction"));
    }

    /**
     * Reads what a process holds, riding out the harness's own PostgreSQL and broker faults: an answer that
     * cannot be read is "nothing held" (-1 partitions for "cannot say"), so an unreadable moment never
     * counts as a bite.
     */
    private final class Probe implements AutoCloseable {
        private final ManagedProcess p;
        private Connection c;
        private List<Integer> ports = List.of();
        private long portsAt;

        Probe(ManagedProcess p) {
            this.p = p;
        }

        List<String> backends() {
            try {
                if (c == null || c.isClosed()) {
                    c = stack.postgres().connect();
                }
                // Reading /proc on every sample would cost a core; the pool's sockets are stable between reconnects.
                if (System.currentTimeMillis() - portsAt > 200) {
                    ports = stack.postgresPortsOf(p);
                    portsAt = System.currentTimeMillis();
                }
                return stack.backendsAt(c, ports);
            } catch (java.sql.SQLException e) {
                close();
                return List.of("cannot read: " + e.getMessage());
            }
        }

        @Override
        public void close() {
            try {
                if (c != null) {
                    c.close();
                }
            } catch (java.sql.SQLException ignored) {
                // a connection the harness's own fault ended
            }
            c = null;
        }
    }

    private Object lockOf(ManagedProcess p) {
        return processLocks.computeIfAbsent(p.name(), n -> new Object());
    }

    private static void join(Thread t) {
        try {
            t.join();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
