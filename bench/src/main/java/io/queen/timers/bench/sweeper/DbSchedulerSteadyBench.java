package io.queen.timers.bench.sweeper;

import static io.queen.timers.bench.sweeper.BenchStack.execute;
import static io.queen.timers.bench.sweeper.BenchStack.intArg;
import static io.queen.timers.bench.sweeper.BenchStack.longOf;

import com.github.kagkarlsson.scheduler.Scheduler;
import com.github.kagkarlsson.scheduler.task.SchedulableInstance;
import com.github.kagkarlsson.scheduler.task.helper.OneTimeTask;
import com.github.kagkarlsson.scheduler.task.helper.Tasks;
import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import io.queen.timers.bench.BenchPostgres;
import io.queen.timers.bench.peer.DbSchedulerTable;
import io.queen.timers.bench.pipeline.ProcCpu;
import io.queen.timers.bench.pipeline.SteadyReport;
import io.queen.timers.processes.PostgresProcess;
import io.queen.timers.testkit.FreshDatabase;
import io.queen.timers.testkit.TestPostgres;
import java.lang.management.ManagementFactory;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.DoubleSupplier;

/**
 * db-scheduler 16.7.1 under a steady load, peer (a) of issue 48's steady comparison: one-time no-op tasks scheduled
 * at {@code rate} per second for {@code seconds}, each due 1–10 s after it is scheduled (uniform, {@code Random(42)}, as
 * PipelineBench's timers), with FireBench's fair settings: 8 threads on a pool of 8 connections, lock-and-fetch 1.0, 4.0
 * (db-scheduler's README: "for high throughput"), polling every 100 ms.
 *
 * <pre>
 * mvn -B -q -pl bench -am package -DskipTests
 * java -Xmx1g -cp bench/target/benchmarks.jar io.queen.timers.bench.sweeper.DbSchedulerSteadyBench rate=2000 seconds=60 [pool=8] [poll=100]
 * # on a server already running (PipelineBench --peers starts it so, with the services' JVM): cold, in a database of its own
 * java ... DbSchedulerSteadyBench rate=2000 seconds=120 jdbc=jdbc:postgresql://127.0.0.1:PORT/DB user=NAME pgpid=PID warmup=0
 * </pre>
 *
 * A feeder (the main thread) schedules through db-scheduler's own client API, {@code scheduleBatch}, once per
 * 10 ms tick with every task whose turn has come: one insert batch per tick, as a producer of that rate would
 * batch. If the feed falls behind its pace the output says so, and the rate it reached. Each task's lateness
 * is its execution start ({@code System.currentTimeMillis()} in the task) minus its execution_time, carried in
 * its instance id. db-scheduler does not wake up for the next due time: it polls, so the polling interval is a
 * floor under its lateness. Kept up means every task had run 15 s after the last one was due.
 *
 * <p>Measured as {@link SteadyReport} measures every system of the comparison: lateness over the first {@code first}
 * seconds (default 60) of the measured feed and after them; CPU (this JVM, the feeder included, + PostgreSQL's process
 * tree) and WAL per task over the warm window. Before the measured feed, {@code warmup} seconds (default 15; 0 = cold)
 * at the same rate, run until every warm-up task has executed, then VACUUM ANALYZE. Last, {@code figure} lines under
 * {@code label} (default {@code dbs<rate>}).
 */
public final class DbSchedulerSteadyBench {

    private static final long TICK_MILLIS = 10;
    private static final long KEPT_UP_MILLIS = 15_000;

    private DbSchedulerSteadyBench() {}

    /** One feed: when each task was scheduled, when each executed and how late, and when the last one ran. */
    private static final class Round {
        final String prefix;
        final long[] scheduledAt;
        final long[] startedAt;
        final long[] lateMs;
        final AtomicInteger executed = new AtomicInteger();
        final AtomicLong lastExecutedMillis = new AtomicLong();
        long lastDueMillis;

        Round(String prefix, int n) {
            this.prefix = prefix;
            this.scheduledAt = new long[n];
            this.startedAt = new long[n];
            this.lateMs = new long[n];
        }

        void executed(long startMillis, long dueMillis) {
            int i = executed.getAndIncrement();
            if (i < lateMs.length) { // an execution beyond n would be a second run of one task; counted, not recorded
                startedAt[i] = startMillis;
                lateMs[i] = startMillis - dueMillis;
            }
            lastExecutedMillis.accumulateAndGet(startMillis, Math::max);
        }
    }

