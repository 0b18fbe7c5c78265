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
    /** Kills whose process was not working again {@link #BACK_WITHIN_MS} later: each a violation of the run. */
    private final List<String> notBack = new java.util.concurrent.CopyOnWriteArrayList<>();
    /** How long a killed (and restarted) service has to work again: a JVM start on a loaded 2-core machine takes 5-20 s. */
    public static final long BACK_WITHIN_MS = 120_000;
    private final Object postgresLock = new Object();
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
                long past = target < stack.bridges().size() ? Stack.SESSION_MS : Stack.LEASE_MS;
                yield new Fault(target, past + 1_000 + random.nextInt(1000), 0);
            }
        };
    }

    /** What a fault did, and why it did not bite ({@code null} when it did). */
    private record Outcome(String what, String notBitten) {
        static Outcome bit(String what) {
            return new Outcome(what, null);
        }
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
            };
            done.get(kind).incrementAndGet();
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
            return new Outcome(what, !wasRunning ? "it was not running when killed" : !up ? "it did not come back working" : null);
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
            long back = System.currentTimeMillis() - t;
            long pidAfter = pg.postmasterPid();
            String since = logSince(pg.logFile(), logFrom);
            String expected = mode == PostgresProcess.Shutdown.IMMEDIATE ? RECOVERY_LINE : CLEAN_SHUTDOWN_LINE;
            Thread.sleep(upMs);
            String what = "postgres " + mode.name().toLowerCase() + " stop, up again after " + back + " ms (postmaster " + pidBefore + " -> "
                    + pidAfter + "), kept up " + upMs + " ms";
            return new Outcome(what, pidAfter == pidBefore ? "the postmaster's pid did not change"
                    : !since.contains(expected) ? "the server log does not say '" + expected + "'" : null);
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
            int ended = stack.postgres().terminateClientBackends();
            return new Outcome("pg_terminate_backend: " + ended + " connections", ended == 0 ? "no backend was there to end" : null);
        }
    }

    private Outcome brokerKill(long downMs, long upMs) throws InterruptedException {
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
            long led = System.currentTimeMillis() - now;
            Thread.sleep(upMs);
            String what = "broker killed, restarted after " + downMs + " ms, port open again " + (now - restart) + " ms after the restart ("
                    + (now - t) + " ms unreachable), leaders named " + led + " ms later, kept up " + upMs + " ms";
            return new Outcome(what, !wasRunning ? "it was not running when killed" : answers);
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
            long answers = System.currentTimeMillis() - t;
            Thread.sleep(upMs);
            // It was running (pause() said so) and answers again (or awaitBrokerAnswers threw): it bit.
            return Outcome.bit("broker SIGSTOP for " + stopMs + " ms, then SIGCONT; answering metadata again " + answers + " ms later, kept up " + upMs + " ms");
        }
    }

    /** What a bridge logs when the group gave its partitions to another member while it was away (IngestLoop). */
    static final String BRIDGE_LOST_LINE = "partitions LOST";
    /** How long after a bridge's resume its log may take to say so: its next poll finds itself out of the group. */
    private static final long LOST_WITHIN_MS = 30_000;

    /** How long a pause waits for its target to hold work before it stops it anyway (and the pause may not bite). */
    private static final long BUSY_WAIT_MS = 20_000;

    /**
     * SIGSTOP past the lease or the session. It bit when the process held work: a bridge held command partitions
     * (its group member, by client id) and lost them during the pause; a sweeper had a transaction open or a
     * statement running in PostgreSQL at the stop (its connections, by client port; frozen while it is stopped).
     * The pause waits (up to BUSY_WAIT_MS) for such a moment: a bridge holding partitions; a sweeper is stopped and
     * looked at until it is frozen inside a transaction (each miss a stop of a few ms).
     */
    private Outcome pause(ManagedProcess p, long pauseMs) throws Exception {
        synchronized (lockOf(p)) {
            checkTimeLeft();
            boolean bridge = stack.bridges().contains(p);
            Probe probe = new Probe(p);
            try {
                long until = System.currentTimeMillis() + BUSY_WAIT_MS;
                int heldBefore = 0;
                List<String> atStop = List.of();
                long logFrom = 0;
                if (bridge) {
                    // a bridge's partitions change slowly: wait until it holds some, then stop it
                    while (System.currentTimeMillis() < until && probe.partitions() <= 0) {
                        Thread.sleep(250);
                    }
                    heldBefore = probe.partitions();
                    logFrom = Files.size(p.logFile());
                    if (!p.pause()) {
                        throw new IllegalStateException(p.name() + " is not running");
                    }
                } else {
                    // A sweeper's transactions last milliseconds: sampled first, most end before the stop lands. So it is
                    // stopped, then looked at, and let go at once (a stop of a few ms) unless it is frozen inside one.
                    while (true) {
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
                }
                String notBitten;
                int heldAfterPause = 0;
                try {
                    Thread.sleep(pauseMs);
                    if (bridge) {
                        notBitten = null; // judged after the resume, from the bridge's own log
                        heldAfterPause = probe.partitions();
                    } else {
                        notBitten = busy(atStop) ? null : "no transaction or statement of it was in PostgreSQL at the stop " + atStop;
                    }
                } finally {
                    p.resume();
                }
                if (bridge) {
                    // The bite is the bridge's own word that the group gave its partitions away while it was stopped: the
                    // group's view (the admin client) is often unreadable while the broker has faults of its own.
                    long deadline = System.currentTimeMillis() + LOST_WITHIN_MS;
                    boolean lost = false;
                    while (!(lost = logSince(p.logFile(), logFrom).contains(BRIDGE_LOST_LINE)) && System.currentTimeMillis() < deadline) {
                        Thread.sleep(250);
                    }
                    notBitten = lost ? null : "its log does not say '" + BRIDGE_LOST_LINE + "' within " + LOST_WITHIN_MS / 1000
                            + " s of the resume (partitions held at the stop: " + heldBefore + ", at the end of the pause: " + heldAfterPause + ")";
                }
                return new Outcome(p.name() + " SIGSTOP for " + pauseMs + " ms, then SIGCONT"
                        + (bridge ? " (partitions held at the stop: " + heldBefore + ")" : " (its backends at the stop: " + atStop + ")"), notBitten);
            } finally {
                probe.close();
            }
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

        int partitions() throws InterruptedException {
            try {
                Integer held = stack.bridgeAssignments().get(p.name());
                return held == null ? 0 : held;
            } catch (IllegalStateException e) {
                return -1;
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
