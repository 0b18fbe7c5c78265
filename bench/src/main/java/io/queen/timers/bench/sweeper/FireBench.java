package io.queen.timers.bench.sweeper;

import io.queen.timers.bench.BenchPostgres;
import static io.queen.timers.bench.sweeper.BenchStack.execute;
import static io.queen.timers.bench.sweeper.BenchStack.intArg;
import static io.queen.timers.bench.sweeper.BenchStack.longOf;

import com.github.kagkarlsson.scheduler.Scheduler;
import com.github.kagkarlsson.scheduler.task.helper.OneTimeTask;
import com.github.kagkarlsson.scheduler.task.helper.Tasks;
import com.zaxxer.hikari.HikariDataSource;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.queen.timers.stack.Stack;
import io.queen.timers.sweeper.SweeperMain;
import io.queen.timers.sweeper.SweeperSettings;
import io.queen.timers.testkit.FreshDatabase;
import io.queen.timers.testkit.TestPostgres;
import java.time.Duration;
import java.util.EnumMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Fire throughput: 100,000 timers due now over 100 queues (200-byte payloads), one sweeper, versus
 * db-scheduler executing 100,000 one-time no-op tasks, on the same embedded PostgreSQL with the same
 * connection pool size, in one run. The sweeper does more per item: an exactly-once push into a log
 * (segment + txn hashes, partition offsets), the delete of its staging row and an audit outbox row.
 *
 * <pre>
 * mvn -B -q -pl bench -am package -DskipTests
 * java -Xmx256m -cp bench/target/benchmarks.jar io.queen.timers.bench.sweeper.FireBench [timers=100000] [pool=8] [workers=2] [batch=512] [warmup=20000] [legacy=true]
 * </pre>
 *
 * Both sides start before their work is due (due = now + 3 s on PostgreSQL's clock) and are timed from the
 * due instant to the last item done, so start-up is not measured. db-scheduler runs with as many threads
 * as the pool has connections and its lock-and-fetch polling (SELECT ... FOR UPDATE SKIP LOCKED).
 *
 * <p>db-scheduler is measured twice (issue 25, point 3), each round printed with its ratio:
 * <ul>
 * <li><b>fair</b>: {@code pollUsingLockAndFetch(1.0, 4.0)}, what db-scheduler's README recommends "for high
 * throughput (i.e. keep threads busy)" (README, "Polling strategy", at tag v16.7.1 of
 * github.com/kagkarlsson/db-scheduler; {@code 0.5, 1.0} is its example "for normal usage"). Its end is
 * measured as the sweeper's is: {@code clock_timestamp()} inside the transaction that commits the last item.
 * The sweeper's is {@code max(log_segments.created_at)}, the clock_timestamp() its fire transaction takes at
 * the append; a no-op one-time task is done when db-scheduler's own autocommitted {@code DELETE} of its row
 * commits, so an AFTER DELETE trigger records clock_timestamp() in that transaction and the end is the
 * largest. The trigger appends to an unlogged table with no index: no round trip, no commit and no WAL of
 * its own, and no lock shared between completions (a one-row "max" table would serialize every completion
 * on its row lock until commit). Both ends are read on PostgreSQL's clock, as the due instant is.</li>
 * <li><b>legacy</b>, the configuration of the results published before issue 25: {@code pollUsingLockAndFetch(0.5,
 * 1.0)}, no trigger, and the end taken on this JVM's clock once a client polling {@code SELECT count(*)}
 * every 20 ms sees the table empty, which adds up to a poll interval and a query to db-scheduler's time
 * only. {@code legacy=true} runs this one alone, as the benchmark ran before.</li>
 * </ul>
 *
 * <p>Warm-up, the same for every side: before its measured round each side runs an unmeasured round of
 * {@code warmup} items in this JVM (db-scheduler with a scheduler instance of its own and the settings of
 * the round it warms; the sweeper into other queues, {@code warm.q*}, so the measured round still creates
 * its queues at the fire), and the tables are vacuumed in between. What is measured is the steady state of
 * a long-running process, not the JIT compiling it while the clock runs. The warm-up helps db-scheduler at
 * least as much as the sweeper (2026-12-02: +7–16 % against about +8 %), so it does not flatter the ratio;
 * {@code warmup=0} measures both sides cold.
 *
 * <p>Last, one {@code figure <name> <value> <unit>} line per number, for scripts.
 */
public final class FireBench {

    /** How db-scheduler polls and where its end is read: see the class comment. */
    private enum DbScheduler {
        LEGACY(0.5, 1.0, "legacy: lock-and-fetch 0.5, 1.0; end = a client saw the table empty"),
        FAIR(1.0, 4.0, "fair: lock-and-fetch 1.0, 4.0; end = clock_timestamp() in the last completion's transaction");

