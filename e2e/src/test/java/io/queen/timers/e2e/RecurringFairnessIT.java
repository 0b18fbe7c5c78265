package io.queen.timers.e2e;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.queen.timers.core.ops.Dependencies;
import io.queen.timers.bridge.BridgeMain;
import io.queen.timers.bridge.BridgeSettings;
import io.queen.timers.sql.Migrations;
import io.queen.timers.sweeper.LogContents;
import io.queen.timers.sweeper.Staging;
import io.queen.timers.sweeper.SweeperMain;
import io.queen.timers.sweeper.Sweepers;
import io.queen.timers.testkit.PostgresDatabase;
import io.queen.timers.testkit.TestKafka;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Issue 37 point 2 and issue 47 point 2, the fairness case: one tenant starts {@link #SERIES} never-ending one-second series
 * (all due on the same whole seconds: the sweeper's worst burst) while another schedules one-shot timers every 100 ms. What
 * holds it: the claim's tenant slices put the quiet tenant's due row in the next claim, and the fire budget
 * (sweeper.tenant.fires.per.second, {@link #BUDGET}: below the flood's 1,000 a second) holds the flood to its rate while the
 * quiet tenant has a timer due within sweeper.sleep.near, so the cycles that row waits for stay short. Asserted: counts (the
 * flood's fires in the window within its budget, every quiet timer fired once, the series stop when cancelled); the quiet
 * tenant's lateness is printed, not asserted (speed is the benchmarks': bench/results/2026-12-06/). Scaled to what runs in
 * about a minute and a half on 2 cores: 1,000 series, 20 s.
 */
class RecurringFairnessIT {

    @RegisterExtension
    static final PostgresDatabase db = PostgresDatabase.initializedWith(Migrations::migrate);

    static final UUID FLOODER = UUID.fromString("00000000-0000-0000-0000-000000000001");
    static final UUID QUIET = UUID.fromString("6a1f0000-0000-4000-8000-0000000000b2");
    static final int SERIES = 1_000;
    static final int SECONDS = 20;
    /** The flood's fire budget: half its series' rate, so it is held for the whole window. */
    static final int BUDGET = 500;
    /**
     * The quiet tenant's timers: one every 100 ms from the flood's first second to a second past the window, so some fall on
     * the flood's whole seconds and the quiet tenant has a timer within sweeper.sleep.near all through the window (after its
     * last one the flood is alone, not held, and catches up at once).
     */
    static final int QUIET_TIMERS = (SECONDS + 1) * 10;

    @Test
    void aTenantsThousandOneSecondSeriesLeaveAnotherTenantOnTimeAndStopWhenCancelled() throws Exception {
        Staging staging = new Staging(db.dataSource());
        staging.clear();
        String flood = TestKafka.newTopic("fair-flood", 1);
        String quiet = TestKafka.newTopic("fair-quiet", 1);
        Instant start = Instant.now().plusSeconds(8).truncatedTo(ChronoUnit.SECONDS);
        try (BridgeMain bridge = BridgeMain.start(BridgeSettings.from(BridgeSettings.definition().parse(bridgeSettings(flood, quiet))), Dependencies.defaults(new SimpleMeterRegistry()));
                SweeperMain sweeper = Sweepers.start(db, Map.of("sweeper.tenant.fires.per.second", Integer.toString(BUDGET)));
                KafkaProducer<byte[], byte[]> producer = TestKafka.commandProducer()) {
            for (int i = 0; i < SERIES; i++) {
                producer.send(envelope(flood, "schedule", "flood.q", "s" + i, "\"txn\":\"s" + i + "\",\"payload\":{},\"every\":\"PT1S\","
                        + "\"startAt\":\"" + start + "\""));
            }
            for (int i = 0; i < QUIET_TIMERS; i++) {
                Instant at = start.plusMillis(100L * i);
                producer.send(envelope(quiet, "schedule", "quiet.q", "q" + i, "\"txn\":\"q@" + at.toEpochMilli() + "\",\"payload\":{},"
                        + "\"deliverAt\":\"" + at + "\""));
            }
            producer.flush();
            await().atMost(60, TimeUnit.SECONDS).until(() -> staging.count("SELECT count(*) FROM queen.log_timers") == SERIES + QUIET_TIMERS);

            Instant windowEnd = start.plusSeconds(SECONDS + 2);
            await().atMost(SECONDS + 60, TimeUnit.SECONDS).pollInterval(Duration.ofMillis(500))
                    .until(() -> staging.count("SELECT count(*) FROM queen.log_timers WHERE tenant_id = '" + QUIET + "'") == 0
                            && Instant.now().isAfter(windowEnd));

            for (int i = 0; i < SERIES; i++) {
                producer.send(envelope(flood, "cancel", "flood.q", "s" + i, null));
            }
            producer.flush();
            // every cancel has its verdict: cancelled, or too_late for an occurrence in hands (its series stops with it)
            await().atMost(60, TimeUnit.SECONDS).until(() -> staging.count("SELECT count(*) FROM queen.timer_audit_outbox WHERE tenant_id = '"
                    + FLOODER + "' AND type IN ('cancelled', 'too_late')") >= SERIES);
            await().atMost(30, TimeUnit.SECONDS).until(() -> staging.count("SELECT count(*) FROM queen.log_timers") == 0);
            long afterLastVerdict = floodMessages();
            Thread.sleep(10_000);
            assertThat(floodMessages()).as("flood messages 10 s after the last verdict").isEqualTo(afterLastVerdict);
            assertThat(staging.count("SELECT count(*) FROM queen.log_timers")).isZero();
        }

        List<LogContents.Message> log = LogContents.read(db.dataSource());
        List<Long> lateness = new ArrayList<>();
        long floodInWindow = 0;
        for (LogContents.Message m : log) {
            if (m.tenantId().equals(QUIET)) {
                long due = Long.parseLong(m.txn().substring(2));
                lateness.add(m.createdAt().toEpochMilli() - due);
                if (m.createdAt().toEpochMilli() - due > 200) {
                    System.out.printf("RecurringFairnessIT: late %d ms, due at %d ms of its second%n", m.createdAt().toEpochMilli() - due,
                            due % 1000);
                }
            } else if (!m.createdAt().isBefore(start) && m.createdAt().isBefore(start.plusSeconds(SECONDS))) {
                floodInWindow++;
            }
        }
        lateness.sort(null);
        long p50 = lateness.get(lateness.size() / 2);
        long p99 = lateness.get((int) Math.ceil(lateness.size() * 0.99) - 1);
        System.out.printf("RecurringFairnessIT: quiet tenant %d timers, lateness p50 %d ms, p99 %d ms, max %d ms; flood %d fires in %d s"
                + " (%.0f/s, budget %d/s)%n", lateness.size(), p50, p99, lateness.get(lateness.size() - 1), floodInWindow, SECONDS,
                floodInWindow / (double) SECONDS, BUDGET);
        assertThat(lateness).hasSize(QUIET_TIMERS);
        // Not asserted: the quiet tenant's p99 (a speed; the benchmark measures it). Before the budget (2026-12-05, 2 shared
        // cores, load 9-17): p99 296-519 ms, the flood at its full 1,000 a second.
        assertThat(p50).as("the quiet tenant's median lateness, ms: the slices serve it in the next claim").isLessThan(1_000);
        // the flood within its budget for the window (plus a burst, a tenth of a second of it, per loop and one more), and
        // never more than its series' rate
        assertThat(floodInWindow).isLessThanOrEqualTo((long) BUDGET * SECONDS + 3L * BUDGET / 10);
        assertThat(floodInWindow).isLessThanOrEqualTo((long) SERIES * SECONDS);
    }

    private long floodMessages() {
        return LogContents.read(db.dataSource()).stream().filter(m -> m.tenantId().equals(FLOODER)).count();
    }

    private static ProducerRecord<byte[], byte[]> envelope(String topic, String op, String queue, String key, String rest) {
        String value = "{\"op\":\"" + op + "\",\"queue\":\"" + queue + "\",\"timerKey\":\"" + key + "\"" + (rest == null ? "" : "," + rest) + "}";
        return new ProducerRecord<>(topic, (queue + "/" + key).getBytes(StandardCharsets.UTF_8), value.getBytes(StandardCharsets.UTF_8));
    }

    private static Map<String, String> bridgeSettings(String flood, String quiet) {
        Map<String, String> s = new HashMap<>();
        s.put("jdbc.url", db.jdbcUrl());
        s.put("jdbc.user", db.user());
        s.put("db.role.check", "false");
        s.put("jdbc.password", db.password());
        s.put("jdbc.pool.size", "4");
        s.put("kafka.bootstrap.servers", TestKafka.bootstrapServers());
        s.put("command.topics", flood + "," + quiet);
        s.put("topic." + flood + ".tenant", FLOODER.toString());
        s.put("topic." + quiet + ".tenant", QUIET.toString());
        s.put("audit.topic", TestKafka.newTopic("fair-audit", 1));
        s.put("audit.relay.enabled", "false");   // the verdicts stay in the outbox, where this test reads them
        s.put("bridge.group.id", "fair-" + UUID.randomUUID());
        s.put("http.port", "0");
        s.put("bridge.start.position", "earliest");
        s.put("recurring.min.period", "1s");      // the issue's case: the shortest period a deployment may allow
        s.put("tenant.max.recurring", Integer.toString(SERIES));
        return s;
    }
}
