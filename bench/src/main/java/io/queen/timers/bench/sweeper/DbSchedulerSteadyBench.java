package io.queen.timers.bench.sweeper;

import static io.queen.timers.bench.sweeper.BenchStack.execute;
import static io.queen.timers.bench.sweeper.BenchStack.intArg;
import static io.queen.timers.bench.sweeper.BenchStack.longOf;

import com.github.kagkarlsson.scheduler.Scheduler;
import com.github.kagkarlsson.scheduler.task.SchedulableInstance;
import com.github.kagkarlsson.scheduler.task.helper.OneTimeTask;
import com.github.kagkarlsson.scheduler.task.helper.Tasks;
import com.zaxxer.hikari.HikariDataSource;
import io.queen.timers.bench.BenchPostgres;
import io.queen.timers.bench.pipeline.ProcCpu;
import io.queen.timers.processes.PostgresProcess;
import io.queen.timers.testkit.FreshDatabase;
import io.queen.timers.testkit.TestPostgres;
import java.lang.management.ManagementFactory;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Random;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/**
 * db-scheduler 16.7.1 under a steady load, the comparison issue 25 point 3 asks for beside {@code PipelineBench
 * --mode steady}: one-time no-op tasks scheduled at {@code rate} per second for {@code seconds}, each due 1–10 s
 * after it is scheduled (uniform, {@code Random(42)}, as PipelineBench's timers), on the durable benchmark
 * PostgreSQL, with FireBench's fair settings: 8 threads on a pool of 8 connections, lock-and-fetch 1.0, 4.0
 * (db-scheduler's README: "for high throughput"), polling every 100 ms.
 *
 * <pre>
 * mvn -B -q -pl bench -am package -DskipTests
 * java -Xmx1g -cp bench/target/benchmarks.jar io.queen.timers.bench.sweeper.DbSchedulerSteadyBench rate=2000 seconds=60 [pool=8] [poll=100]
 * </pre>
 *
 * A feeder (the main thread) schedules through db-scheduler's own client API, {@code scheduleBatch}, once per
 * 10 ms tick with every task whose turn has come: one insert batch per tick, as a producer of that rate would
 * batch. If the feed falls behind its pace the output says so, and the rate it reached. Each task's lateness
 * is its execution start ({@code System.currentTimeMillis()} in the task) minus its execution_time, carried in
 * its instance id. db-scheduler does not wake up for the next due time: it polls, so the polling interval is a
 * floor under its lateness. Kept up means every task had run 15 s after the last one was due.
 *
 * <p>CPU per task: this JVM (the feeder and db-scheduler) plus PostgreSQL's process tree, from the start of the
 * measured feed until every measured task has executed (or the kept-up deadline passed), divided by the tasks
 * executed. Before it, an unmeasured 15 s
 * at the same rate, run until every warm-up task has executed, then VACUUM ANALYZE. Last, one
 * {@code figure <name> <value> <unit>} line per number, for scripts.
 */
public final class DbSchedulerSteadyBench {

    private static final int WARMUP_SECONDS = 15;
    private static final long TICK_MILLIS = 10;
    private static final long KEPT_UP_MILLIS = 15_000;

    private DbSchedulerSteadyBench() {}

    /** One feed: its tasks' lateness as they execute, and when the last one ran. */
    private static final class Round {
        final String prefix;
        final long[] lateMs;
        final AtomicInteger executed = new AtomicInteger();
        final AtomicLong lastExecutedMillis = new AtomicLong();
        long lastDueMillis;

        Round(String prefix, int n) {
            this.prefix = prefix;
            this.lateMs = new long[n];
        }

        void executed(long startMillis, long dueMillis) {
            int i = executed.getAndIncrement();
            if (i < lateMs.length) { // an execution beyond n would be a second run of one task; counted, not recorded
                lateMs[i] = startMillis - dueMillis;
            }
            lastExecutedMillis.accumulateAndGet(startMillis, Math::max);
        }
    }

