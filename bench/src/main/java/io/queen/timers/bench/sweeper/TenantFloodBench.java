package io.queen.timers.bench.sweeper;

import static io.queen.timers.bench.sweeper.BenchStack.doubleOf;
import static io.queen.timers.bench.sweeper.BenchStack.execute;
import static io.queen.timers.bench.sweeper.BenchStack.intArg;
import static io.queen.timers.bench.sweeper.BenchStack.longOf;

import com.zaxxer.hikari.HikariDataSource;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.queen.timers.bench.BenchPostgres;
import io.queen.timers.stack.Stack;
import io.queen.timers.sweeper.SweeperMain;
import io.queen.timers.testkit.FreshDatabase;
import io.queen.timers.testkit.TestPostgres;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.atomic.AtomicReference;

/**
 * Issue 24, point 8: one tenant floods back-dated timers (deliverAt 1970) while another schedules a few due in 2 s; the
 * quiet tenant's lateness (segment created_at - deliver_at, from its fired audit rows) and the flood's drain rate.
 * Both are staged through the bridge's own write, queen.bridge_apply_v4 (batches of 2,000 as fast as it goes, one
 * transaction each, NOTIFY included), so the staging rule is the one under test; the sweeper is the real one, defaults.
 * <pre>
 * mvn -B -q -pl bench -am package -DskipTests
 * java -Xmx256m -cp bench/target/benchmarks.jar io.queen.timers.bench.sweeper.TenantFloodBench [flood=100000] [quiet=100] [legacy=&lt;dir&gt;]
 * </pre>
 * {@code legacy=<dir>}: after migrating, re-create the functions from every .sql file of that directory (e.g. main's
 * R__bridge_apply.sql and R__timer_claim.sql from before the change) to measure the "before" on the same schema.
 */
public final class TenantFloodBench {

    static final String FLOODER = "00000000-0000-0000-0000-0000000000aa";
    static final String QUIET = "ffffffff-0000-0000-0000-0000000000bb";
    static final int BATCH = 2000;

    private TenantFloodBench() {}

