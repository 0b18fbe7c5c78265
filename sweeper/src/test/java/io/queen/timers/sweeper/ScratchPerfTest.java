package io.queen.timers.sweeper;

import io.queen.timers.sql.Migrations;
import io.queen.timers.sweeper.claim.ClaimedTimer;
import io.queen.timers.sweeper.claim.Claimer;
import io.queen.timers.sweeper.fire.Firer;
import io.queen.timers.sweeper.pack.FireBatch;
import io.queen.timers.sweeper.pack.PackResult;
import io.queen.timers.sweeper.pack.Packer;
import io.queen.timers.testkit.PostgresDatabase;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

class ScratchPerfTest {
    @RegisterExtension
    static final PostgresDatabase db = PostgresDatabase.initializedWith(Migrations::migrate);

    @Test
    void perf() throws Exception {
        Staging staging = new Staging(db.dataSource());
        int queues = Integer.getInteger("queues", 100);
        staging.execute("INSERT INTO queen.log_timers (queue, timer_key, deliver_at, txn, message_id, payload)"
                + " SELECT 'q' || (g % " + queues + "), 'k' || g, now() - interval '1 second', 'txn-' || g, gen_random_uuid(),"
                + " convert_to(rpad('{\"n\":' || g || '}', 200, ' '), 'UTF8') FROM generate_series(1, 100000) g");
        staging.execute("VACUUM ANALYZE queen.log_timers");
        staging.execute("ALTER DATABASE " + db.database().name() + " SET session_preload_libraries = 'auto_explain'");
        staging.execute("ALTER DATABASE " + db.database().name() + " SET auto_explain.log_min_duration = 300");
        staging.execute("ALTER DATABASE " + db.database().name() + " SET auto_explain.log_nested_statements = on");
        staging.execute("ALTER DATABASE " + db.database().name() + " SET auto_explain.log_analyze = on");
        ((com.zaxxer.hikari.HikariDataSource) db.dataSource()).getHikariPoolMXBean().softEvictConnections();
        Claimer claimer = new Claimer(db.dataSource(), Integer.getInteger("batch", 200), Duration.ofSeconds(30), 8);
        Packer packer = new Packer(8 << 20);
        Firer firer = new Firer(db.dataSource());
        long claimNs = 0, packNs = 0, fireNs = 0; int n = 0; int fires = 0;
        long start = System.nanoTime();
        while (true) {
            long t0 = System.nanoTime();
            List<ClaimedTimer> c = new java.util.ArrayList<>(); int got; do { List<ClaimedTimer> b = claimer.claim(); got = b.size(); c.addAll(b); } while (got >= 200 && c.size() < Integer.getInteger("accum", 30000));
            long t1 = System.nanoTime();
            if (c.isEmpty()) break;
            PackResult p = packer.pack(c);
            long t2 = System.nanoTime();
            for (FireBatch f : p.fires()) { long a = System.nanoTime(); firer.fire(f); fires++; System.out.printf("FIRE %d segs %d timers %.1f ms%n", f.segments().size(), f.timers().size(), (System.nanoTime()-a)/1e6); }
            long t3 = System.nanoTime();
            staging.execute("VACUUM ANALYZE queen.log_timers");
            claimNs += t1 - t0; packNs += t2 - t1; fireNs += t3 - t2; n += c.size();
        }
        double s = (System.nanoTime() - start) / 1e9;
        System.out.printf("PERF timers=%d in %.2fs = %.0f/s; claim %.1f ms/call, pack %.1f, fire %.1f ms/fire (%d fires)%n",
                n, s, n / s, claimNs / 1e6 / (n / 200.0), packNs / 1e6 / fires, fireNs / 1e6 / fires, fires);
    }
}
