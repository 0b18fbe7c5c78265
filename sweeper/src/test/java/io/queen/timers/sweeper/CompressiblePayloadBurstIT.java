package io.queen.timers.sweeper;

import static io.queen.timers.sweeper.Staging.DEFAULT_TENANT;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.queen.timers.log.codec.Compression;
import io.queen.timers.sql.Migrations;
import io.queen.timers.testkit.GcLog;
import io.queen.timers.testkit.PostgresDatabase;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Payloads at the size limit but highly compressible (1 MiB of one letter), stored zstd at a few dozen bytes
 * each as the bridge stores them, all due at one instant, against a sweeper JVM with -Xmx256m. When the claim
 * counted stored bytes, one claim of 512 of them held ~512 MiB once decompressed: the sweeper died of
 * OutOfMemoryError, and the next one claimed the same rows and died the same way (V120). Now the claim counts
 * the raw length the bridge recorded, and the pack stops decompressing at the fire's bound for rows whose raw
 * length the claim could not know (staged before V120).
 */
class CompressiblePayloadBurstIT {

    @RegisterExtension
    static final PostgresDatabase db = PostgresDatabase.initializedWith(Migrations::migrate);

    private static final int PAYLOAD_BYTES = 1 << 20;

    private final Staging staging = new Staging(db.dataSource());

    @BeforeEach
    void clean() {
        staging.clear();
    }

    @Test
    void twoThousandCompressiblePayloadsAtTheLimitFireExactlyOnceInA256MegabyteHeap() throws Exception {
        burst("raw", 2_000, true);
    }

    @Test
    void rowsStagedBeforeTheRawLengthWasRecordedAreBoundedByThePack() throws Exception {
        burst("legacy", 1_000, false);
    }

    private void burst(String name, int timers, boolean rawLengthRecorded) throws Exception {
        byte[] raw = new byte[PAYLOAD_BYTES];
        Arrays.fill(raw, (byte) 'a');
        raw[0] = '"';
        raw[raw.length - 1] = '"';
        byte[] stored = Compression.compress(raw);
        assertThat(stored.length).as("compresses to almost nothing").isLessThan(1_000);
        for (int i = 0; i < timers; i++) {
            String key = name + "-" + i;
            staging.schedule(DEFAULT_TENANT, "burst.q" + (i % 4), key, "Default", -1, "txn-" + key, stored, true,
                    rawLengthRecorded ? raw.length : null);
        }
        Path log = Path.of("target", "compressible-" + name + "-sweeper.log");
        Path gc = Path.of("target", "compressible-" + name + "-gc.log");
        Files.deleteIfExists(gc);
        Process child = ChildSweeper.start(db, "256m", List.of(GcLog.option(gc)), Map.of(), log);
        try {
            await().atMost(5, TimeUnit.MINUTES).pollInterval(1, TimeUnit.SECONDS).until(() -> {
                assertThat(child.isAlive()).as("the sweeper is still running; log: " + log.toAbsolutePath()).isTrue();
                return staging.count("SELECT count(*) FROM queen.log_timers") == 0;
            });
        } finally {
            child.destroy();
            child.waitFor(60, TimeUnit.SECONDS);
            if (child.isAlive()) {
                child.destroyForcibly().waitFor(30, TimeUnit.SECONDS);
            }
        }
        long peak = GcLog.peakMegabytes(gc);
        System.out.printf("%s: %d timers of %d decompressed bytes fired with -Xmx256m; peak heap before a collection %d MiB (%d collections)%n",
                name, timers, PAYLOAD_BYTES, peak, GcLog.collections(gc));
        assertThat(Files.readString(log)).doesNotContain("OutOfMemoryError");
        assertThat(peak).as("peak heap (MiB), from " + gc.toAbsolutePath()).isPositive().isLessThan(256);
        // exactly once, from the log itself: one frame per timer, as many distinct txn hashes
        assertThat(staging.count("SELECT sum(end_offset - base_offset + 1) FROM queen.log_segments")).isEqualTo(timers);
        assertThat(staging.count("SELECT count(DISTINCT substring(t.hashes FROM i * 16 + 1 FOR 16)) FROM queen.log_txns t,"
                + " generate_series(0, octet_length(t.hashes) / 16 - 1) i")).isEqualTo(timers);
        assertThat(staging.count("SELECT count(*) FROM queen.timer_audit_events WHERE type = 'fired'")).isEqualTo(timers);
        assertThat(staging.count("SELECT count(*) FROM queen.log_dlq")).isZero();
    }
}