    public static void main(String[] args) throws Exception {
        BenchPostgres.startForTestkit(); // durable unless -Dbench.fsync=off (docs/benchmarks.md)
        int flood = intArg(args, "flood", 100_000);
        int quiet = intArg(args, "quiet", 100);
        String legacy = null;
        Map<String, String> overrides = new java.util.TreeMap<>();   // sweeper.<key>=<value>: a setting to compare
        for (String a : args) {
            if (a.startsWith("legacy=")) {
                legacy = a.substring("legacy=".length());
            } else if (a.startsWith("sweeper.") && a.contains("=")) {
                overrides.put(a.substring(0, a.indexOf('=')), a.substring(a.indexOf('=') + 1));
            }
        }
        System.out.println("SETTINGS beyond the defaults: " + overrides);
        try (FreshDatabase db = TestPostgres.createDatabase("TenantFloodBench"); Stack stack = BenchStack.stack(db)) {
            HikariDataSource admin = db.newDataSource(4);
            if (legacy != null) {
                try (var files = Files.list(Path.of(legacy))) {
                    for (Path f : files.filter(p -> p.toString().endsWith(".sql")).sorted().toList()) {
                        execute(admin, Files.readString(f));
                        System.out.println("LEGACY re-created the functions of " + f);
                    }
                }
            }
            SimpleMeterRegistry registry = new SimpleMeterRegistry();
            try (SweeperMain sweeper = BenchStack.startSweeper(stack, 8, registry, s -> overrides.forEach(s::setText))) {
                double floodStart = doubleOf(admin, "SELECT extract(epoch FROM clock_timestamp())");
                AtomicReference<Throwable> failed = new AtomicReference<>();
                long[] stageMs = new long[1];
                Thread flooder = new Thread(() -> {
                    try {
                        long t0 = System.nanoTime();
                        for (int from = 1; from <= flood; from += BATCH) {
                            stage(admin, FLOODER, "flood", from, Math.min(flood, from + BATCH - 1), "1000");
                        }
                        stageMs[0] = (System.nanoTime() - t0) / 1_000_000;
                    } catch (Throwable t) {
                        failed.set(t);
                    }
                }, "flooder");
                flooder.start();
                Thread.sleep(1000); // the flood is well under way
                stage(admin, QUIET, "quiet", 1, quiet, "floor(extract(epoch FROM now() + interval '2 seconds') * 1000)::bigint");
                flooder.join();
                if (failed.get() != null) {
                    throw new IllegalStateException("the flood failed", failed.get());
                }
                System.out.printf("flood staged: %,d back-dated timers in %,d ms (%,.0f/s) through bridge_apply_v4, batches of %,d%n",
                        flood, stageMs[0], flood * 1000.0 / Math.max(1, stageMs[0]), BATCH);
                BenchStack.awaitFired(registry, flood + quiet, Duration.ofMinutes(30));
                System.out.printf("QUIET tenant: %,d timers due 2 s after staging, staged 1 s into the flood: %s (target p99 <= 200 ms)%n",
                        quiet, BenchStack.latenessOfFired(admin, "kafka_key LIKE 'quiet.%'"));
                double drain = doubleOf(admin, "SELECT extract(epoch FROM max(s.created_at)) - " + floodStart + " FROM queen.log_segments s"
                        + " JOIN queen.log_partitions p ON p.id = s.partition_id JOIN queen.queues q ON q.id = p.queue_id WHERE q.name LIKE 'flood.%'");
                System.out.printf("FLOOD: %,d timers from the first staging to the last fire in %.2f s: %,.0f timers/s%n", flood, drain, flood / drain);
                System.out.println(BenchStack.callTimes(registry));
            }
            // The quota's count at the flood's size (the bridge pays it once per batch per tenant scheduling new keys).
            stage(admin, FLOODER, "counted", 1, flood, "floor(extract(epoch FROM now() + interval '1 day') * 1000)::bigint");
            execute(admin, "VACUUM ANALYZE queen.log_timers");
            if (legacy == null) {
                long best = Long.MAX_VALUE;
                long n = 0;
                for (int i = 0; i < 5; i++) {
                    long t0 = System.nanoTime();
                    n = longOf(admin, "SELECT pending FROM queen.timer_tenant_pending_v1(ARRAY['" + FLOODER + "']::uuid[], 1000000)");
                    best = Math.min(best, System.nanoTime() - t0);
                }
                System.out.printf("QUOTA count: timer_tenant_pending_v1 over %,d pending timers of one tenant: best of 5 %.1f ms%n", n, best / 1e6);
            }
            System.out.printf("left in staging: %d (the %,d counted, not due)%n", longOf(admin, "SELECT count(*) FROM queen.log_timers"), flood);
            System.out.println(BenchStack.memory());
        }
    }

    /** Stages timers {@code from..to} of {@code tenant} through the bridge's write (one transaction, jsonb named rows). */
    static void stage(HikariDataSource ds, String tenant, String prefix, int from, int to, String deliverAtMsSql) throws Exception {
        execute(ds, "SELECT queen.bridge_apply_v4('bench', '[]'::jsonb, (SELECT jsonb_agg(jsonb_build_object('tenant_id', '" + tenant + "',"
                + " 'queue', '" + prefix + ".q' || (g % 10), 'timer_key', '" + prefix + "-' || g, 'partition', 'Default',"
                + " 'deliver_at_ms', " + deliverAtMsSql + ", 'txn', 'txn-" + prefix + "-' || g, 'message_id', gen_random_uuid(),"
                + " 'payload', encode(convert_to(rpad('{\"n\":' || g || ',\"pad\":\"', 198, 'x') || '\"}', 'UTF8'), 'base64'),"
                + " 'payload_zstd', false, 'payload_bytes', 200, 'encrypted', false, 'producer_sub', NULL, 'trace_context', NULL))"
                + " FROM generate_series(" + from + ", " + to + ") g), '[]'::jsonb, '[]'::jsonb, interval '30 seconds')");
    }
}
