package io.queen.timers.sweeper;

import static io.queen.timers.sweeper.Staging.DEFAULT_TENANT;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.queen.timers.log.codec.UuidV7;
import io.queen.timers.sql.Migrations;
import io.queen.timers.testkit.PostgresDatabase;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import javax.sql.DataSource;
import org.flywaydb.core.Flyway;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The real sweeper on a database that main at 1408545 migrated (its versioned migrations as shipped, kept
 * verbatim in the sql module's test resources) and that holds timers staged then: it upgrades the schema at
 * start (docs/decisions.md#one-live-definition-of-every-function) and fires every one of them, once, in
 * visible_at order per destination. SqlSourceUpgradeIT shows the upgraded schema equals a fresh install's.
 */
class UpgradedSchemaSweepIT {

    private static final Path SHIPPED = Path.of("../sql/src/test/resources/db/shipped-before-sql-source").toAbsolutePath().normalize();

    @RegisterExtension
    static final PostgresDatabase db = PostgresDatabase.initializedWith(UpgradedSchemaSweepIT::asShippedAt1408545);

    private static void asShippedAt1408545(DataSource ds) {
        assertThat(Files.isDirectory(SHIPPED)).as(SHIPPED.toString()).isTrue();
        Flyway.configure().dataSource(ds).locations("filesystem:" + SHIPPED)
                .schemas(Migrations.HISTORY_SCHEMA).createSchemas(true).table(Migrations.HISTORY_TABLE)
                .placeholderReplacement(false).target("110").load().migrate();
    }

    @Test
    void timersStagedBeforeTheUpgradeFireAfterItOnceEach() throws Exception {
        Staging staging = new Staging(db.dataSource());
        // Staged as a bridge of that release did: no payload_bytes column yet (V120 adds it).
        for (int i = 0; i < 6; i++) {
            staging.execute("INSERT INTO queen.log_timers (tenant_id, queue, timer_key, \"partition\", deliver_at, txn, message_id,"
                    + " payload, payload_zstd) VALUES ('" + DEFAULT_TENANT + "', 'upgraded." + (i % 2) + "', 'k" + i + "', 'Default',"
                    + " now() + make_interval(secs => " + (i - 3) + "), 'txn-k" + i + "', '" + UuidV7.next() + "', convert_to('{}', 'UTF8'), false)");
        }
        assertThat(staging.count("SELECT count(*) FROM pg_proc WHERE proname = 'timer_fire_v1'")).isEqualTo(1);

        try (SweeperMain sweeper = Sweepers.start(db, Map.of())) {
            await().atMost(30, TimeUnit.SECONDS).until(() -> LogContents.read(db.dataSource()).size() == 6);
        }

        assertThat(staging.count("SELECT count(*) FROM pg_proc WHERE proname = 'timer_fire_v1'")).isZero();
        assertThat(staging.count("SELECT count(*) FROM queen.log_timers")).isZero();
        List<LogContents.Message> log = LogContents.read(db.dataSource());
        assertThat(log).extracting(LogContents.Message::queue).containsOnly("upgraded.0", "upgraded.1");
        assertThat(log).extracting(LogContents.Message::txn)
                .containsExactlyInAnyOrder("txn-k0", "txn-k1", "txn-k2", "txn-k3", "txn-k4", "txn-k5");
        for (String queue : List.of("upgraded.0", "upgraded.1")) {
            assertThat(log.stream().filter(m -> m.queue().equals(queue)).map(LogContents.Message::txn).toList())
                    .as("the log's order is visible_at order per destination").isSorted();
        }
        assertThat(staging.count("SELECT count(*) FROM queen.timer_audit_events WHERE type = 'fired'")).isEqualTo(6);
    }
}
