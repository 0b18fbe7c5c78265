package io.queen.timers.bench.sweeper;

import io.queen.timers.bench.BenchPostgres;
import static io.queen.timers.bench.sweeper.BenchStack.execute;
import static io.queen.timers.bench.sweeper.BenchStack.intArg;

import com.zaxxer.hikari.HikariDataSource;
import io.queen.timers.sql.Migrations;
import io.queen.timers.sweeper.claim.Claimer;
import io.queen.timers.testkit.FreshDatabase;
import io.queen.timers.testkit.TestPostgres;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * Poison independence, the reason visible_at is indexed
 * (docs/decisions.md#visible_at-is-stored-and-the-claim-is-never-hot): the latency of a claim of 200 due timers
 * with 0 timers serving a backoff, then with 100,000 of them (failed, no token, retry an hour away, their
 * deliver_at long past). With an index on deliver_at every claim would walk the backoff rows first; with
 * (shard, visible_at) they sit at the far end of each shard's range. Rounds alternate (without, with,
 * without, with, ...) on one database so machine noise hits both sides alike.
 * <pre>
 * mvn -B -q -pl bench -am package -DskipTests
 * java -Xmx256m -cp bench/target/benchmarks.jar io.queen.timers.bench.sweeper.PoisonIndependenceBench [backoff=100000] [claims=100] [rounds=3]
 * </pre>
 */
public final class PoisonIndependenceBench {

    private PoisonIndependenceBench() {}

    public static void main(String[] args) throws Exception {
        BenchPostgres.startForTestkit(); // durable unless -Dbench.fsync=off (docs/benchmarks.md)
        int backoff = intArg(args, "backoff", 100_000);
        int claims = intArg(args, "claims", 100);
        int rounds = intArg(args, "rounds", 3);
        try (FreshDatabase db = TestPostgres.createDatabase("PoisonIndependenceBench")) {
            HikariDataSource ds = db.newDataSource(4);
            Migrations.migrate(ds);
            Claimer claimer = new Claimer(ds, 200, Duration.ofSeconds(30), 8);
            List<Double> without = new ArrayList<>();
            List<Double> with = new ArrayList<>();
            for (int round = 0; round < rounds; round++) {
                for (boolean poisoned : new boolean[] {false, true}) {
                    execute(ds, "TRUNCATE queen.log_timers");
                    BenchStack.insertTimers(ds, "d", claims * 200 + 1000, 100, "now() - interval '1 minute'");
                    if (poisoned) {
                        execute(ds, "INSERT INTO queen.log_timers (queue, timer_key, deliver_at, txn, message_id, payload, attempts,"
                                + " last_error, claimed_until) SELECT 'poison.q' || (g % 100), 'p' || g, now() - interval '1 day', 'txn-p' || g,"
                                + " gen_random_uuid(), '\\x7b7d', 3, 'SQLSTATE 23514: refused', now() + interval '1 hour'"
                                + " FROM generate_series(1, " + backoff + ") g");
                    }
                    execute(ds, "VACUUM ANALYZE queen.log_timers");
                    for (int i = 0; i < claims; i++) {
                        long t0 = System.nanoTime();
                        int n = claimer.claim().size();
                        double ms = (System.nanoTime() - t0) / 1e6;
                        if (n != 200) {
                            throw new IllegalStateException("claim returned " + n);
                        }
                        (poisoned ? with : without).add(ms);
                    }
                }
            }
            double p50a = BenchStack.percentile(without, 0.5);
            double p50b = BenchStack.percentile(with, 0.5);
            System.out.printf("claim of 200, 0 timers in backoff:       p50 %.2f ms, p90 %.2f ms (%d claims)%n", p50a,
                    BenchStack.percentile(without, 0.9), without.size());
            System.out.printf("claim of 200, %,d timers in backoff: p50 %.2f ms, p90 %.2f ms (%d claims)%n", backoff, p50b,
                    BenchStack.percentile(with, 0.9), with.size());
            System.out.printf("RATIO p50 with / without = %.2f (target <= 1.2)%n", p50b / p50a);
            System.out.println(BenchStack.memory());
        }
    }
}