    public static void main(String[] args) throws Exception {
        String jdbc = stringArg(args, "jdbc", null);
        int rate = intArg(args, "rate", 2000);
        int seconds = intArg(args, "seconds", 60);
        int pool = intArg(args, "pool", 8);
        int pollMs = intArg(args, "poll", 100);
        int warmupSeconds = intArg(args, "warmup", jdbc == null ? 15 : 0);
        int firstSeconds = intArg(args, "first", 60);
        String label = stringArg(args, "label", "dbs" + rate);
        long pgPid;
        FreshDatabase fresh = null;
        HikariDataSource admin;
        HikariDataSource ds;
        if (jdbc == null) {
            PostgresProcess pg = BenchPostgres.startForTestkit(); // durable unless -Dbench.fsync=off (docs/benchmarks.md)
            pgPid = pg.postmasterPid();
            fresh = TestPostgres.createDatabase("DbSchedulerSteadyBench");
            admin = fresh.newDataSource(2);
            ds = fresh.newDataSource(pool);
        } else {
            pgPid = Long.parseLong(stringArg(args, "pgpid", "-1"));
            admin = dataSource(jdbc, stringArg(args, "user", "postgres"), 2);
            ds = dataSource(jdbc, stringArg(args, "user", "postgres"), pool);
        }
        Round warm = new Round("w", rate * warmupSeconds);
        Round measured = new Round("m", rate * seconds);
        Round[] other = new Round[1]; // burst and single: their round
        OneTimeTask<Void> noop = Tasks.oneTime("noop").execute((instance, ctx) -> {
            long now = System.currentTimeMillis();
            String id = instance.getId(); // <round><seq>@<due millis>
            Round r = other[0] != null ? other[0] : id.startsWith(measured.prefix) ? measured : warm;
            r.executed(now, Long.parseLong(id.substring(id.indexOf('@') + 1)));
        });

        Random random = new Random(42);
        var os = (com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean();
        Map<String, DoubleSupplier> cpu = new LinkedHashMap<>();
        cpu.put("db-scheduler JVM", () -> os.getProcessCpuTime() / 1e9);
        cpu.put(SteadyReport.POSTGRES, () -> ProcCpu.treeSeconds(pgPid));
        SteadyReport.Meter meter = new SteadyReport.Meter(cpu, admin::getConnection);
        try {
            DbSchedulerTable.create(admin);
            Scheduler scheduler = Scheduler.create(ds, noop).threads(pool).pollUsingLockAndFetch(1.0, 4.0)
                    .pollingInterval(Duration.ofMillis(pollMs)).build();
            scheduler.start();
            try {
                String mode = stringArg(args, "mode", "steady");
                if (!mode.equals("steady")) {
                    int count = intArg(args, "count", mode.equals("burst") ? 100_000 : 300);
                    Round round = new Round("m", count);
                    other[0] = round; // the task reports there from now on
                    if (mode.equals("burst")) {
                        // as PipelineBench's burst: after 20,000 end to end, unmeasured (the JIT, the pool)
                        Round warmBurst = new Round("w", 20_000);
                        other[0] = warmBurst;
                        burst(scheduler, noop, warmBurst, meter, null);
                        execute(admin, "VACUUM ANALYZE scheduled_tasks");
                        other[0] = round;
                        burst(scheduler, noop, round, meter, stringArg(args, "label", "dbsburst"));
                    } else {
                        single(scheduler, noop, round, stringArg(args, "label", "dbssingle"));
                    }
                } else {
                    if (warmupSeconds > 0) {
                        System.out.printf("warm-up: %d s at %,d tasks/s (not measured)%n", warmupSeconds, rate);
                        feed(scheduler, noop, warm, rate, warmupSeconds, random, Long.MAX_VALUE, () -> { });
                        awaitExecuted(warm);
                        execute(admin, "VACUUM ANALYZE scheduled_tasks");
                    } else {
                        System.out.println("cold: the measured feed begins as the scheduler starts");
                    }
                    SteadyReport.Snapshot s0 = meter.snap();
                    SteadyReport.Snapshot[] s1 = new SteadyReport.Snapshot[1];
                    double fedPerSecond = feed(scheduler, noop, measured, rate, seconds, random, s0.atMs() + firstSeconds * 1000L,
                            () -> s1[0] = meter.snap());
                    SteadyReport.Snapshot s2 = meter.snap();
                    boolean keptUp = awaitExecuted(measured);
                    SteadyReport.Snapshot s3 = meter.snap();
                    System.out.printf("db-scheduler 16.7.1 steady: %,d tasks scheduled at %,.0f tasks/s (asked %,d) for %d s, each due 1-10 s"
                            + " ahead; threads=%d, pool=%d, lock-and-fetch 1.0, 4.0, polling every %d ms; rows left in scheduled_tasks: %,d%n",
                            measured.lateMs.length, fedPerSecond, rate, seconds, pool, pool, pollMs,
                            longOf(admin, "SELECT count(*) FROM scheduled_tasks"));
                    int executed = Math.min(measured.lateMs.length, measured.executed.get());
                    SteadyReport.report(new SteadyReport.Run(label, "DB-SCHEDULER no-op tasks", "task", measured.lateMs.length, s0,
                            s1[0] == null ? s2 : s1[0], s2, s3, measured.scheduledAt, Arrays.copyOf(measured.startedAt, executed),
                            Arrays.copyOf(measured.lateMs, executed), keptUp), System.out::println);
                    SteadyReport.figure(label, "rate", fedPerSecond, "tasks/s");
                    System.out.println(BenchStack.memory());
                }
            } finally {
                scheduler.stop();
            }
        } finally {
            ds.close();
            admin.close();
            if (fresh != null) {
                fresh.close();
            }
        }
        System.exit(0);
    }

    /**
     * Peer (a) beside PipelineBench's burst: {@code count} no-op tasks all due at the instant the first batch is scheduled,
     * scheduled in batches of 1,000 as fast as scheduleBatch takes them: first batch → last execution start.
     */
    private static void burst(Scheduler scheduler, OneTimeTask<Void> task, Round round, SteadyReport.Meter meter, String label)
            throws InterruptedException {
        int n = round.lateMs.length;
        SteadyReport.Snapshot s0 = meter.snap();
        long due = s0.atMs();
        for (int next = 0; next < n; ) {
            List<SchedulableInstance<?>> batch = new ArrayList<>(1000);
            for (int end = Math.min(n, next + 1000); next < end; next++) {
                batch.add(SchedulableInstance.of(task.instance(round.prefix + "b" + next + "@" + due), Instant.ofEpochMilli(due)));
            }
            scheduler.scheduleBatch(batch);
        }
        long fedMs = System.currentTimeMillis();
        long deadline = fedMs + 30 * 60_000L;
        while (round.executed.get() < n && System.currentTimeMillis() < deadline) {
            Thread.sleep(20);
        }
        SteadyReport.Snapshot s1 = meter.snap();
        double seconds = (round.lastExecutedMillis.get() - due) / 1000.0;
        if (label == null) {
            System.out.printf("warm-up: %,d no-op tasks due at once in %.1f s (not measured)%n", n, seconds);
            return;
        }
        long[] late = Arrays.copyOf(round.lateMs, Math.min(n, round.executed.get()));
        Arrays.sort(late);
        double cpu = s1.cpu().values().stream().mapToDouble(Double::doubleValue).sum() - s0.cpu().values().stream().mapToDouble(Double::doubleValue).sum();
        System.out.printf("DB-SCHEDULER BURST: %,d no-op tasks due at once, scheduled in %.2f s; %,d executed, the last %.2f s after the"
                + " first was scheduled = %,.0f tasks/s end to end; lateness %s; CPU %.0f µs per task (this JVM + PostgreSQL)%n", n,
                (fedMs - due) / 1000.0, round.executed.get(), seconds, n / seconds, SteadyReport.percentiles(late), cpu * 1e6 / n);
        SteadyReport.figure(label, "end_to_end_per_s", n / seconds, "tasks/s");
        SteadyReport.figure(label, "cpu_us_per_task", cpu * 1e6 / n, "us");
        SteadyReport.figure(label, "p99_ms", SteadyReport.pct(late, 0.99), "ms");
    }

    /** Peer (a) beside PipelineBench's single: one task due now at a time, 100 ms apart: scheduleBatch called → executed. */
    private static void single(Scheduler scheduler, OneTimeTask<Void> task, Round round, String label) throws InterruptedException {
        int n = round.lateMs.length;
        long[] toExecuted = new long[n];
        for (int i = 0; i < n; i++) {
            long sent = System.currentTimeMillis();
            scheduler.scheduleBatch(List.of(SchedulableInstance.of(task.instance("s" + i + "@" + sent), Instant.ofEpochMilli(sent))));
            long deadline = sent + 30_000;
            while (round.executed.get() < i + 1) {
                if (System.currentTimeMillis() > deadline) {
                    throw new IllegalStateException("single task " + i + " not executed within 30 s");
                }
                java.util.concurrent.locks.LockSupport.parkNanos(200_000);
            }
            toExecuted[i] = round.lastExecutedMillis.get() - sent;
            Thread.sleep(100);
        }
        Arrays.sort(toExecuted);
        System.out.printf("DB-SCHEDULER SINGLE: %d no-op tasks one at a time, due when scheduled: scheduled → executed %s (it polls every"
                + " 100 ms)%n", n, SteadyReport.percentiles(toExecuted));
        SteadyReport.figure(label, "to_executed_p50_ms", SteadyReport.pct(toExecuted, 0.5), "ms");
        SteadyReport.figure(label, "to_executed_p99_ms", SteadyReport.pct(toExecuted, 0.99), "ms");
    }

    private static HikariDataSource dataSource(String jdbc, String user, int size) {
        HikariConfig c = new HikariConfig();
        c.setJdbcUrl(jdbc);
        c.setUsername(user);
        c.setMaximumPoolSize(size);
        return new HikariDataSource(c);
    }

    /**
     * Schedules {@code rate * seconds} tasks, task i at i / rate s after the start, each due 1–10 s after the tick that
     * schedules it; {@code atWindow} runs once, at the first tick at or after {@code windowAtMillis}. Returns the rate
     * reached (tasks over the time the feed took).
     */
    private static double feed(Scheduler scheduler, OneTimeTask<Void> task, Round round, int rate, int seconds, Random random,
            long windowAtMillis, Runnable atWindow) throws InterruptedException {
        int n = rate * seconds;
        long start = System.nanoTime();
        long maxBehindMillis = 0;
        int next = 0;
        boolean windowed = false;
        while (next < n) {
            long elapsed = System.nanoTime() - start;
            int upTo = (int) Math.min(n, elapsed * rate / 1_000_000_000L + 1);
            // the oldest task of this tick was due to be scheduled at next / rate s: how far the feed is behind it
            maxBehindMillis = Math.max(maxBehindMillis, elapsed / 1_000_000 - next * 1000L / rate);
            long now = System.currentTimeMillis();
            if (!windowed && now >= windowAtMillis) {
                atWindow.run();
                windowed = true;
            }
            List<SchedulableInstance<?>> batch = new ArrayList<>(upTo - next);
            int from = next;
            for (; next < upTo; next++) {
                long due = now + 1_000 + random.nextInt(9_001);
                round.lastDueMillis = Math.max(round.lastDueMillis, due);
                batch.add(SchedulableInstance.of(task.instance(round.prefix + next + "@" + due), Instant.ofEpochMilli(due)));
            }
            scheduler.scheduleBatch(batch);
            Arrays.fill(round.scheduledAt, from, next, System.currentTimeMillis());
            long sleep = TICK_MILLIS - (System.nanoTime() - start - elapsed) / 1_000_000;
            if (sleep > 0 && next < n) {
                Thread.sleep(sleep);
            }
        }
        double took = (System.nanoTime() - start) / 1e9;
        if (maxBehindMillis > 1_000) {
            System.out.printf("FEED FELL BEHIND: scheduleBatch did not keep the pace of %,d tasks/s; up to %,d ms behind; %,d tasks"
                    + " in %.2f s instead of %d s%n", rate, maxBehindMillis, n, took, seconds);
        }
        return n / took;
    }

    /** Waits until every task of the round executed, or 15 s after its last due time. Returns whether all did. */
    private static boolean awaitExecuted(Round round) throws InterruptedException {
        long deadline = round.lastDueMillis + KEPT_UP_MILLIS;
        while (round.executed.get() < round.lateMs.length && System.currentTimeMillis() < deadline) {
            Thread.sleep(20);
        }
        return round.executed.get() >= round.lateMs.length;
    }

    private static String stringArg(String[] args, String name, String dflt) {
        for (String a : args) {
            if (a.startsWith(name + "=")) {
                return a.substring(name.length() + 1);
            }
        }
        return dflt;
    }
}
