package io.queen.timers.e2e;

import static io.queen.timers.sweeper.Staging.DEFAULT_TENANT;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.queen.timers.core.ops.Dependencies;
import io.queen.timers.bridge.BridgeMain;
import io.queen.timers.bridge.BridgeSettings;
import io.queen.timers.log.codec.UuidV7;
import io.queen.timers.sql.Migrations;
import io.queen.timers.sweeper.LogContents;
import io.queen.timers.sweeper.Poison;
import io.queen.timers.sweeper.Staging;
import io.queen.timers.sweeper.SweeperMain;
import io.queen.timers.sweeper.SweeperSettings;
import io.queen.timers.sweeper.Sweepers;
import io.queen.timers.testkit.PostgresDatabase;
import io.queen.timers.testkit.TestKafka;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Recurring timers (docs/recurring.md) through the real broker, bridge, database, sweeper and relay: the
 * commands are raw records (JSON envelope and headers form, as a producer in any language writes them),
 * the events are read raw from the audit topic, and the log is decoded.
 */
class RecurringTimersIT {

    @RegisterExtension
    static final PostgresDatabase db = PostgresDatabase.initializedWith(Migrations::migrate);

    private static final ObjectMapper JSON = new ObjectMapper();

    private Staging staging;
    private String commands;
    private String audit;
    private String group;

    @BeforeEach
    void topics() {
        group = "recur-" + UUID.randomUUID();   // one group per test: a bridge started again resumes, never replays
        staging = new Staging(db.dataSource());
        staging.clear();
        commands = TestKafka.newTopic("recur-cmd", 1);
        audit = TestKafka.newTopic("recur-audit", 1);
    }

    /**
     * Issue 43: every message id in the log is a UUIDv7 minted when its occurrence was staged, the first by the bridge
     * and every successor by the sweeper's fire, dead letter or catch-up (timer_series_next_v1), so its time is never
     * after the created_at of the segment that delivered it.
     */
    @AfterEach
    void everyFrameInTheLogHasAUuidV7MintedNoLaterThanItsSegment() {
        assertThat(LogContents.read(db.dataSource())).allSatisfy(m -> {
            assertThat(m.frame().messageId().version()).as("the message id of %s", m.txn()).isEqualTo(7);
            assertThat(UuidV7.unixMillis(m.frame().messageId())).as("the message id's time of %s", m.txn())
                    .isLessThanOrEqualTo(m.createdAt().toEpochMilli());
        });
    }