        final double lowerLimit;
        final double upperLimit;
        final String label;

        DbScheduler(double lowerLimit, double upperLimit, String label) {
            this.lowerLimit = lowerLimit;
            this.upperLimit = upperLimit;
            this.label = label;
        }
    }

    private FireBench() {}

    public static void main(String[] args) throws Exception {
        BenchPostgres.startForTestkit(); // durable unless -Dbench.fsync=off (docs/benchmarks.md)
        int n = intArg(args, "timers", 100_000);
        int pool = intArg(args, "pool", 8);
        int workers = intArg(args, "workers", 2);
        int batch = intArg(args, "batch", 512);
        int warmup = intArg(args, "warmup", 20_000);
        boolean legacyOnly = List.of(args).contains("legacy=true");
        List<DbScheduler> modes = legacyOnly ? List.of(DbScheduler.LEGACY) : List.of(DbScheduler.LEGACY, DbScheduler.FAIR);
        int queues = 100;
        try (FreshDatabase db = TestPostgres.createDatabase("FireBench"); Stack stack = BenchStack.stack(db)) {
            HikariDataSource admin = db.newDataSource(4);
            io.queen.timers.bench.peer.DbSchedulerTable.create(admin);
            recordCompletions(admin);
            System.out.printf("warm-up: %,d items per side before its measured round (not measured)%n", warmup);

            Map<DbScheduler, Double> dbScheduler = new EnumMap<>(DbScheduler.class);
            for (DbScheduler mode : modes) {
                if (warmup > 0) {
                    runDbScheduler(db, admin, "w", warmup, pool, mode);
                }
                double rate = runDbScheduler(db, admin, "i", n, pool, mode);
                dbScheduler.put(mode, rate);
                System.out.printf("db-scheduler 16.7.1 (%s): %,d one-time no-op tasks in %.2f s = %,.0f executions/s (threads=%d, pool=%d)%n",
                        mode.label, n, n / rate, rate, pool, pool);
            }

            if (warmup > 0) {
                runSweeper(stack, admin, "warm.q", "w", warmup, queues, pool, workers, batch);
            }
            double sweeper = runSweeper(stack, admin, MEASURED_QUEUES, "f", n, queues, pool, workers, batch);
            System.out.printf("sweeper: %,d timers over %d queues in %.2f s = %,.0f timers/s (workers=%d, pool=%d, batch=%d)%n",
                    n, queues, n / sweeper, sweeper, workers, pool, batch);
            System.out.printf("segments: %d, frames in the log: %d, fired audit events: %d (in %d outbox rows), staging rows left: %d%n",
                    longOf(admin, "SELECT count(*) " + MEASURED_SEGMENTS),
                    longOf(admin, "SELECT coalesce(sum(s.end_offset - s.base_offset + 1), 0) " + MEASURED_SEGMENTS),
                    longOf(admin, "SELECT count(*) FROM queen.timer_audit_events WHERE type = 'fired'"
                            + " AND event->>'queue' LIKE '" + MEASURED_QUEUES + "%'"),
                    longOf(admin, "SELECT count(*) FROM queen.timer_audit_outbox WHERE type = 'fired'"
                            + " AND event->>'queue' LIKE '" + MEASURED_QUEUES + "%'"),
                    longOf(admin, "SELECT count(*) FROM queen.log_timers"));
            for (DbScheduler mode : modes) {
                System.out.printf("RATIO sweeper / db-scheduler (%s) = %.2f (issue 13: >= 4 on durable PostgreSQL)%n",
                        mode.label, sweeper / dbScheduler.get(mode));
            }
            System.out.println(BenchStack.memory());
            figure("fire.sweeper_per_s", sweeper, "timers/s");
            if (!legacyOnly) {
                figure("fire.dbscheduler_fair_per_s", dbScheduler.get(DbScheduler.FAIR), "tasks/s");
                figure("fire.ratio_fair", sweeper / dbScheduler.get(DbScheduler.FAIR), "x");
            }
            figure("fire.ratio_legacy", sweeper / dbScheduler.get(DbScheduler.LEGACY), "x");
        }
    }

    private static void figure(String name, double value, String unit) {
        System.out.printf(Locale.ROOT, "figure %s %.2f %s%n", name, value, unit);
    }

    private static final String MEASURED_QUEUES = "bench.q";
    private static final String MEASURED_SEGMENTS = segmentsOf(MEASURED_QUEUES);

    /** FROM clause: the log segments of the queues named {@code queuePrefix*} (warm-up and measured rounds apart). */
    private static String segmentsOf(String queuePrefix) {
        return "FROM queen.log_segments s"
                + " JOIN queen.log_partitions p ON p.id = s.partition_id JOIN queen.queues q ON q.id = p.queue_id"
                + " WHERE q.name LIKE '" + queuePrefix + "%'";
    }

