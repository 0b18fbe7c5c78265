package io.queen.timers.testkit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.queen.timers.client.audit.AuditEvent;
import io.queen.timers.client.command.CatchUp;
import io.queen.timers.client.command.TimerCommand;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.util.List;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.junit.jupiter.api.Test;

/**
 * The recurring-timer part of the schemas (docs/commands.md#recurring-timers) against the client: what TimerCommand writes is valid
 * in both forms, the combinations the design forbids are refused, and the series fields of the events validate and parse.
 */
class RecurringSchemasTest {

    static final Instant START = Instant.parse("2026-03-01T00:00:00Z");

    @Test
    void everyRuleTheClientBuildsIsValidInBothForms() {
        List<TimerCommand> commands = List.of(
                TimerCommand.schedule("reports", "nightly").cron("30 2 * * *", ZoneId.of("Europe/Berlin")).txn("nightly").payload("{}"),
                TimerCommand.reschedule("reports", "nightly").cron("0 30 2 * * *").startAt(START).endAt(START.plus(Duration.ofDays(30)))
                        .maxOccurrences(5).catchUp(CatchUp.ALL).txn("nightly").payload("null"),
                TimerCommand.schedule("health", "ping").every(Duration.ofMinutes(5)).catchUp(CatchUp.NONE).txn("ping").payload("1"),
                TimerCommand.schedule("health", "ping").every(Duration.ofMillis(1500)).startAt(START).txn("ping").payload("1"));
        for (TimerCommand c : commands) {
            for (ProducerRecord<byte[], byte[]> r : List.of(c.envelope("cmds"), c.headers("cmds"))) {
                assertThat(WireSchemas.commandErrors(r)).as(c.key() + " " + (r.headers().toArray().length > 0 ? "headers" : "envelope")).isEmpty();
            }
        }
    }

    @Test
    void theEnvelopeSchemaRefusesWhatTheDesignForbids() {
        String ok = "\"op\":\"schedule\",\"queue\":\"q\",\"timerKey\":\"k\",\"txn\":\"t\",\"payload\":1";
        assertThat(WireSchemas.envelopeErrors("{" + ok + ",\"cron\":\"0 * * * *\",\"zone\":\"UTC\",\"maxOccurrences\":2,\"catchUp\":\"all\"}")).isEmpty();
        for (String bad : List.of(
                ",\"cron\":\"0 * * * *\",\"every\":\"PT1H\"",                    // two rules
                ",\"cron\":\"0 * * * *\",\"delayMs\":1000",                       // a rule and a time
                ",\"every\":\"PT1H\",\"deliverAt\":\"2030-01-01T00:00:00Z\"",
                ",\"every\":\"PT1H\",\"zone\":\"Europe/Berlin\"",                 // zone only with cron
                ",\"delayMs\":1000,\"startAt\":\"2030-01-01T00:00:00Z\"",         // a window without a rule
                ",\"deliverAt\":\"2030-01-01T00:00:00Z\",\"endAt\":\"2030-01-02T00:00:00Z\"",
                ",\"delayMs\":1000,\"maxOccurrences\":3",
                ",\"delayMs\":1000,\"catchUp\":\"one\"",
                ",\"every\":\"1h\"",                                              // not ISO-8601
                ",\"every\":\"PT1H\",\"maxOccurrences\":0",
                ",\"every\":\"PT1H\",\"maxOccurrences\":\"3\"",
                ",\"every\":\"PT1H\",\"catchUp\":\"some\"",
                ",\"every\":\"PT1H\",\"startAt\":\"2030-01-01T00:00:00\"",        // no offset
                ",\"cron\":\"\"")) {
            assertThat(WireSchemas.envelopeErrors("{" + ok + bad + "}")).as(bad).isNotEmpty();
        }
        assertThat(WireSchemas.envelopeErrors("{\"op\":\"cancel\",\"queue\":\"q\",\"timerKey\":\"k\",\"cron\":\"0 * * * *\"}")).isNotEmpty();
        assertThat(WireSchemas.envelopeErrors("{\"op\":\"cancel\",\"queue\":\"q\",\"timerKey\":\"k\",\"catchUp\":\"none\"}")).isNotEmpty();
    }

    @Test
    void theHeadersSchemaRefusesWhatTheDesignForbids() {
        String ok = "\"queen-op\":\"schedule\",\"queen-queue\":\"q\",\"queen-timer-key\":\"k\",\"queen-txn\":\"t\"";
        assertThat(WireSchemas.headersErrors("{" + ok + ",\"queen-every\":\"PT1H\",\"queen-max-occurrences\":\"10\"}")).isEmpty();
        for (String bad : List.of(
                ",\"queen-cron\":\"0 * * * *\",\"queen-every\":\"PT1H\"",
                ",\"queen-cron\":\"0 * * * *\",\"queen-delay-ms\":\"1000\"",
                ",\"queen-every\":\"PT1H\",\"queen-zone\":\"UTC\"",
                ",\"queen-delay-ms\":\"1000\",\"queen-catch-up\":\"all\"",
                ",\"queen-every\":\"PT1H\",\"queen-max-occurrences\":\"0\"",
                ",\"queen-every\":\"PT1H\",\"queen-max-occurrences\":\"-2\"",
                ",\"queen-every\":\"PT1H\",\"queen-catch-up\":\"ALL\"")) {
            assertThat(WireSchemas.headersErrors("{" + ok + bad + "}")).as(bad).isNotEmpty();
        }
    }