    @Test
    void anEverySeriesFiresEachOccurrenceOnceWithItsTxnAndEndsAfterMaxOccurrences() {
        // catchUp all in the tests that pin occurrences but not the catch-up: their first occurrence is two seconds
        // out, and a loaded machine may start the services and apply the schedule later than that; under the default
        // (one) the occurrences already past would be skipped, and the test would measure the machine, not the series
        Instant start = Instant.now().plusSeconds(2).truncatedTo(ChronoUnit.SECONDS);
        try (BridgeMain bridge = bridge(); SweeperMain sweeper = sweeper()) {
            send(envelope("schedule", "recur.q", "every", "s-every", "\"every\":\"PT1S\",\"startAt\":\"" + start
                    + "\",\"maxOccurrences\":3,\"catchUp\":\"all\""));
            List<JsonNode> fired = awaitEvents("every", "fired", 3);
            for (int i = 0; i < 3; i++) {
                JsonNode e = fired.get(i);
                Instant o = start.plusSeconds(i);
                assertThat(e.get("txn").asText()).isEqualTo("s-every@" + o);
                assertThat(instant(e, "occurrence")).isEqualTo(o);
                assertThat(e.get("seq").asInt()).isEqualTo(i + 1);
                assertThat(e.get("lateMs").asLong()).isGreaterThanOrEqualTo(0);   // never early
                if (i < 2) {
                    assertThat(instant(e, "next")).isEqualTo(o.plusSeconds(1));
                } else {
                    assertThat(e.get("next").isNull()).as("the last occurrence says the series ended").isTrue();
                }
            }
            JsonNode scheduled = awaitEvents("every", "scheduled", 1).get(0);
            assertThat(scheduled.get("txn").asText()).isEqualTo("s-every@" + start);
            assertThat(scheduled.at("/recurrence/every").asText()).isEqualTo("PT1S");
            assertThat(scheduled.get("messageId").asText()).isEqualTo(fired.get(0).get("messageId").asText());
            // each occurrence its own UUIDv7, the successors' minted when the previous occurrence's fire staged them
            Map<String, UUID> logged = LogContents.read(db.dataSource()).stream()
                    .collect(Collectors.toMap(LogContents.Message::txn, m -> m.frame().messageId()));
            for (int i = 0; i < 3; i++) {
                UUID id = UUID.fromString(fired.get(i).get("messageId").asText());
                assertThat(id.version()).as("occurrence %d", i + 1).isEqualTo(7);
                assertThat(logged.get(fired.get(i).get("txn").asText())).isEqualTo(id);
                if (i > 0) {
                    assertThat(UuidV7.unixMillis(id)).as("occurrence %d staged by the fire of the one before", i + 1)
                            .isGreaterThanOrEqualTo(start.plusSeconds(i - 1).toEpochMilli());
                }
            }
            assertThat(logged.values()).doesNotHaveDuplicates();
        }
        assertThat(LogContents.txnCounts(db.dataSource())).containsOnlyKeys("s-every@" + start, "s-every@" + start.plusSeconds(1),
                "s-every@" + start.plusSeconds(2)).allSatisfy((txn, n) -> assertThat(n).isEqualTo(1));
        assertThat(staging.count("SELECT count(*) FROM queen.log_timers")).isZero();
    }

    @Test
    void aCronSeriesInAZoneFromHeadersFiresOnItsRuleUntilCancelled() throws Exception {
        try (BridgeMain bridge = bridge(); SweeperMain sweeper = sweeper()) {
            RecordHeaders h = new RecordHeaders();
            h.add("queen-op", bytes("schedule"));
            h.add("queen-queue", bytes("recur.q"));
            h.add("queen-timer-key", bytes("cron"));
            h.add("queen-txn", bytes("s-cron"));
            h.add("queen-cron", bytes("*/2 * * * * *"));   // 6 fields: every even second
            h.add("queen-zone", bytes("America/New_York"));
            send(new ProducerRecord<>(commands, null, bytes("recur.q/cron"), bytes("{\"n\":1}"), h));
            List<JsonNode> fired = awaitEvents("cron", "fired", 2);
            for (JsonNode e : fired) {
                Instant o = instant(e, "occurrence");
                assertThat(o.getEpochSecond() % 2).isZero();
                assertThat(o.getNano()).isZero();
                assertThat(instant(e, "next")).isEqualTo(o.plusSeconds(2));
                assertThat(e.get("txn").asText()).isEqualTo("s-cron@" + o);
            }
            assertThat(fired.get(1).get("seq").asInt()).isEqualTo(fired.get(0).get("seq").asInt() + 1);

            send(envelope("cancel", "recur.q", "cron", null, null));
            awaitEvents("cron", "cancelled", 1);
            int firedAtCancel = LogContents.txnCounts(db.dataSource()).size();
            Thread.sleep(4_000);   // two more occurrences would have come
            assertThat(LogContents.txnCounts(db.dataSource())).hasSize(firedAtCancel);
            assertThat(staging.count("SELECT count(*) FROM queen.log_timers")).isZero();
        }
    }

