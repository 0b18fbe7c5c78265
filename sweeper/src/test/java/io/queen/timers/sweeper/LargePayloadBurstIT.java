package io.queen.timers.sweeper;

import static io.queen.timers.sweeper.Staging.DEFAULT_TENANT;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.queen.timers.log.codec.Compression;
import io.queen.timers.sql.Migrations;
import io.queen.timers.testkit.PostgresDatabase;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The burst that once killed the sweeper: 600 timers with ~880 KB incompressible payloads (stored
 * zstd-compressed, as the bridge stores any payload above its threshold), all due at one instant, against a
 * sweeper JVM with -Xmx256m. With a claim bounded by rows only, one claim brought back ~450 MB and every
 * thread died of OutOfMemoryError while the process stayed up doing nothing.
 */
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class LargePayloadBurstIT {

    @RegisterExtension
    static final PostgresDatabase db = PostgresDatabase.initializedWith(Migrations::migrate);

    private static final int TIMERS = 600;
    private static final int PAYLOAD_BYTES = 880 * 1024;

    private static Staging staging;

    @BeforeAll
    static void stageTheBurst() {
        staging = new Staging(db.dataSource());
        Random random = new Random(18);
        byte[] payload = new byte[PAYLOAD_BYTES];
        for (int i = 0; i < TIMERS; i++) {
            random.nextBytes(payload);
            String key = "big-" + i;
            staging.schedule(DEFAULT_TENANT, "burst.q" + (i % 4), key, "Default", -1, "txn-" + key, Compression.compress(payload), true);
        }
    }

    /**
     * A byte bound the heap cannot hold is no bound: with sweeper.max.fire.bytes at its maximum (256 MiB) a cycle
     * could hold ~4 x that, and the sweeper once took this burst, died of OutOfMemoryError and was restarted into
     * the same death. Now it refuses to start, naming the settings and the heap, before it claims anything.
     */
    @Test
    @Order(1)
    void aFireBoundTheHeapCannotHoldIsRefusedAtStart() throws Exception {
        Path log = Path.of("target", "burst-oom-sweeper.log");
        Process child = ChildSweeper.start(db, "256m",
                Map.of(SweeperSettings.MAX_FIRE_BYTES, Integer.toString(256 * 1024 * 1024), SweeperSettings.LEASE, "3s"), log);
        try {
            assertThat(child.waitFor(180, TimeUnit.SECONDS)).as("the sweeper exits on its own; log: " + log.toAbsolutePath()).isTrue();
            assertThat(child.exitValue()).isNotZero();
            assertThat(Files.readString(log)).contains(SweeperSettings.MAX_FIRE_BYTES).contains("of heap").doesNotContain("OutOfMemoryError");
            assertThat(staging.count("SELECT count(*) FROM queen.log_timers WHERE claim_token IS NOT NULL")).as("nothing claimed").isZero();
        } finally {
            if (child.isAlive()) {
                child.destroyForcibly().waitFor(30, TimeUnit.SECONDS);
            }
        }
    }

    @Test
    @Order(2)
    void sixHundredLargePayloadsDueAtOnceAllFireExactlyOnceWithA256MegabyteHeap() throws Exception {
        // whatever the dead sweeper claimed comes back after its 3 s lease
        await().atMost(30, TimeUnit.SECONDS).until(() -> staging.count("SELECT count(*) FROM queen.log_timers WHERE claimed_until > now()") == 0);
        Path log = Path.of("target", "burst-sweeper.log");
        Process child = ChildSweeper.start(db, "256m", Map.of(), log);
        try {
            await().atMost(5, TimeUnit.MINUTES).pollInterval(1, TimeUnit.SECONDS).until(() -> {
                assertThat(child.isAlive()).as("the sweeper is still running; log: " + log.toAbsolutePath()).isTrue();
                return staging.count("SELECT count(*) FROM queen.log_timers") == 0;
            });
        } finally {
            child.destroy();   // SIGTERM: graceful
            child.waitFor(60, TimeUnit.SECONDS);
            if (child.isAlive()) {
                child.destroyForcibly().waitFor(30, TimeUnit.SECONDS);
            }
        }
        assertThat(Files.readString(log)).doesNotContain("OutOfMemoryError");
        // exactly once, read from the log itself: 600 frames in all, 600 distinct txn hashes
        assertThat(staging.count("SELECT sum(end_offset - base_offset + 1) FROM queen.log_segments")).isEqualTo(TIMERS);
        assertThat(staging.count("SELECT count(DISTINCT substring(t.hashes FROM i * 16 + 1 FOR 16)) FROM queen.log_txns t,"
                + " generate_series(0, octet_length(t.hashes) / 16 - 1) i")).isEqualTo(TIMERS);
        // and from the audit: one fired event per timer, none of them retried
        assertThat(staging.count("SELECT count(DISTINCT event->>'txn') FROM queen.timer_audit_events WHERE type = 'fired'"
                + " AND (event->>'attempts')::int = 0")).isEqualTo(TIMERS);
        assertThat(staging.count("SELECT count(*) FROM queen.timer_audit_events WHERE type = 'fired'")).isEqualTo(TIMERS);
        assertThat(staging.count("SELECT count(*) FROM queen.log_dlq")).isZero();
    }
}
