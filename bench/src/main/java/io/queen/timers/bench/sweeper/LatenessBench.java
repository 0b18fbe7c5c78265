package io.queen.timers.bench.sweeper;

import io.queen.timers.bench.BenchPostgres;
import static io.queen.timers.bench.sweeper.BenchStack.doubleOf;
import static io.queen.timers.bench.sweeper.BenchStack.execute;
import static io.queen.timers.bench.sweeper.BenchStack.intArg;
import static io.queen.timers.bench.sweeper.BenchStack.longOf;

import com.zaxxer.hikari.HikariDataSource;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.queen.timers.stack.Stack;
import io.queen.timers.sweeper.SweeperMain;
import io.queen.timers.sweeper.SweeperSettings;
import io.queen.timers.testkit.FreshDatabase;
import io.queen.timers.testkit.TestPostgres;
import java.time.Duration;

/**
 * Lateness (segment created_at - deliver_at, both PostgreSQL's clock, read back from the fired audit rows):
 * <ol>
 *   <li>steady: 1,000 timers/s with delays of 1–10 s for 60 s, written the way the bridge writes them (one
 *       transaction per 10 ms batch, NOTIFY queen_timers_wake in it); p50/p99/max;</li>
 *   <li>burst: 100,000 timers due at one instant; drain time (last segment created_at - the instant) and p99.</li>
 * </ol>
 * <pre>
 * mvn -B -q -pl bench -am package -DskipTests
 * java -Xmx256m -cp bench/target/benchmarks.jar io.queen.timers.bench.sweeper.LatenessBench [seconds=60] [rate=1000] [burst=100000] [workers=1]
 * </pre>
 */
public final class LatenessBench {

    private LatenessBench() {}

    public static void main(String[] args) throws Exception {
        BenchPostgres.startForTestkit(); // durable unless -Dbench.fsync=off (docs/benchmarks.md)
        int seconds = intArg(args, "seconds", 60);
        int rate = intArg(args, "rate", 1000);
        int burst = intArg(args, "burst", 100_000);
        int workers = intArg(args, "workers", 1);
        try (FreshDatabase db = TestPostgres.createDatabase("LatenessBench"); Stack stack = BenchStack.stack(db)) {
            HikariDataSource admin = db.newDataSource(4);
            SimpleMeterRegistry registry = new SimpleMeterRegistry();
            try (SweeperMain sweeper = BenchStack.startSweeper(stack, 8, registry, s -> s.set(SweeperSettings.WORKERS, workers))) {
                int perBatch = Math.max(1, rate / 100);
                long start = System.nanoTime();
                long batches = 0;
                while (System.nanoTime() - start < Duration.ofSeconds(seconds).toNanos()) {
                    execute(admin, "INSERT INTO queen.log_timers (queue, timer_key, deliver_at, txn, message_id, payload)"
                            + " SELECT 'steady.q' || (g % 50), 's' || " + batches + " || '-' || g,"
                            + " now() + make_interval(secs => 1 + random() * 9), 'txn-s' || " + batches + " || '-' || g, gen_random_uuid(),"
                            + " convert_to('{\"steady\":true}', 'UTF8') FROM generate_series(1, " + perBatch + ") g;"
                            + " NOTIFY queen_timers_wake");
                    batches++;
                    long next = start + batches * 10_000_000L;
                    long sleep = next - System.nanoTime();
                    if (sleep > 0) {
                        Thread.sleep(sleep / 1_000_000, (int) (sleep % 1_000_000));
                    }
                }
                long steady = batches * perBatch;
                BenchStack.awaitFired(registry, steady, Duration.ofMinutes(5));
                System.out.printf("steady: %,d timers at %,d/s for %d s, delays 1-10 s: %s (target p99 <= 50 ms)%n", steady, rate, seconds,
                        BenchStack.latenessOfFired(admin, "kafka_key LIKE 'steady.%'"));

                BenchStack.insertTimers(admin, "b", burst, 100, "date_trunc('second', now()) + interval '5 seconds'");
                execute(admin, "NOTIFY queen_timers_wake");
                BenchStack.awaitFired(registry, steady + burst, Duration.ofMinutes(30));
                double drain = doubleOf(admin, "SELECT extract(epoch FROM max(s.created_at) - (SELECT min((event->>'deliverAt')::timestamptz)"
                        + " FROM queen.timer_audit_events WHERE kafka_key LIKE 'bench.%')) FROM queen.log_segments s"
                        + " JOIN queen.log_partitions p ON p.id = s.partition_id JOIN queen.queues q ON q.id = p.queue_id WHERE q.name LIKE 'bench.%'");
                System.out.printf("burst: %,d timers due at one instant drained in %.2f s (%,.0f timers/s): %s%n", burst, drain, burst / drain,
                        BenchStack.latenessOfFired(admin, "kafka_key LIKE 'bench.%'"));
                System.out.println(BenchStack.callTimes(registry));
            }
            System.out.printf("left in staging: %d%n", longOf(admin, "SELECT count(*) FROM queen.log_timers"));
            System.out.println(BenchStack.memory());
        }
    }
}