    @Test
    void aRescheduleReplacesTheRule() {
        try (BridgeMain bridge = bridge(); SweeperMain sweeper = sweeper()) {
            send(envelope("schedule", "recur.q", "re", "s-old", "\"every\":\"PT1H\""));
            awaitEvents("re", "scheduled", 1);
            Instant start = Instant.now().plusSeconds(1).truncatedTo(ChronoUnit.SECONDS);
            send(envelope("reschedule", "recur.q", "re", "s-new", "\"every\":\"PT2S\",\"startAt\":\"" + start
                    + "\",\"maxOccurrences\":2"));
            List<JsonNode> fired = awaitEvents("re", "fired", 2);
            assertThat(fired).extracting(e -> e.get("txn").asText())
                    .containsExactly("s-new@" + start, "s-new@" + start.plusSeconds(2));
        }
        assertThat(LogContents.txnCounts(db.dataSource())).hasSize(2);
    }

    /**
     * A reschedule of a pending successor keeps its message id (as for any pending timer): the rescheduled and fired events
     * and the log name the UUIDv7 the previous occurrence's fire staged it with (issue 43).
     */
    @Test
    void aRescheduledSuccessorKeepsTheUuidV7ItWasStagedWith() {
        Instant start = Instant.now().plusSeconds(2).truncatedTo(ChronoUnit.SECONDS);
        UUID id;
        try (BridgeMain bridge = bridge(); SweeperMain sweeper = sweeper()) {
            send(envelope("schedule", "recur.q", "moved", "s-moved", "\"every\":\"PT5S\",\"startAt\":\"" + start + "\""));
            JsonNode first = awaitEvents("moved", "fired", 1).get(0);
            // the successor is due 5 s after the first: pending, not in hands, when this arrives
            send(envelope("reschedule", "recur.q", "moved", "s-moved-once", "\"delayMs\":0"));
            JsonNode rescheduled = awaitEvents("moved", "rescheduled", 1).get(0);
            JsonNode fired = awaitEvents("moved", "fired", 2).get(1);
            id = UUID.fromString(rescheduled.get("messageId").asText());
            assertThat(id.version()).isEqualTo(7);
            assertThat(id.toString()).isNotEqualTo(first.get("messageId").asText());
            assertThat(UuidV7.unixMillis(id)).as("staged by the first occurrence's fire").isGreaterThanOrEqualTo(start.toEpochMilli());
            assertThat(fired.get("txn").asText()).isEqualTo("s-moved-once");
            assertThat(fired.get("messageId").asText()).isEqualTo(id.toString());
        }
        assertThat(LogContents.read(db.dataSource())).filteredOn(m -> m.txn().equals("s-moved-once")).singleElement()
                .satisfies(m -> assertThat(m.frame().messageId()).isEqualTo(id));
    }

    @Test
    void aDeadLetteredOccurrenceDoesNotEndItsSeries() {
        Instant start = Instant.now().plusSeconds(2).truncatedTo(ChronoUnit.SECONDS);
        Poison poison = new Poison(staging).install();
        poison.poison("s-poison@" + start.plusSeconds(1));   // the second occurrence cannot be delivered
        try (BridgeMain bridge = bridge(); SweeperMain sweeper = sweeper(Map.of(SweeperSettings.MAX_ATTEMPTS, "1"))) {
            send(envelope("schedule", "recur.q", "poisoned", "s-poison", "\"every\":\"PT1S\",\"startAt\":\"" + start
                    + "\",\"maxOccurrences\":3,\"catchUp\":\"all\""));
            JsonNode dead = awaitEvents("poisoned", "dead_lettered", 1).get(0);
            assertThat(instant(dead, "occurrence")).isEqualTo(start.plusSeconds(1));
            assertThat(dead.get("seq").asInt()).isEqualTo(2);
            assertThat(instant(dead, "next")).isEqualTo(start.plusSeconds(2));
            List<JsonNode> fired = awaitEvents("poisoned", "fired", 2);
            assertThat(fired).extracting(e -> instant(e, "occurrence")).containsExactly(start, start.plusSeconds(2));
            assertThat(fired.get(1).get("seq").asInt()).isEqualTo(3);
        } finally {
            poison.cureAll();
        }
        assertThat(staging.count("SELECT count(*) FROM queen.log_dlq")).isEqualTo(1);
        assertThat(staging.count("SELECT count(*) FROM queen.log_timers")).isZero();
    }