    public static void main(String[] args) throws Exception {
        PostgresProcess pg = BenchPostgres.startForTestkit(); // durable unless -Dbench.fsync=off (docs/benchmarks.md)
        int rate = intArg(args, "rate", 2000);
        int seconds = intArg(args, "seconds", 60);
        int pool = intArg(args, "pool", 8);
        int pollMs = intArg(args, "poll", 100);
        Round warm = new Round("w", rate * WARMUP_SECONDS);
        Round measured = new Round("m", rate * seconds);
        OneTimeTask<Void> noop = Tasks.oneTime("noop").execute((instance, ctx) -> {
            long now = System.currentTimeMillis();
            String id = instance.getId(); // <round><seq>@<due millis>
            (id.startsWith(measured.prefix) ? measured : warm).executed(now, Long.parseLong(id.substring(id.indexOf('@') + 1)));
        });
        Random random = new Random(42);
        try (FreshDatabase db = TestPostgres.createDatabase("DbSchedulerSteadyBench"); HikariDataSource admin = db.newDataSource(2);
                HikariDataSource ds = db.newDataSource(pool)) {
            FireBench.createDbSchedulerTable(admin);
            Scheduler scheduler = Scheduler.create(ds, noop).threads(pool).pollUsingLockAndFetch(1.0, 4.0)
                    .pollingInterval(Duration.ofMillis(pollMs)).build();
            scheduler.start();
            try {
                System.out.printf("warm-up: %d s at %,d tasks/s (not measured)%n", WARMUP_SECONDS, rate);
                feed(scheduler, noop, warm, rate, WARMUP_SECONDS, random);
                awaitExecuted(warm);
                execute(admin, "VACUUM ANALYZE scheduled_tasks");

                long pid = pg.postmasterPid();
                var os = (com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean();
                long jvmCpu0 = os.getProcessCpuTime();
                double pgCpu0 = ProcCpu.treeSeconds(pid);
                double fedPerSecond = feed(scheduler, noop, measured, rate, seconds, random);
                boolean keptUp = awaitExecuted(measured);
                double jvmCpu = (os.getProcessCpuTime() - jvmCpu0) / 1e9;
                double pgCpu = ProcCpu.treeSeconds(pid) - pgCpu0;
                report(measured, rate, seconds, fedPerSecond, keptUp, jvmCpu, pgCpu, pool, pollMs,
                        longOf(admin, "SELECT count(*) FROM scheduled_tasks"));
            } finally {
                scheduler.stop();
            }
        }
    }

    /**
     * Schedules {@code rate * seconds} tasks, task i at i / rate s after the start, each due 1–10 s after the tick that
     * schedules it. Returns the rate reached (tasks over the time the feed took).
     */
    private static double feed(Scheduler scheduler, OneTimeTask<Void> task, Round round, int rate, int seconds, Random random)
            throws InterruptedException {
        int n = rate * seconds;
        long start = System.nanoTime();
        long maxBehindMillis = 0;
        int next = 0;
        while (next < n) {
            long elapsed = System.nanoTime() - start;
            int upTo = (int) Math.min(n, elapsed * rate / 1_000_000_000L + 1);
            // the oldest task of this tick was due to be scheduled at next / rate s: how far the feed is behind it
            maxBehindMillis = Math.max(maxBehindMillis, elapsed / 1_000_000 - next * 1000L / rate);
            long now = System.currentTimeMillis();
            List<SchedulableInstance<?>> batch = new ArrayList<>(upTo - next);
            for (; next < upTo; next++) {
                long due = now + 1_000 + random.nextInt(9_001);
                round.lastDueMillis = Math.max(round.lastDueMillis, due);
                batch.add(SchedulableInstance.of(task.instance(round.prefix + next + "@" + due), Instant.ofEpochMilli(due)));
            }
            scheduler.scheduleBatch(batch);
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

    private static void report(Round r, int rate, int seconds, double fedPerSecond, boolean keptUp, double jvmCpu, double pgCpu,
            int pool, int pollMs, long rowsLeft) {
        int n = r.lateMs.length;
        int executed = Math.min(n, r.executed.get());
        long[] late = Arrays.copyOf(r.lateMs, executed);
        Arrays.sort(late);
        double cpuUsPerTask = (jvmCpu + pgCpu) * 1e6 / Math.max(1, r.executed.get());
        System.out.printf("db-scheduler 16.7.1 steady: %,d tasks scheduled at %,.0f tasks/s (asked %,d) for %d s, each due 1-10 s ahead;"
                + " threads=%d, pool=%d, lock-and-fetch 1.0, 4.0, polling every %d ms%n", n, fedPerSecond, rate, seconds, pool, pool, pollMs);
        System.out.printf("executed %,d of %,d; kept up: %s (every task executed within 15 s of the last due time); rows left in"
                + " scheduled_tasks: %,d%n", r.executed.get(), n, keptUp ? "yes" : "NO", rowsLeft);
        System.out.printf("lateness (execution start - execution_time): p50 %d ms, p95 %d ms, p99 %d ms, p99.9 %d ms, max %d ms%n",
                pct(late, 0.50), pct(late, 0.95), pct(late, 0.99), pct(late, 0.999), executed == 0 ? 0 : late[executed - 1]);
        System.out.printf("CPU from the measured feed's start until its tasks had executed: this JVM %.2f s, PostgreSQL %.2f s;"
                + " %.1f µs per task%n", jvmCpu, pgCpu, cpuUsPerTask);
        System.out.println(BenchStack.memory());
        String f = "dbs" + rate;
        System.out.printf(Locale.ROOT, "figure %s.p50_ms %d ms%n", f, pct(late, 0.50));
        System.out.printf(Locale.ROOT, "figure %s.p99_ms %d ms%n", f, pct(late, 0.99));
        System.out.printf(Locale.ROOT, "figure %s.p999_ms %d ms%n", f, pct(late, 0.999));
        System.out.printf(Locale.ROOT, "figure %s.cpu_us_per_task %.1f us%n", f, cpuUsPerTask);
        System.out.printf(Locale.ROOT, "figure %s.rate %.1f tasks/s%n", f, fedPerSecond);
    }

    private static long pct(long[] sorted, double p) {
        return sorted.length == 0 ? 0 : sorted[(int) Math.round(p * (sorted.length - 1))];
    }
}