    private static double runSweeper(Stack stack, HikariDataSource admin, String queuePrefix, String keyPrefix, int n, int queues,
            int pool, int workers, int batch) throws Exception {
        execute(admin, "VACUUM ANALYZE queen.log_timers");
        BenchStack.insertTimers(admin, queuePrefix, keyPrefix, n, queues, "now() + interval '3 seconds'");
        execute(admin, "VACUUM ANALYZE queen.log_timers");
        long dueAtMillis = longOf(admin, "SELECT (extract(epoch FROM min(deliver_at)) * 1000)::bigint FROM queen.log_timers");
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        try (SweeperMain sweeper = BenchStack.startSweeper(stack, pool, registry,
                s -> s.set(SweeperSettings.WORKERS, workers).set(SweeperSettings.BATCH_SIZE, batch))) {
            BenchStack.awaitFired(registry, n, Duration.ofMinutes(30));
        }
        if (queuePrefix.equals(MEASURED_QUEUES)) {
            System.out.println(BenchStack.callTimes(registry));
        }
        long lastMillis = longOf(admin, "SELECT (extract(epoch FROM max(s.created_at)) * 1000)::bigint " + segmentsOf(queuePrefix));
        return n / ((lastMillis - dueAtMillis) / 1000.0);
    }

    /**
     * The fair end's record: one row per completed task, written by the DELETE that completes it (see the class
     * comment). Disabled for the legacy rounds, which ran without it.
     */
    private static void recordCompletions(HikariDataSource admin) throws Exception {
        execute(admin, "CREATE UNLOGGED TABLE scheduled_tasks_completed (at TIMESTAMPTZ NOT NULL)");
        execute(admin, """
                CREATE FUNCTION scheduled_tasks_completed() RETURNS trigger LANGUAGE plpgsql AS $$
                BEGIN
                    INSERT INTO scheduled_tasks_completed VALUES (clock_timestamp());
                    RETURN NULL;
                END $$""");
        execute(admin, "CREATE TRIGGER completed AFTER DELETE ON scheduled_tasks FOR EACH ROW EXECUTE FUNCTION scheduled_tasks_completed()");
    }

    private static double runDbScheduler(FreshDatabase db, HikariDataSource admin, String instancePrefix, int n, int pool, DbScheduler mode)
            throws Exception {
        boolean fair = mode == DbScheduler.FAIR;
        execute(admin, "ALTER TABLE scheduled_tasks " + (fair ? "ENABLE" : "DISABLE") + " TRIGGER completed");
        execute(admin, "TRUNCATE scheduled_tasks_completed");
        execute(admin, "VACUUM ANALYZE scheduled_tasks");
        execute(admin, "INSERT INTO scheduled_tasks (task_name, task_instance, execution_time, picked, version)"
                + " SELECT 'noop', '" + instancePrefix + "' || g, now() + interval '3 seconds', false, 1 FROM generate_series(1, " + n + ") g");
        execute(admin, "VACUUM ANALYZE scheduled_tasks");
        long dueAtMillis = longOf(admin, "SELECT (extract(epoch FROM min(execution_time)) * 1000)::bigint FROM scheduled_tasks");

        AtomicLong done = new AtomicLong();
        CountDownLatch all = new CountDownLatch(1);
        OneTimeTask<Void> noop = Tasks.oneTime("noop").execute((instance, ctx) -> {
            if (done.incrementAndGet() == n) {
                all.countDown();
            }
        });
        HikariDataSource ds = db.newDataSource(pool);
        Scheduler scheduler = Scheduler.create(ds, noop).threads(pool).pollUsingLockAndFetch(mode.lowerLimit, mode.upperLimit)
                .pollingInterval(Duration.ofMillis(100)).build();
        scheduler.start();
        long lastMillis;
        try {
            if (!all.await(30, TimeUnit.MINUTES)) {
                throw new IllegalStateException("db-scheduler did not finish: " + done.get() + " of " + n);
            }
            // the last handler has run; its DELETE (the completion) may not be committed yet
            String left = fair ? "SELECT " + n + " - count(*) FROM scheduled_tasks_completed" : "SELECT count(*) FROM scheduled_tasks";
            while (longOf(admin, left) > 0) {
                Thread.sleep(20);
            }
            lastMillis = fair ? longOf(admin, "SELECT (extract(epoch FROM max(at)) * 1000)::bigint FROM scheduled_tasks_completed")
                    : System.currentTimeMillis();
        } finally {
            scheduler.stop();
            ds.close();
        }
        return n / ((lastMillis - dueAtMillis) / 1000.0);
    }
}