    /**
     * Issue 37 point 2: a series whose occurrences keep failing ends after recurring.max.consecutive.dead.letters (here 2)
     * dead letters in a row, and its last dead_lettered event says why; a delivered occurrence between two dead letters
     * resets the run. Without the bound the series would write a queen.log_dlq row every period for ever.
     */
    @Test
    void aSeriesEndsAfterMaxConsecutiveDeadLettersAndItsEventSaysWhy() {
        Instant start = Instant.now().plusSeconds(2).truncatedTo(ChronoUnit.SECONDS);
        Poison poison = new Poison(staging).install();
        poison.poison("s-dying@" + start);                  // dead, run 1
        poison.poison("s-dying@" + start.plusSeconds(2));   // after a delivered one: run 1 again
        poison.poison("s-dying@" + start.plusSeconds(3));   // run 2: the series ends
        try (BridgeMain bridge = bridge(); SweeperMain sweeper = sweeper(Map.of(SweeperSettings.MAX_ATTEMPTS, "1",
                SweeperSettings.RECURRING_MAX_CONSECUTIVE_DEAD_LETTERS, "2"))) {
            send(envelope("schedule", "recur.q", "dying", "s-dying", "\"every\":\"PT1S\",\"startAt\":\"" + start
                    + "\",\"catchUp\":\"all\""));
            List<JsonNode> dead = awaitEvents("dying", "dead_lettered", 3);
            assertThat(dead).extracting(e -> instant(e, "occurrence")).containsExactly(start, start.plusSeconds(2), start.plusSeconds(3));
            assertThat(dead).extracting(e -> e.get("deadLettersInRow").asInt()).containsExactly(1, 1, 2);
            assertThat(dead.get(0).has("ended")).isFalse();
            assertThat(dead.get(2).get("ended").asText()).isEqualTo("dead_letters");
            assertThat(dead.get(2).get("next").isNull()).isTrue();
            assertThat(awaitEvents("dying", "fired", 1)).extracting(e -> instant(e, "occurrence")).containsExactly(start.plusSeconds(1));
            await().atMost(30, TimeUnit.SECONDS).until(() -> staging.count("SELECT count(*) FROM queen.log_timers") == 0);
            sleep(Duration.ofSeconds(3));
            assertThat(staging.count("SELECT count(*) FROM queen.log_timers")).isZero();
        } finally {
            poison.cureAll();
        }
        assertThat(staging.count("SELECT count(*) FROM queen.log_dlq")).isEqualTo(3);
    }

    /**
     * Issue 37 point 2: a series whose queue comes to require encryption while the bridge has no key ends with the first
     * occurrence the fire refuses (one queen.log_dlq row, not one per period), and the event says why.
     */
    @Test
    void aSeriesEndsWhenAnOccurrenceIsRefusedForEncryption() {
        Instant start = Instant.now().plusSeconds(2).truncatedTo(ChronoUnit.SECONDS);
        try (BridgeMain bridge = bridge(); SweeperMain sweeper = sweeper()) {
            send(envelope("schedule", "recur.sealed", "clear", "s-clear", "\"every\":\"PT1S\",\"startAt\":\"" + start + "\",\"catchUp\":\"all\""));
            awaitEvents("clear", "fired", 1);   // the queue is born at this fire, in clear
            staging.execute("UPDATE queen.queues SET encryption_enabled = true WHERE name = 'recur.sealed'");
            JsonNode refused = awaitEvents("clear", "dead_lettered", 1).get(0);
            assertThat(refused.get("error").asText()).isEqualTo("encryption_unavailable");
            assertThat(refused.get("ended").asText()).isEqualTo("encryption_required");
            assertThat(refused.get("next").isNull()).isTrue();
            await().atMost(30, TimeUnit.SECONDS).until(() -> staging.count("SELECT count(*) FROM queen.log_timers") == 0);
            sleep(Duration.ofSeconds(3));
            assertThat(staging.count("SELECT count(*) FROM queen.log_timers")).isZero();
            assertThat(staging.count("SELECT count(*) FROM queen.log_dlq")).isEqualTo(1);
        }
    }

