package io.queen.timers.bench.sweeper;

import io.queen.timers.bench.BenchPostgres;
import static io.queen.timers.bench.sweeper.BenchStack.execute;
import static io.queen.timers.bench.sweeper.BenchStack.intArg;

import com.zaxxer.hikari.HikariDataSource;
import io.queen.timers.sql.Migrations;
import io.queen.timers.sweeper.claim.ClaimedTimer;
import io.queen.timers.sweeper.claim.Claimer;
import io.queen.timers.sweeper.fire.Firer;
import io.queen.timers.sweeper.pack.FireBatch;
import io.queen.timers.sweeper.pack.Packer;
import io.queen.timers.testkit.FreshDatabase;
import io.queen.timers.testkit.TestPostgres;
import java.time.Duration;
import java.util.List;

/**
 * Scale: the claim + pack + fire cost per timer of 20,000 due timers while 10,000 timers wait in the future,
 * then again while 1,000,000 wait (rows generated with INSERT ... SELECT generate_series). Pending future
 * timers must cost nothing per fire: the claim reads only the due head of each shard's (shard, visible_at)
 * range, the fire addresses rows by primary key and TID.
 * <pre>
 * mvn -B -q -pl bench -am package -DskipTests
 * java -Xmx256m -cp bench/target/benchmarks.jar io.queen.timers.bench.sweeper.ScaleBench [small=10000] [large=1000000] [due=20000]
 * </pre>
 */
public final class ScaleBench {

    private ScaleBench() {}

    public static void main(String[] args) throws Exception {
        BenchPostgres.startForTestkit(); // durable unless -Dbench.fsync=off (docs/benchmarks.md)
        int small = intArg(args, "small", 10_000);
        int large = intArg(args, "large", 1_000_000);
        int due = intArg(args, "due", 20_000);
        try (FreshDatabase db = TestPostgres.createDatabase("ScaleBench")) {
            HikariDataSource ds = db.newDataSource(4);
            Migrations.migrate(ds);
            futureTimers(ds, 0, small);
            double a = microsPerTimer(ds, "a", due);
            futureTimers(ds, small, large);
            double b = microsPerTimer(ds, "b", due);
            double a2 = Double.NaN;
            execute(ds, "DELETE FROM queen.log_timers WHERE timer_key LIKE 'future%' AND substring(timer_key from 7)::int > " + small);
            execute(ds, "VACUUM ANALYZE queen.log_timers");
            a2 = microsPerTimer(ds, "c", due);
            System.out.printf("claim+pack+fire with %,d pending future timers: %.1f us/timer (again after shrinking back: %.1f)%n", small, a, a2);
            System.out.printf("claim+pack+fire with %,d pending future timers: %.1f us/timer%n", large, b);
            System.out.printf("RATIO large / small = %.2f (target <= 1.2; against the repeat: %.2f)%n", b / a, b / a2);
            System.out.println(BenchStack.memory());
        }
    }

    private static void futureTimers(HikariDataSource ds, int from, int to) throws Exception {
        execute(ds, "INSERT INTO queen.log_timers (queue, timer_key, deliver_at, txn, message_id, payload)"
                + " SELECT 'future.q' || (g % 1000), 'future' || g, now() + interval '1 day' + g * interval '1 ms', 'txn-f' || g,"
                + " gen_random_uuid(), '\\x7b7d' FROM generate_series(" + (from + 1) + ", " + to + ") g");
        execute(ds, "VACUUM ANALYZE queen.log_timers");
    }

    private static double microsPerTimer(HikariDataSource ds, String prefix, int due) throws Exception {
        BenchStack.insertTimers(ds, prefix, due, 100, "now() - interval '1 second'");
        execute(ds, "VACUUM ANALYZE queen.log_timers");
        Claimer claimer = new Claimer(ds, 200, Duration.ofSeconds(30), 8);
        Packer packer = new Packer(8 << 20);
        Firer firer = new Firer(ds);
        long start = System.nanoTime();
        int fired = 0;
        while (true) {
            List<ClaimedTimer> claimed = claimer.claim();
            if (claimed.isEmpty()) {
                break;
            }
            for (FireBatch f : packer.pack(claimed).fires()) {
                firer.fire(f);
            }
            fired += claimed.size();
        }
        if (fired != due) {
            throw new IllegalStateException("fired " + fired + " of " + due);
        }
        return (System.nanoTime() - start) / 1e3 / due;
    }
}