    static final String HEAD = "{\"eventId\":\"7d1b3c1e-2f0a-4c55-9a3e-1c1f2b3a4d5e\",\"at\":\"2026-03-08T07:30:01.2+00:00\","
            + "\"tenant\":\"00000000-0000-0000-0000-000000000001\",\"queue\":\"reports\",\"timerKey\":\"nightly\",\"partition\":\"Default\","
            + "\"txn\":\"nightly@2026-03-08T07:30:00Z\",\"messageId\":\"019ade00-0000-7000-8000-000000000001\","
            + "\"deliverAt\":\"2026-03-08T07:30:00+00:00\"";

    static AuditEvent event(String json) {
        return WireSchemas.auditEvent(json.getBytes(StandardCharsets.UTF_8));
    }

    @Test
    void theSeriesFieldsOfEventsValidateAndParse() {
        assertThat(event(HEAD + ",\"type\":\"fired\",\"offset\":3,\"lateMs\":0,\"attempts\":0,\"occurrence\":\"2026-03-08T07:30:00Z\","
                + "\"seq\":3,\"next\":null,\"skipped\":{\"from\":\"2026-03-06T07:30:00Z\",\"to\":\"2026-03-07T07:30:00Z\"}}"))
                .isInstanceOfSatisfying(AuditEvent.Fired.class, f -> assertThat(f.recurrence()).isPresent());
        assertThat(event(HEAD + ",\"type\":\"dead_lettered\",\"attempts\":5,\"error\":null,\"occurrence\":\"2026-03-08T07:30:00Z\","
                + "\"seq\":1,\"next\":\"2026-03-09T06:30:00Z\"}")).isInstanceOf(AuditEvent.DeadLettered.class);
        assertThat(event(HEAD + ",\"type\":\"skipped\",\"occurrence\":\"2026-03-08T07:30:00Z\",\"seq\":4,\"next\":\"2026-03-12T06:30:00Z\","
                + "\"skipped\":{\"from\":\"2026-03-08T07:30:00Z\",\"to\":\"2026-03-11T06:30:00Z\"}}")).isInstanceOf(AuditEvent.Skipped.class);
        // a one-shot fire is unchanged
        assertThat(event(HEAD + ",\"type\":\"fired\",\"offset\":3,\"lateMs\":0,\"attempts\":0}")).isInstanceOf(AuditEvent.Fired.class);
    }

    @Test
    void theSeriesFieldsComeTogether() {
        String fired = HEAD + ",\"type\":\"fired\",\"offset\":3,\"lateMs\":0,\"attempts\":0";
        for (String bad : List.of(
                ",\"occurrence\":\"2026-03-08T07:30:00Z\",\"next\":null",          // no seq
                ",\"occurrence\":\"2026-03-08T07:30:00Z\",\"seq\":1",               // next is null, not absent, at the end of a series
                ",\"seq\":1,\"next\":null",                                        // no occurrence
                ",\"occurrence\":\"2026-03-08T07:30:00Z\",\"seq\":0,\"next\":null",
                ",\"occurrence\":\"2026-03-08T07:30:00Z\",\"seq\":1,\"next\":null,\"skipped\":{\"from\":\"2026-03-06T07:30:00Z\"}")) {
            assertThat(WireSchemas.auditEventErrors(fired + bad + "}")).as(bad).isNotEmpty();
        }
        assertThatThrownBy(() -> event(HEAD + ",\"type\":\"skipped\",\"occurrence\":\"2026-03-08T07:30:00Z\",\"seq\":4,\"next\":null}"))
                .as("a skipped event names what it skipped").isInstanceOf(AssertionError.class);
    }

    @Test
    void aScheduledSeriesCarriesItsRuleAsTheBridgeStoresIt() {
        String scheduled = HEAD + ",\"type\":\"scheduled\",\"op\":\"schedule\",\"source\":{\"topic\":\"t\",\"partition\":0,\"offset\":7}";
        // Recurrence.toJson(1): the rule, the series' txn and the occurrence number of this event's messageId
        assertThat(WireSchemas.auditEventErrors(scheduled + ",\"recurrence\":{\"cron\":\"30 7 * * *\",\"zone\":\"Europe/Paris\","
                + "\"startAt\":\"2026-03-01T00:00:00Z\",\"catchUp\":\"one\",\"txn\":\"nightly\",\"seq\":1}}")).isEmpty();
        assertThat(WireSchemas.auditEventErrors(scheduled + ",\"recurrence\":{\"every\":\"PT1H\",\"startAt\":\"2026-03-01T00:00:00Z\","
                + "\"endAt\":\"2026-04-01T00:00:00Z\",\"maxOccurrences\":5,\"catchUp\":\"all\",\"txn\":\"t\",\"seq\":1}}")).isEmpty();
        for (String bad : List.of(
                "{\"startAt\":\"2026-03-01T00:00:00Z\",\"catchUp\":\"one\",\"txn\":\"t\",\"seq\":1}",                       // no rule
                "{\"cron\":\"0 * * * *\",\"startAt\":\"2026-03-01T00:00:00Z\",\"catchUp\":\"one\",\"txn\":\"t\",\"seq\":1}", // cron without zone
                "{\"every\":\"PT1H\",\"startAt\":\"2026-03-01T00:00:00Z\",\"catchUp\":\"one\",\"txn\":\"t\",\"seq\":0}",    // seq from 1
                "{\"every\":\"PT1H\",\"startAt\":\"2026-03-01T00:00:00Z\",\"catchUp\":\"one\",\"txn\":\"t\",\"seq\":1,\"x\":1}")) {
            assertThat(WireSchemas.auditEventErrors(scheduled + ",\"recurrence\":" + bad + "}")).as(bad).isNotEmpty();
        }
    }
}