    private static void sleep(Duration d) {
        try {
            Thread.sleep(d.toMillis());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    /**
     * Point 4 and the verdicts, end to end: a series scheduled through Kafka is shown by peek, list and find (its rule,
     * series txn and next occurrence) and counted by the sweeper's gauge; a rule that cannot be read and one with no
     * occurrence get one `rejected` verdict each, with their reasons.
     */
    @Test
    void aSeriesIsShownByTheToolsAndCountedAndBadRulesAreRejected() throws Exception {
        Instant start = Instant.now().plus(Duration.ofHours(1)).truncatedTo(ChronoUnit.SECONDS);
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        try (BridgeMain bridge = bridge(); SweeperMain sweeper = Sweepers.start(db, Map.of(), registry)) {
            send(envelope("schedule", "recur.q", "shown", "s-shown", "\"every\":\"PT1H\",\"startAt\":\"" + start + "\""));
            send(envelope("schedule", "recur.q", "bad", "s-bad", "\"cron\":\"61 * * * *\""));
            send(envelope("schedule", "recur.q", "never", "s-never", "\"cron\":\"0 0 30 2 *\""));
            assertThat(awaitEvents("shown", "scheduled", 1)).hasSize(1);
            assertThat(awaitRejection("recur.q/bad")).isEqualTo("bad_rule");
            assertThat(awaitRejection("recur.q/never")).isEqualTo("no_occurrence");

            var inspector = new io.queen.timers.inspect.TimerInspector(db.dataSource());
            var peeked = inspector.peek(DEFAULT_TENANT, "recur.q", "shown").orElseThrow();
            assertThat(peeked.deliverAt()).isEqualTo(start);
            assertThat(peeked.txn()).isEqualTo("s-shown@" + start);
            assertThat(peeked.recurring().rule()).contains("every PT1H");
            assertThat(peeked.recurring().seriesTxn()).isEqualTo("s-shown");
            assertThat(peeked.recurring().seq()).isEqualTo(1);
            assertThat(inspector.list(DEFAULT_TENANT, "recur.q", null, 10)).singleElement()
                    .satisfies(t -> assertThat(t.recurring().seriesTxn()).isEqualTo("s-shown"));
            assertThat(inspector.series(DEFAULT_TENANT, "recur.q", "s-shown")).singleElement()
                    .satisfies(p -> assertThat(p.nextOccurrence()).isEqualTo(start));
            await().atMost(60, TimeUnit.SECONDS)
                    .until(() -> registry.get("queen.timers.recurring.series").gauge().value() == 1.0);
        }
    }

    /** The reason of the one `rejected` verdict of the record with this Kafka key. */
    private String awaitRejection(String kafkaKey) {
        Map<String, Object> props = TestKafka.consumerProps("unused");
        props.remove(ConsumerConfig.GROUP_ID_CONFIG);
        long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
        try (KafkaConsumer<byte[], byte[]> c = new KafkaConsumer<>(props)) {
            TopicPartition tp = new TopicPartition(audit, 0);
            c.assign(List.of(tp));
            c.seekToBeginning(List.of(tp));
            while (System.nanoTime() < deadline) {
                for (ConsumerRecord<byte[], byte[]> r : c.poll(Duration.ofMillis(200))) {
                    JsonNode e = read(r.value());
                    if ("rejected".equals(e.path("type").asText()) && r.key() != null
                            && kafkaKey.equals(new String(r.key(), StandardCharsets.UTF_8))) {
                        return e.get("reason").asText();
                    }
                }
            }
        }
        throw new AssertionError("no rejected verdict for " + kafkaKey);
    }

    /** catchUp all: an outage of the sweeper across five occurrences; each fires once after it, in order. */
    @Test
    void afterAnOutageCatchUpAllFiresEveryMissedOccurrence() throws Exception {
        Instant start = outage("all", 8);
        List<JsonNode> fired = awaitEvents("outage-all", "fired", 8);
        assertThat(fired).extracting(e -> instant(e, "occurrence"))
                .containsExactly(start, start.plusSeconds(1), start.plusSeconds(2), start.plusSeconds(3), start.plusSeconds(4),
                        start.plusSeconds(5), start.plusSeconds(6), start.plusSeconds(7));
        assertThat(fired).allSatisfy(e -> assertThat(e.has("skipped")).isFalse());
        assertThat(LogContents.txnCounts(db.dataSource())).hasSize(8).allSatisfy((txn, n) -> assertThat(n).isEqualTo(1));
    }

    /** catchUp one: the first missed occurrence fires late, the others are skipped (named in its event), the rule resumes. */
    @Test
    void afterAnOutageCatchUpOneFiresOneAndResumesTheRule() throws Exception {
        Instant start = outage("one", 3);
        List<JsonNode> fired = awaitEvents("outage-one", "fired", 3);
        JsonNode late = fired.get(0);
        assertThat(instant(late, "occurrence")).isEqualTo(start);
        assertThat(instant(late.get("skipped"), "from")).isEqualTo(start.plusSeconds(1));
        Instant skippedTo = instant(late.get("skipped"), "to");
        assertThat(skippedTo).isAfterOrEqualTo(start.plusSeconds(4));
        assertThat(instant(late, "next")).isEqualTo(skippedTo.plusSeconds(1));
        assertThat(instant(fired.get(1), "occurrence")).isEqualTo(skippedTo.plusSeconds(1));
        assertThat(instant(fired.get(2), "occurrence")).isEqualTo(skippedTo.plusSeconds(2));
        assertThat(fired.get(2).get("next").isNull()).isTrue();
        assertThat(LogContents.txnCounts(db.dataSource())).hasSize(3);
    }

    /** catchUp none: the missed occurrences are not delivered; a skipped event says which; the rule resumes. */
    @Test
    void afterAnOutageCatchUpNoneDeliversNoMissedOccurrence() throws Exception {
        Instant start = outage("none", 2);
        JsonNode skipped = awaitEvents("outage-none", "skipped", 1).get(0);
        assertThat(instant(skipped, "occurrence")).isEqualTo(start);
        assertThat(instant(skipped.get("skipped"), "from")).isEqualTo(start);
        Instant lastMissed = instant(skipped.get("skipped"), "to");
        assertThat(instant(skipped, "next")).isEqualTo(lastMissed.plusSeconds(1));
        List<JsonNode> fired = awaitEvents("outage-none", "fired", 2);
        assertThat(fired).extracting(e -> instant(e, "occurrence")).containsExactly(lastMissed.plusSeconds(1), lastMissed.plusSeconds(2));
        assertThat(fired).extracting(e -> e.get("seq").asInt()).containsExactly(1, 2);
        assertThat(LogContents.txnCounts(db.dataSource())).doesNotContainKey("s-outage-none@" + start).hasSize(2);
    }

    /**
     * Daylight-saving time in two zones, end to end: cron series whose windows lie in the past and span a
     * transition, with catchUp all, so every occurrence of the window fires now, each once.
     */
    @Test
    void cronSeriesAcrossDaylightSavingTransitionsInTwoZonesFireTheInstantsTheZoneNames() {
        try (BridgeMain bridge = bridge(); SweeperMain sweeper = sweeper()) {
            // America/New_York springs forward on 2026-03-08 at 02:00 EST: 02:30 does not exist that day
            send(envelope("schedule", "recur.q", "ny-daily", "ny-daily", "\"cron\":\"30 2 * * *\",\"zone\":\"America/New_York\","
                    + "\"startAt\":\"2026-03-07T00:00:00Z\",\"endAt\":\"2026-03-10T00:00:00Z\",\"catchUp\":\"all\""));
            send(envelope("schedule", "recur.q", "ny-hourly", "ny-hourly", "\"cron\":\"30 * * * *\",\"zone\":\"America/New_York\","
                    + "\"startAt\":\"2026-03-08T05:00:00Z\",\"endAt\":\"2026-03-08T08:00:00Z\",\"catchUp\":\"all\""));
            // Europe/Berlin falls back on 2026-10-25 at 03:00 CEST: 02:30 exists twice
            send(envelope("schedule", "recur.q", "berlin-daily", "berlin-daily", "\"cron\":\"30 2 * * *\",\"zone\":\"Europe/Berlin\","
                    + "\"startAt\":\"2026-10-24T12:00:00Z\",\"endAt\":\"2026-10-26T12:00:00Z\",\"catchUp\":\"all\""));
            send(envelope("schedule", "recur.q", "berlin-hourly", "berlin-hourly", "\"cron\":\"30 * * * *\",\"zone\":\"Europe/Berlin\","
                    + "\"startAt\":\"2026-10-24T23:00:00Z\",\"endAt\":\"2026-10-25T02:00:00Z\",\"catchUp\":\"all\""));
            assertThat(occurrences("ny-daily", 2)).containsExactly(Instant.parse("2026-03-07T07:30:00Z"), Instant.parse("2026-03-09T06:30:00Z"));
            assertThat(occurrences("ny-hourly", 3)).containsExactly(Instant.parse("2026-03-08T05:30:00Z"),
                    Instant.parse("2026-03-08T06:30:00Z"), Instant.parse("2026-03-08T07:30:00Z"));   // 00:30, 01:30 EST, 03:30 EDT
            assertThat(occurrences("berlin-daily", 2)).containsExactly(Instant.parse("2026-10-25T00:30:00Z"),
                    Instant.parse("2026-10-26T01:30:00Z"));   // 02:30 CEST once, not again at 02:30 CET
            assertThat(occurrences("berlin-hourly", 3)).containsExactly(Instant.parse("2026-10-24T23:30:00Z"),
                    Instant.parse("2026-10-25T00:30:00Z"), Instant.parse("2026-10-25T01:30:00Z"));   // 01:30, 02:30 CEST, 02:30 CET
            await().atMost(30, TimeUnit.SECONDS).until(() -> staging.count("SELECT count(*) FROM queen.log_timers") == 0);
        }
        assertThat(LogContents.txnCounts(db.dataSource())).hasSize(10).allSatisfy((txn, n) -> assertThat(n).isEqualTo(1));
    }

    private List<Instant> occurrences(String key, int n) {
        List<JsonNode> fired = awaitEvents(key, "fired", n);
        assertThat(fired.get(n - 1).get("next").isNull()).as("%s ends with its window", key).isTrue();
        return fired.stream().map(e -> instant(e, "occurrence")).toList();
    }

    /**
     * A series `every` 1 s from 2 s after now, with the sweeper down until its sixth occurrence is past:
     * the bridge stages it, the sweeper starts late. Returns the first occurrence.
     */
    private Instant outage(String catchUp, int max) throws Exception {
        Instant start = Instant.now().plusSeconds(2).truncatedTo(ChronoUnit.SECONDS);
        String key = "outage-" + catchUp;
        try (BridgeMain bridge = bridge()) {
            send(envelope("schedule", "recur.q", key, "s-" + key, "\"every\":\"PT1S\",\"startAt\":\"" + start
                    + "\",\"maxOccurrences\":" + max + ",\"catchUp\":\"" + catchUp + "\""));
            await().atMost(60, TimeUnit.SECONDS).until(() -> staging.count("SELECT count(*) FROM queen.log_timers") == 1);
        }
        Thread.sleep(Math.max(0, Duration.between(Instant.now(), start.plusMillis(5_500)).toMillis()));
        try (SweeperMain sweeper = sweeper()) {
            await().atMost(60, TimeUnit.SECONDS).until(() -> staging.count("SELECT count(*) FROM queen.log_timers") == 0);
        }
        // the relay: one bridge publishes what the sweeper wrote
        try (BridgeMain bridge = bridge()) {
            awaitEvents(key, "scheduled", 1);
        }
        return start;
    }

    private BridgeMain bridge() {
        return BridgeMain.start(BridgeSettings.from(BridgeSettings.definition().parse(bridgeSettings())), Dependencies.defaults(new SimpleMeterRegistry()));
    }

    private SweeperMain sweeper() {
        return sweeper(Map.of());
    }

    private SweeperMain sweeper(Map<String, String> overrides) {
        return Sweepers.start(db, overrides);
    }

    private void send(ProducerRecord<byte[], byte[]> r) {
        try (KafkaProducer<byte[], byte[]> producer = TestKafka.commandProducer()) {
            producer.send(r);
            producer.flush();
        }
    }

    /** A JSON envelope; {@code rule} is the recurrence's fields, already JSON ("\"every\":\"PT1S\",..."). */
    private ProducerRecord<byte[], byte[]> envelope(String op, String queue, String key, String txn, String rule) {
        String value = "{\"op\":\"" + op + "\",\"queue\":\"" + queue + "\",\"timerKey\":\"" + key + "\""
                + (txn == null ? "" : ",\"txn\":\"" + txn + "\",\"payload\":{\"k\":\"" + key + "\"}")
                + (rule == null ? "" : "," + rule) + "}";
        return new ProducerRecord<>(commands, bytes(queue + "/" + key), bytes(value));
    }

    /** The audit topic's events of {@code timerKey} of {@code type}, in order, once there are {@code n} (distinct eventIds). */
    private List<JsonNode> awaitEvents(String timerKey, String type, int n) {
        Map<String, Object> props = TestKafka.consumerProps("unused");
        props.remove(ConsumerConfig.GROUP_ID_CONFIG);
        List<JsonNode> out = new ArrayList<>();
        List<String> ids = new ArrayList<>();
        long deadline = System.nanoTime() + Duration.ofSeconds(90).toNanos();
        try (KafkaConsumer<byte[], byte[]> c = new KafkaConsumer<>(props)) {
            TopicPartition tp = new TopicPartition(audit, 0);
            c.assign(List.of(tp));
            c.seekToBeginning(List.of(tp));
            while (out.size() < n) {
                if (System.nanoTime() > deadline) {
                    throw new AssertionError("only " + out.size() + " of " + n + " " + type + " events of " + timerKey + ": " + out);
                }
                for (ConsumerRecord<byte[], byte[]> r : c.poll(Duration.ofMillis(200))) {
                    JsonNode e = read(r.value());
                    if (timerKey.equals(e.path("timerKey").asText()) && type.equals(e.path("type").asText())
                            && !ids.contains(e.get("eventId").asText())) {
                        ids.add(e.get("eventId").asText());
                        out.add(e);
                    }
                }
            }
        }
        return out;
    }

    private static JsonNode read(byte[] value) {
        try {
            return JSON.readTree(value);
        } catch (java.io.IOException e) {
            throw new AssertionError(e);
        }
    }

    private static Instant instant(JsonNode e, String field) {
        return OffsetDateTime.parse(e.get(field).asText()).toInstant();
    }

    private static byte[] bytes(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    private Map<String, String> bridgeSettings() {
        Map<String, String> s = new HashMap<>();
        s.put("jdbc.url", db.jdbcUrl());
        s.put("jdbc.user", db.user());
        s.put("db.role.check", "false"); // the testkit connects as the server's superuser (docs/schema-and-roles.md#database-roles)
        s.put("jdbc.password", db.password());
        s.put("jdbc.pool.size", "4");
        s.put("kafka.bootstrap.servers", TestKafka.bootstrapServers());
        s.put("command.topics", commands);
        s.put("audit.topic", audit);   // this bridge's relay publishes every event of the database, fired ones too
        s.put("audit.relay.poll.interval", "50ms");
        s.put("bridge.group.id", group);
        s.put("http.port", "0");
        s.put("bridge.start.position", "earliest");
        s.put("db.retry.backoff.max", "1s");
        s.put("recurring.min.period", "1s");   // these series tick each second or two to be seen in seconds
        return s;
    }
}
